import { sql } from 'drizzle-orm'
import {
  bigint, bigserial, boolean, check, date, index, integer, jsonb, numeric, pgEnum, pgTable, primaryKey,
  serial, text, timestamp, unique, uniqueIndex, uuid, customType
} from 'drizzle-orm/pg-core'

/*
 * The whole domain model. Every table of the service lives here; drizzle-kit generates drizzle/ from it.
 * Money, points and quantities are SQL numeric: they are read as strings and never pass through a float
 * on their way in or out of storage. Catalogue and buyer records are scoped to a seller, because sync IDs
 * are assigned by that seller's own ERP.
 */

const money = (name: string) => numeric(name, { precision: 14, scale: 2 })
const quantity = (name: string) => numeric(name, { precision: 14, scale: 3 })
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow()
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow()

export const sellerStatus = pgEnum('seller_status', ['active', 'suspended'])
export type SellerStatus = (typeof sellerStatus.enumValues)[number]

/** A seller is the contract's company: companyId is sellers.id. */
export const sellers = pgTable('sellers', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  status: sellerStatus('status').notNull().default('active'),
  pointsBalance: numeric('points_balance', { precision: 14, scale: 2 }).notNull().default('0'),
  /** Fraction of orderTotalFinal deducted in points when an order is accepted (0.02 = 2 %). */
  takeRate: numeric('take_rate', { precision: 6, scale: 4 }).notNull().default('0.02'),
  autoRejectEnabled: boolean('auto_reject_enabled').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  check('sellers_points_balance_non_negative', sql`${t.pointsBalance} >= 0`),
  check('sellers_take_rate_range', sql`${t.takeRate} >= 0 and ${t.takeRate} <= 1`)
])

export const stores = pgTable('stores', {
  id: serial('id').primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  name: text('name').notNull(),
  createdAt: createdAt()
}, (t) => [index('stores_seller_idx').on(t.sellerId)])

/**
 * A retailer is a buyer of the marketplace (the marketplace's id): it and its shops may buy from several
 * sellers. Which sellers it is linked to, and each seller's own sync ID for it, live in seller_retailers.
 */
export const retailers = pgTable('retailers', {
  id: serial('id').primaryKey(),
  name: text('name').notNull(),
  firstName: text('first_name'),
  lastName: text('last_name'),
  phone: text('phone'),
  whatsapp: text('whatsapp'),
  createdAt: createdAt()
})

export const shops = pgTable('shops', {
  id: serial('id').primaryKey(),
  retailerId: integer('retailer_id').notNull().references(() => retailers.id),
  shopName: text('shop_name').notNull(),
  createdAt: createdAt()
}, (t) => [
  index('shops_retailer_idx').on(t.retailerId)
])

/**
 * A retailer linked to a seller (it may buy from it), with that seller's own sync ID for it (docs/api/orders.md:
 * "assigned during retailer sync"). A seller reads only its own links and sync IDs.
 */
export const sellerRetailers = pgTable('seller_retailers', {
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  retailerId: integer('retailer_id').notNull().references(() => retailers.id),
  syncId: text('sync_id'),
  createdAt: createdAt()
}, (t) => [
  primaryKey({ columns: [t.sellerId, t.retailerId] }),
  // Made a DEFERRABLE unique constraint on this index by drizzle/0010 (the references sync defers it).
  uniqueIndex('seller_retailers_sync_id_key').on(t.sellerId, t.syncId)
])

/** A shop as one seller sees it: linked with its retailer, with the seller's own sync ID (docs/api/orders.md). */
export const sellerShops = pgTable('seller_shops', {
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  shopId: integer('shop_id').notNull().references(() => shops.id),
  syncId: text('sync_id'),
  createdAt: createdAt()
}, (t) => [
  primaryKey({ columns: [t.sellerId, t.shopId] }),
  // Made a DEFERRABLE unique constraint on this index by drizzle/0010 (the references sync defers it).
  uniqueIndex('seller_shops_sync_id_key').on(t.sellerId, t.syncId)
])

export const items = pgTable('items', {
  id: serial('id').primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  itemName: text('item_name').notNull(),
  itemSyncId: text('item_sync_id'),
  createdAt: createdAt()
}, (t) => [
  // Made a DEFERRABLE unique constraint on this index by drizzle/0010 (the references sync defers it).
  uniqueIndex('items_seller_sync_id_key').on(t.sellerId, t.itemSyncId)
])

export const skus = pgTable('skus', {
  id: serial('id').primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  itemId: integer('item_id').notNull().references(() => items.id),
  skuNickName: text('sku_nick_name').notNull(),
  images: text('images').array().notNull().default(sql`'{}'::text[]`),
  tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  createdAt: createdAt()
}, (t) => [index('skus_item_idx').on(t.itemId)])

/** A quantity slab of an offer's price: from minQuantity up to maxQuantity (null = no upper bound). */
export interface PriceSlab { minQuantity: number, maxQuantity: number | null, price: number }

export const offers = pgTable('offers', {
  id: serial('id').primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  skuId: integer('sku_id').notNull().references(() => skus.id),
  offerSyncId: text('offer_sync_id'),
  purchasePrice: money('purchase_price').notNull(),
  mrpPriceAmount: money('mrp_price_amount').notNull(),
  finalPriceWithTax: money('final_price_with_tax').notNull(),
  currency: text('currency').notNull().default('INR'),
  priceRange: jsonb('price_range').$type<PriceSlab[]>().notNull().default(sql`'[]'::jsonb`),
  createdAt: createdAt()
}, (t) => [
  // Made a DEFERRABLE unique constraint on this index by drizzle/0010 (the references sync defers it).
  uniqueIndex('offers_seller_sync_id_key').on(t.sellerId, t.offerSyncId),
  index('offers_sku_idx').on(t.skuId)
])

export const sellingUnits = pgTable('selling_units', {
  id: serial('id').primaryKey(),
  skuId: integer('sku_id').notNull().references(() => skus.id),
  name: text('name').notNull(),
  multiplier: quantity('multiplier').notNull().default('1'),
  isBaseUnit: boolean('is_base_unit').notNull().default(false)
}, (t) => [index('selling_units_sku_idx').on(t.skuId)])

/** A daily deal caps how much of an offer may be grabbed on a day; rejections give quantity back. */
export const dailyDeals = pgTable('daily_deals', {
  id: serial('id').primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  offerId: integer('offer_id').notNull().references(() => offers.id),
  dealDate: date('deal_date').notNull(),
  dealPrice: money('deal_price').notNull(),
  maxQuantity: quantity('max_quantity').notNull(),
  grabbedQuantity: quantity('grabbed_quantity').notNull().default('0'),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  index('daily_deals_offer_idx').on(t.offerId),
  check('daily_deals_grabbed_non_negative', sql`${t.grabbedQuantity} >= 0`)
])

/** Who changed an order's status (order_status_history.source). */
export const changeSource = pgEnum('change_source', ['api', 'auto-reject', 'seed', 'platform'])
export type ChangeSource = (typeof changeSource.enumValues)[number]

export const orderStatus = pgEnum('order_status', [
  'ORDER_PLACED', 'ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER', 'CANCELLED', 'DELIVERED'
])
export type OrderStatus = (typeof orderStatus.enumValues)[number]

export const paymentMode = pgEnum('payment_mode', ['ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY'])
export type PaymentMode = (typeof paymentMode.enumValues)[number]

export const orders = pgTable('orders', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  storeId: integer('store_id').notNull().references(() => stores.id),
  retailerId: integer('retailer_id').notNull().references(() => retailers.id),
  shopId: integer('shop_id').references(() => shops.id),
  orderNumber: text('order_number').notNull().unique(),
  serviceOrderNumber: text('service_order_number').notNull(),
  status: orderStatus('status').notNull().default('ORDER_PLACED'),
  deliveryType: text('delivery_type').notNull().default('REGULAR'),
  /** The retailer's name as it was when the order was placed. */
  retailerName: text('retailer_name').notNull(),
  isActionable: boolean('is_actionable').notNull().default(true),
  currencyCode: text('currency_code').notNull().default('INR'),
  orderTotal: money('order_total').notNull(),
  orderTotalFinal: money('order_total_final').notNull(),
  orderTaxAmount: money('order_tax_amount').notNull().default('0'),
  orderCessAmount: money('order_cess_amount').notNull().default('0'),
  appliedPoints: money('applied_points').notNull().default('0'),
  totalExtraCharges: money('total_extra_charges').notNull().default('0'),
  roundOff: money('round_off').notNull().default('0'),
  totalItemsInOrder: integer('total_items_in_order').notNull(),
  paymentMode: paymentMode('payment_mode').notNull(),
  isDeleted: boolean('is_deleted').notNull().default(false),
  deletedAt: timestamp('deleted_at', { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  // The page walk of the orders query: a seller's live orders by creation time, then id. store_id rides
  // along so a credential narrowed to some stores filters (and counts) inside the index.
  index('orders_seller_created_idx').on(t.sellerId, t.createdAt, t.id, t.storeId).where(sql`not ${t.isDeleted}`),
  // Incremental sync (updatedSince).
  index('orders_seller_updated_idx').on(t.sellerId, t.updatedAt, t.id, t.storeId).where(sql`not ${t.isDeleted}`)
])

/**
 * Live (not soft-deleted) orders per seller and store, kept by statement-level triggers on orders
 * (migration 0003): the unfiltered `pageInfo.total` reads a few counter rows instead of counting a
 * seller's whole order history, in the same snapshot as the page.
 */
export const orderCounts = pgTable('order_counts', {
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  storeId: integer('store_id').notNull().references(() => stores.id),
  liveOrders: bigint('live_orders', { mode: 'number' }).notNull().default(0)
}, (t) => [primaryKey({ columns: [t.sellerId, t.storeId] })])

export const orderItems = pgTable('order_items', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  orderId: bigint('order_id', { mode: 'number' }).notNull().references(() => orders.id),
  itemId: integer('item_id').notNull().references(() => items.id),
  skuId: integer('sku_id').notNull().references(() => skus.id),
  offerId: integer('offer_id').notNull().references(() => offers.id),
  dealId: integer('deal_id').references(() => dailyDeals.id),
  quantity: quantity('quantity').notNull(),
  unitPrice: money('unit_price').notNull()
}, (t) => [index('order_items_order_idx').on(t.orderId)])

export const orderStatusHistory = pgTable('order_status_history', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  orderId: bigint('order_id', { mode: 'number' }).notNull().references(() => orders.id),
  fromStatus: orderStatus('from_status'),
  toStatus: orderStatus('to_status').notNull(),
  reason: text('reason'),
  /** The credential that made the change; null for the system (seed, auto-rejection). */
  credentialId: integer('credential_id').references(() => credentials.id),
  /** Who asked: a seller's credential, the auto-rejection job, the demo seed, or the marketplace (platform key). */
  source: changeSource('source').notNull().default('api'),
  changedAt: timestamp('changed_at', { withTimezone: true }).notNull().defaultNow()
}, (t) => [index('order_status_history_order_idx').on(t.orderId)])

export const pointsEntryKind = pgEnum('points_entry_kind', [
  'TOP_UP', 'ORDER_ACCEPTANCE', 'ADJUSTMENT', 'ORDER_CANCELLATION_REFUND'
])

/**
 * Every change of a seller's points balance. The UNIQUE (order, kind) makes a second deduction for
 * the same order impossible rather than unlikely; sum(amount) per seller equals its balance.
 */
export const pointsLedger = pgTable('points_ledger', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  orderId: bigint('order_id', { mode: 'number' }).references(() => orders.id),
  kind: pointsEntryKind('kind').notNull(),
  amount: money('amount').notNull(),
  balanceAfter: money('balance_after').notNull(),
  /** The marketplace's own reference of a top-up or adjustment (POST /v2/platform/sellers/points). */
  reference: text('reference'),
  createdAt: createdAt()
}, (t) => [
  unique('points_ledger_order_kind_key').on(t.orderId, t.kind),
  // One entry per (seller, reference): a re-sent top-up can never be booked twice.
  unique('points_ledger_seller_reference_key').on(t.sellerId, t.reference),
  index('points_ledger_seller_idx').on(t.sellerId),
  // A seller's ledger paged by id (keyset) within a time range (src/money/list-ledger.ts).
  index('points_ledger_seller_id_idx').on(t.sellerId, t.id)
])

export const refundStatus = pgEnum('refund_status', ['PENDING', 'PROCESSING', 'SUCCEEDED', 'FAILED', 'MANUAL'])

/** At most one refund per order. */
export const refunds = pgTable('refunds', {
  id: serial('id').primaryKey(),
  orderId: bigint('order_id', { mode: 'number' }).notNull().unique().references(() => orders.id),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  amount: money('amount').notNull(),
  currency: text('currency').notNull().default('INR'),
  status: refundStatus('status').notNull().default('PENDING'),
  gateway: text('gateway'),
  gatewayReference: text('gateway_reference'),
  lastError: text('last_error'),
  /** Finance's own reference of the payment that settled a MANUAL refund (POST /v2/platform/refunds/settle). */
  reference: text('reference'),
  settledAt: timestamp('settled_at', { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  // The finance lists page by id (keyset) within a status or a seller (src/money/).
  index('refunds_status_id_idx').on(t.status, t.id),
  index('refunds_seller_id_idx').on(t.sellerId, t.id),
  index('refunds_created_at_idx').on(t.createdAt)
])

export const payoutStatus = pgEnum('payout_status', ['ON_HOLD', 'SCHEDULED', 'PAID', 'CANCELLED'])

/** What the platform owes the seller for a prepaid order; completing the order moves it on. */
export const payoutSchedules = pgTable('payout_schedules', {
  id: serial('id').primaryKey(),
  orderId: bigint('order_id', { mode: 'number' }).notNull().unique().references(() => orders.id),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  amount: money('amount').notNull(),
  status: payoutStatus('status').notNull().default('ON_HOLD'),
  scheduledFor: date('scheduled_for'),
  /** Finance's own reference of the transfer that paid a SCHEDULED payout (POST /v2/platform/payouts/settle). */
  reference: text('reference'),
  paidAt: timestamp('paid_at', { withTimezone: true }),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  // The finance lists page by id (keyset) within a status or a seller (src/money/).
  index('payout_schedules_status_id_idx').on(t.status, t.id),
  index('payout_schedules_seller_id_idx').on(t.sellerId, t.id),
  index('payout_schedules_created_at_idx').on(t.createdAt)
])

/**
 * One row per side effect applied to an order (e.g. DEAL_QUANTITY_RETURNED). Writing it in the same
 * transaction as the effect makes each effect happen at most once, whatever retries or races occur.
 */
export const orderEffects = pgTable('order_effects', {
  orderId: bigint('order_id', { mode: 'number' }).notNull().references(() => orders.id),
  kind: text('kind').notNull(),
  createdAt: createdAt()
}, (t) => [primaryKey({ columns: [t.orderId, t.kind] })])

export const outstandingShipments = pgTable('outstanding_shipments', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  sellerId: integer('seller_id').notNull().references(() => sellers.id),
  retailerSyncId: text('retailer_sync_id').notNull(),
  /** Null when the client has no shop for the row; null is a key value of its own. */
  shopSyncId: text('shop_sync_id'),
  offerSyncId: text('offer_sync_id').notNull(),
  outstandingQuantity: numeric('outstanding_quantity').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  unique('outstanding_shipments_key').on(t.sellerId, t.retailerSyncId, t.shopSyncId, t.offerSyncId).nullsNotDistinct(),
  check('outstanding_shipments_quantity_non_negative', sql`${t.outstandingQuantity} >= 0`)
])

export const credentialKind = pgEnum('credential_kind', ['access-token', 'api-key', 'platform-key'])
export type CredentialKind = (typeof credentialKind.enumValues)[number]
/** The kinds bound to a seller; the platform key (the marketplace's own backend) belongs to none. */
export type SellerCredentialKind = Exclude<CredentialKind, 'platform-key'>
export const environment = pgEnum('environment', ['testing', 'production'])
export type Environment = (typeof environment.enumValues)[number]

/** Secrets are stored only as a SHA-256 hash; keyId is a public, indexed part of the secret for lookup. */
export const credentials = pgTable('credentials', {
  id: serial('id').primaryKey(),
  /** Null for a platform key only (the CHECK below): every seller credential names its seller. */
  sellerId: integer('seller_id').references(() => sellers.id),
  kind: credentialKind('kind').notNull(),
  environment: environment('environment').notNull(),
  keyId: text('key_id').notNull().unique(),
  secretHash: text('secret_hash').notNull(),
  /** Null: every store of the seller. */
  storeIds: integer('store_ids').array(),
  label: text('label'),
  createdAt: createdAt(),
  revokedAt: timestamp('revoked_at', { withTimezone: true }),
  lastUsedAt: timestamp('last_used_at', { withTimezone: true })
}, (t) => [
  index('credentials_seller_idx').on(t.sellerId),
  // kind as text: a CHECK may not use an enum value added in the same migration's transaction.
  check('credentials_seller_by_kind', sql`(${t.kind}::text = 'platform-key') = (${t.sellerId} is null)`)
])

/**
 * Idempotency-Key (Stripe's rules): the first answer to a (credential, key) is stored in the same
 * transaction as the work it describes and replayed to a retry for 24 hours. A request that carries the
 * key again while the first is still running waits on this row's primary key until that one commits.
 */
export const idempotencyKeys = pgTable('idempotency_keys', {
  credentialId: integer('credential_id').notNull().references(() => credentials.id, { onDelete: 'cascade' }),
  key: text('key').notNull(),
  /** SHA-256 of the method, path and body: the same key with another request is refused. */
  fingerprint: text('fingerprint').notNull(),
  /**
   * The outcome as the service returned it (JSON), rendered by the route the same way on a replay. Null
   * only inside the transaction that claimed the key: it is written before that transaction commits.
   */
  outcome: text('outcome'),
  createdAt: createdAt(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull()
}, (t) => [
  primaryKey({ columns: [t.credentialId, t.key] }),
  index('idempotency_keys_expires_idx').on(t.expiresAt)
])

/** What an event of the seller's log records (src/events/event-types.ts holds the same list). */
export const eventType = pgEnum('event_type', [
  'order.placed', 'order.accepted', 'order.rejected', 'order.completed', 'order.cancelled', 'order.delivered',
  'webhook.test', 'webhook.endpoint_disabled'
])
export type EventType = (typeof eventType.enumValues)[number]

/**
 * Each seller's last event sequence. The row is incremented (UPDATE … RETURNING, through an upsert) as the
 * last statement of every transaction that records events, so its row lock is held only until that
 * transaction commits: a seller's event writers queue on it, sequences are handed out in commit order, and
 * a rollback gives its numbers back. See src/events/record-events.ts.
 */
export const sellerEventCounters = pgTable('seller_event_counters', {
  sellerId: integer('seller_id').primaryKey().references(() => sellers.id),
  lastSequence: bigint('last_sequence', { mode: 'number' }).notNull()
}, (t) => [check('seller_event_counters_last_sequence_positive', sql`${t.lastSequence} > 0`)])

/**
 * The seller's event log (every change of its orders, and test events), read as a feed (GraphQL `events`):
 * one row per change of an order, written in the change's transaction, numbered per seller without gaps in
 * commit order. No foreign keys: an event is a record of the past, kept for EVENT_RETENTION_DAYS, and its
 * seller is the counter's (written by the same statement); a key check per row would be paid by every
 * status change.
 */
export const sellerEvents = pgTable('seller_events', {
  sellerId: integer('seller_id').notNull(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  type: eventType('type').notNull(),
  /** Null for an event of no order (webhook.test). */
  orderId: bigint('order_id', { mode: 'number' }),
  /** The order's store: a credential narrowed to some stores reads only their events. */
  storeId: integer('store_id'),
  previousStatus: orderStatus('previous_status'),
  reason: text('reason'),
  /**
   * The order's status right after the event (null for an event of no order): as at the event, like every
   * field here.
   */
  status: orderStatus('status'),
  /** When the event was recorded, just before its transaction committed: non-decreasing along the sequence. */
  occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
  /**
   * The W3C traceparent of the span that recorded the event (the request, or the job), when it was
   * sampled: each delivery attempt's span links to it (webhooks/deliverer.ts). Null with tracing off or
   * the span unsampled. Internal: neither the feed nor a webhook body carries it.
   */
  traceparent: text('traceparent'),
}, (t) => [
  primaryKey({ columns: [t.sellerId, t.sequence] }),
  // Retention prunes by age: a BRIN index is a few pages for the whole log and costs a write next to nothing.
  index('seller_events_occurred_brin').using('brin', t.occurredAt)
])

/** Raw bytes (an endpoint's encrypted secret). */
const bytea = customType<{ data: Buffer, driverData: Buffer }>({ dataType: () => 'bytea' })

/**
 * Who hears of the events of the log (src/subscriptions/): a seller's own webhook endpoint; the operator's
 * endpoint for every seller (WEBHOOK_URL); a notification channel for every seller (to the seller, to the
 * customer, to the retailer's messaging app), sent through the transport the configuration names for it.
 */
export const subscriptionKind = pgEnum('subscription_kind', [
  'seller-webhook', 'operator-webhook', 'notify-seller', 'notify-customer', 'notify-messaging'
])
export type SubscriptionKind = (typeof subscriptionKind.enumValues)[number]

export const subscriptionStatus = pgEnum('subscription_status', ['ENABLED', 'DISABLED'])
export type SubscriptionStatus = (typeof subscriptionStatus.enumValues)[number]

/**
 * One subscriber of the event log. A seller's webhook endpoint (`seller-webhook`) has its seller, URL and
 * signing secret here; the signing secret is kept encrypted (AES-256-GCM under WEBHOOK_SECRETS_KEY): signing
 * needs the secret itself, so it cannot be hashed like an API key. The other kinds are one row each, for every
 * seller (seller_id null); their address and secret are the configuration's (WEBHOOK_URL, WhatsApp), read when
 * they send.
 */
export const subscriptions = pgTable('subscriptions', {
  id: uuid('id').primaryKey().defaultRandom(),
  kind: subscriptionKind('kind').notNull().default('seller-webhook'),
  /** The seller of a seller-webhook; null: every seller. */
  sellerId: integer('seller_id').references(() => sellers.id),
  url: text('url'),
  /** The event types sent; null: every type. */
  types: eventType('types').array(),
  description: text('description').notNull().default(''),
  status: subscriptionStatus('status').notNull().default('ENABLED'),
  /** Why it was disabled (by the seller, a 410, five days of failures, the configuration); null while enabled. */
  disabledReason: text('disabled_reason'),
  secret: bytea('secret'),
  /** The secret before the last rotation, still signing (a second `v1,` entry) until `previousSecretUntil`. */
  previousSecret: bytea('previous_secret'),
  previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true }),
  /** Since when every attempt failed (null after a success): five days of it disables a seller's endpoint. */
  failingSince: timestamp('failing_since', { withTimezone: true }),
  /**
   * The stores of the credential that made it (its scope): only events of these stores' orders, and of no
   * order, are sent to it, and only a credential whose scope covers these sees or changes it. Null: the
   * whole seller.
   */
  storeIds: integer('store_ids').array(),
  createdAt: createdAt(),
  updatedAt: updatedAt()
}, (t) => [
  index('subscriptions_seller_idx').on(t.sellerId),
  // The kinds for every seller exist once each.
  uniqueIndex('subscriptions_shared_kind_idx').on(t.kind).where(sql`seller_id is null`),
  check('subscriptions_seller_webhook_complete', sql`(${t.kind} = 'seller-webhook') =
    (${t.sellerId} is not null and ${t.url} is not null and ${t.secret} is not null)`)
])

/**
 * How far each subscription has queued each seller's log: every event of the seller up to `lastSequence`
 * has been considered for it (the log is gap-free, so a cursor misses nothing). A seller without a row here
 * is queued from its first event.
 */
export const subscriptionCursors = pgTable('subscription_cursors', {
  subscriptionId: uuid('subscription_id').notNull().references(() => subscriptions.id, { onDelete: 'cascade' }),
  sellerId: integer('seller_id').notNull(),
  lastSequence: bigint('last_sequence', { mode: 'number' }).notNull()
}, (t) => [primaryKey({ columns: [t.subscriptionId, t.sellerId] })])

export const deliveryStatus = pgEnum('delivery_status', ['PENDING', 'DELIVERED', 'FAILED'])
export type DeliveryStatus = (typeof deliveryStatus.enumValues)[number]

/**
 * One event to send to one subscription (a replay adds another row for the same event): the delivery queue.
 * PENDING until delivered or the last retry (FAILED, given up). A claimed delivery stays PENDING with
 * `leasedUntil` past the attempt's deadline, so one whose deliverer died is simply due again. Rows of one
 * subscription and order are sent in id order, each only once the ones before it are done.
 */
export const deliveries = pgTable('deliveries', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  subscriptionId: uuid('subscription_id').notNull().references(() => subscriptions.id, { onDelete: 'cascade' }),
  sellerId: integer('seller_id').notNull(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  type: eventType('type').notNull(),
  /** The event's order: the key of per-order ordering (null: an event of no order, sent in any order). */
  orderId: bigint('order_id', { mode: 'number' }),
  status: deliveryStatus('status').notNull().default('PENDING'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
  /** Claimed by a deliverer until then (in flight); null or past: not claimed. */
  leasedUntil: timestamp('leased_until', { withTimezone: true }),
  /** Queued by a replay (at most one replay of an endpoint is pending at a time). */
  replay: boolean('replay').notNull().default(false),
  createdAt: createdAt(),
  finishedAt: timestamp('finished_at', { withTimezone: true })
}, (t) => [
  // One subscription's due rows in order: the fair claim takes a few from each.
  index('deliveries_subscription_due_idx').on(t.subscriptionId, t.nextAttemptAt, t.id).where(sql`status = 'PENDING'`),
  // The rows in flight per subscription (few): the claim counts them against the per-subscription cap.
  index('deliveries_leased_idx').on(t.subscriptionId, t.leasedUntil).where(sql`status = 'PENDING' and leased_until is not null`),
  // (next attempt, id): a dispatch queues thousands of rows with one next_attempt_at; with the id in the key
  // a claim reads them in its own order and stops at its limit, instead of sorting the whole tie.
  index('deliveries_due_idx').on(t.nextAttemptAt, t.id).where(sql`status = 'PENDING'`),
  index('deliveries_order_idx').on(t.subscriptionId, t.orderId, t.id).where(sql`status = 'PENDING'`),
  index('deliveries_finished_brin').using('brin', t.finishedAt)
])

/**
 * The delivery log (a seller reads its endpoint's: GET …/deliveries; the operator every subscription's): one
 * row per attempt, kept as the events are.
 */
export const deliveryAttempts = pgTable('delivery_attempts', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  subscriptionId: uuid('subscription_id').notNull().references(() => subscriptions.id, { onDelete: 'cascade' }),
  deliveryId: bigint('delivery_id', { mode: 'number' }).notNull(),
  sellerId: integer('seller_id').notNull(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  type: eventType('type').notNull(),
  attempt: integer('attempt').notNull(),
  succeeded: boolean('succeeded').notNull(),
  /** The HTTP status of an HTTP subscriber's answer; null for a notification or when no answer came. */
  httpStatus: integer('http_status'),
  error: text('error'),
  durationMs: integer('duration_ms').notNull(),
  /** The first 1 KB of the answer. */
  answerHead: text('answer_head').notNull(),
  attemptedAt: timestamp('attempted_at', { withTimezone: true }).notNull().defaultNow()
}, (t) => [index('delivery_attempts_subscription_idx').on(t.subscriptionId, t.id)])
