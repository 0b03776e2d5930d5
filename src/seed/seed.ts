import { getTableName, sql } from 'drizzle-orm'
import { analyzeTables } from '../db/analyze.js'
import type { Database, Tx } from '../db/client.js'
import { withSessionLock } from '../db/session-lock.js'
import {
  dailyDeals, items, offers, orderItems, orders, orderStatusHistory, payoutSchedules, pointsLedger, refunds, retailers,
  sellerRetailers, sellerShops, sellers, sellingUnits, shops, skus, stores,
  type OrderStatus, type PaymentMode, type SellerStatus
} from '../db/schema.js'
import { scheduleAutoRejections } from '../effects/enqueue.js'
import { addPoints } from '../platform/add-points.js'
import { placeOrders } from '../platform/place-orders.js'
import { Pipeline } from './pipeline.js'
import type { PlatformBatchData } from '../platform/schemas.js'
import { MAX_PLATFORM_ROWS } from '../platform/texts.js'
import { upsertCatalogue } from '../platform/upsert-catalogue.js'
import { upsertDeals } from '../platform/upsert-deals.js'
import { upsertRetailers } from '../platform/upsert-retailers.js'
import { upsertSellers } from '../platform/upsert-sellers.js'
import { FIRST_NAMES, LAST_NAMES, LOCALITIES, PRODUCTS, SHOP_WORDS } from './catalogue.js'
import { Random } from './random.js'

/*
 * Deterministic demo data: the same seed, order count and anchor give the same rows on an empty
 * database. Three sellers cover the cases the endpoints care about (plenty of points, too few points,
 * suspended). The seed is the marketplace's first client: every seller, store, points entry, retailer,
 * shop, item, SKU, selling unit, offer, deal and order goes in through the platform's service functions
 * (the ones the routes call), in batches of the API's size, with the marketplace's ids assigned here.
 * Each batch commits on its own, as the marketplace's would; a seed stopped half-way leaves what it
 * committed (run it on an empty database). bench/results/2026-11-25-seed.md compares its time with the
 * table-insert seed it replaced.
 */

export interface SeedOptions {
  orders: number
  seed: number
  /** Orders are created in the 90 days up to this instant. Fixed by default so runs are repeatable. */
  anchor: Date
  /**
   * AUTO_REJECT_AFTER_MS: placed orders of auto-reject sellers get their job this long after loading (0 = none).
   * Default 24 h.
   */
  autoRejectAfterMs?: number
  log?: (line: string) => void
}

export interface SellerSummary {
  companyId: number
  name: string
  status: SellerStatus
  pointsBalance: string
  takeRate: string
  storeIds: number[]
  orderCount: number
}

export interface SeedSummary { sellers: SellerSummary[], orders: number, orderItems: number }

export const DEFAULT_ANCHOR = new Date('2026-11-01T00:00:00Z')

interface SellerPlan {
  name: string
  status: SellerStatus
  pointsPaise: number
  takeRate: string
  share: number
  stores: string[]
  autoReject: boolean
}

const SELLER_PLANS: SellerPlan[] = [
  { name: 'Sharma Distributors Pvt Ltd', status: 'active', pointsPaise: 500_000_000_00, takeRate: '0.0200', share: 0.6, stores: ['Mumbai Central Warehouse', 'Pune Depot', 'Nashik Depot'], autoReject: true },
  // Too few points: any of its orders costs more than 2.00 points at a 3 % take rate.
  { name: 'Gupta Traders', status: 'active', pointsPaise: 200, takeRate: '0.0300', share: 0.25, stores: ['Delhi Okhla Godown', 'Gurugram Hub'], autoReject: false },
  { name: 'Mehta Wholesale (suspended)', status: 'suspended', pointsPaise: 5_000_00, takeRate: '0.0200', share: 0.15, stores: ['Ahmedabad Store', 'Surat Store'], autoReject: false }
]

const STATUS_WEIGHTS: Record<OrderStatus, number> = {
  ORDER_PLACED: 25,
  ORDER_ACCEPTED: 25,
  ORDER_REJECTED_BY_SELLER: 10,
  ORDER_COMPLETED_BY_SELLER: 20,
  CANCELLED: 10,
  DELIVERED: 10
}
const PAYMENT_WEIGHTS: Record<PaymentMode, number> = { ONLINE_PAID: 35, PREPAID: 25, CASH_ON_DELIVERY: 40 }
const DAY_MS = 86_400_000

/** Paise (integer) to a decimal string: money never passes through a float. */
export function paise (p: number): string {
  const sign = p < 0 ? '-' : ''
  const a = Math.abs(p)
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`
}

const TABLES = {
  sellers,
  stores,
  retailers,
  shops,
  items,
  skus,
  offers,
  sellingUnits,
  dailyDeals,
  orders,
  orderItems,
  orderStatusHistory,
  pointsLedger,
  refunds,
  payoutSchedules
}
type Ids = Record<keyof typeof TABLES, number>

/** The next free id of every table: ids are assigned here, so the rows of one seed can point at each other. */
async function nextIds (tx: Tx): Promise<Ids> {
  const ids = {} as Ids
  for (const [key, table] of Object.entries(TABLES) as Array<[keyof Ids, (typeof TABLES)[keyof Ids]]>) {
    const [row] = await tx.execute<{ next: string }>(sql`select coalesce(max(id), 0)::bigint + 1 as next from ${table}`)
    ids[key] = Number(row.next)
  }
  return ids
}

interface OfferInfo {
  id: number
  skuId: number
  itemId: number
  pricePaise: number
  gst: number
  cess: number
  dealId: number | null
}
interface Buyer { retailerId: number, name: string, shopId: number | null }
interface SellerData {
  sellerId: number
  plan: SellerPlan
  storeIds: number[]
  offers: OfferInfo[]
  buyers: Buyer[]
  orderCount: number
}

/** The catalogue and buyers of every seller, and the rows that store them. */
function planSellers (rnd: Random, ids: Ids, orderTotal: number, dealDate: string) {
  const rows = {
    sellers: [] as Array<typeof sellers.$inferInsert>,
    stores: [] as Array<typeof stores.$inferInsert>,
    ledger: [] as Array<typeof pointsLedger.$inferInsert>,
    /** PUT /v2/platform/retailers rows: each retailer linked to its seller with its shop. */
    retailers: [] as Array<{
      id: number,
      companyId: number,
      name: string,
      firstName: string,
      lastName: string,
      phone: string,
      whatsapp: string | null,
      shops: Array<{ id: number, shopName: string }>
    }>,
    retailerLinks: [] as Array<{ sellerId: number, retailerId: number, syncId: string | null }>,
    shopLinks: [] as Array<{ sellerId: number, shopId: number, syncId: string }>,
    items: [] as Array<typeof items.$inferInsert>,
    skus: [] as Array<typeof skus.$inferInsert>,
    offers: [] as Array<typeof offers.$inferInsert>,
    units: [] as Array<typeof sellingUnits.$inferInsert>,
    deals: [] as Array<typeof dailyDeals.$inferInsert>
  }
  const sellerData: SellerData[] = []
  let allotted = 0
  SELLER_PLANS.forEach((plan, s) => {
    const sellerId = ids.sellers + s
    const orderCount = s === SELLER_PLANS.length - 1 ? orderTotal - allotted : Math.floor(orderTotal * plan.share)
    allotted += orderCount
    rows.sellers.push({
      id: sellerId,
      name: plan.name,
      status: plan.status,
      pointsBalance: paise(plan.pointsPaise),
      takeRate: plan.takeRate,
      autoRejectEnabled: plan.autoReject
    })
    // The opening balance is a ledger entry too, so the ledger sums to the balance at all times.
    rows.ledger.push({ id: ids.pointsLedger + s, sellerId, orderId: null, kind: 'TOP_UP', amount: paise(plan.pointsPaise), balanceAfter: paise(plan.pointsPaise) })
    const storeIds = plan.stores.map((name) => {
      const id = ids.stores++
      rows.stores.push({ id, sellerId, name })
      return id
    })

    const offerInfos: OfferInfo[] = []
    PRODUCTS.forEach((p, i) => {
      const itemId = ids.items++; const skuId = ids.skus++; const offerId = ids.offers++
      const code = `${sellerId}-${String(i + 1).padStart(3, '0')}`
      rows.items.push({ id: itemId, sellerId, itemName: p.name, itemSyncId: `PRD-${code}` })
      rows.skus.push({ id: skuId, sellerId, itemId, skuNickName: p.name.split(' ').slice(0, 3).join(' '), images: [`https://cdn.example.in/sku/${code}/front.jpg`, `https://cdn.example.in/sku/${code}/back.jpg`], tags: p.tags })
      const withTax = Math.round(p.pricePaise * (100 + p.gst + p.cess) / 100)
      const priceRange = [
        { minQuantity: 1, maxQuantity: 9, price: withTax / 100 },
        { minQuantity: 10, maxQuantity: 49, price: Math.round(withTax * 0.97) / 100 },
        { minQuantity: 50, maxQuantity: null, price: Math.round(withTax * 0.94) / 100 }
      ]
      rows.offers.push({ id: offerId, sellerId, skuId, offerSyncId: `VAR-${code}`, purchasePrice: paise(Math.round(p.pricePaise * 0.85)), mrpPriceAmount: paise(Math.round(withTax * 1.12)), finalPriceWithTax: paise(withTax), currency: 'INR', priceRange })
      rows.units.push({ id: ids.sellingUnits++, skuId, name: 'Piece', multiplier: '1', isBaseUnit: true })
      rows.units.push({ id: ids.sellingUnits++, skuId, name: 'Case', multiplier: String(rnd.pick([6, 12, 24])), isBaseUnit: false })
      let dealId: number | null = null
      if (i % 6 === 0) {
        dealId = ids.dailyDeals++
        rows.deals.push({ id: dealId, sellerId, offerId, dealDate, dealPrice: paise(Math.round(withTax * 0.9)), maxQuantity: '100000000', grabbedQuantity: '0' })
      }
      offerInfos.push({ id: offerId, skuId, itemId, pricePaise: p.pricePaise, gst: p.gst, cess: p.cess, dealId })
    })

    const retailerCount = Math.min(5000, Math.max(6, Math.ceil(orderCount / 8)))
    const buyers: Buyer[] = []
    for (let r = 0; r < retailerCount; r++) {
      const retailerId = ids.retailers++
      const first = rnd.pick(FIRST_NAMES); const last = rnd.pick(LAST_NAMES)
      const phone = `+91${rnd.int(70000, 99999)}${String(rnd.int(0, 99999)).padStart(5, '0')}`
      const shopName = `${last} ${rnd.pick(SHOP_WORDS)}, ${rnd.pick(LOCALITIES)}`
      const syncId = r % 10 < 7 ? `RET-${sellerId}-${String(r + 1).padStart(5, '0')}` : null
      const whatsapp = rnd.chance(0.6) ? phone : null
      rows.retailerLinks.push({ sellerId, retailerId, syncId })
      let shopId: number | null = null
      if (r % 5 !== 4) {
        shopId = ids.shops++
        rows.shopLinks.push({ sellerId, shopId, syncId: `SHOP-${sellerId}-${String(r + 1).padStart(5, '0')}` })
      }
      const shops = shopId === null ? [] : [{ id: shopId, shopName }]
      rows.retailers.push({ id: retailerId, companyId: sellerId, name: `${first} ${last}`, firstName: first, lastName: last, phone, whatsapp, shops })
      buyers.push({ retailerId, name: `${first} ${last}`, shopId })
    }
    sellerData.push({ sellerId, plan, storeIds, offers: offerInfos, buyers, orderCount })
  })
  return { rows, sellerData }
}

/**
 * One order as the marketplace would place it (the row of docs/platform/orders.md), and what became of it afterwards:
 * history the API cannot express (a status reached days ago, a soft-delete), written after placement.
 */
interface SeededOrder {
  row: {
    orderId: string
    orderNumber: string
    serviceOrderNumber: string
    companyId: number
    storeId: number
    retailerId: number
    shopId: number | null
    deliveryType: string
    currencyCode: string
    paymentMode: PaymentMode
    orderTotal: string
    orderTotalFinal: string
    orderTaxAmount: string
    orderCessAmount: string
    appliedPoints: string
    totalExtraCharges: string
    roundOff: string
    placedAt: string
    orderItems: Array<{ id: string, offerId: number, quantity: string, dealId: number | null }>
  }
  status: OrderStatus
  reason: string | null
  updatedMs: number
  deleted: boolean
}

/** Generates one order of a seller. A deal line is placed on its deal's day, as the API requires. */
function generateOrder (rnd: Random, ids: Ids, sd: SellerData, anchorMs: number, dealDate: string): SeededOrder {
  const orderId = ids.orders++
  const buyer = rnd.pick(sd.buyers)
  const shopId = buyer.shopId !== null && rnd.chance(0.85) ? buyer.shopId : null
  const status = rnd.weighted(STATUS_WEIGHTS)
  const payment = rnd.weighted(PAYMENT_WEIGHTS)
  // One order in ten is from the deal day (the day before the anchor, or its own day so far), the rest
  // from the 90 days before the anchor.
  const dealDayStart = Date.parse(`${dealDate}T00:00:00Z`)
  const dealDaySeconds = Math.floor((Math.min(anchorMs, dealDayStart + DAY_MS) - 1 - dealDayStart) / 1000)
  const createdMs = rnd.chance(0.1)
    ? dealDayStart + rnd.int(0, dealDaySeconds) * 1000
    : anchorMs - rnd.int(0, 90 * DAY_MS / 1000) * 1000
  const placedAt = new Date(createdMs).toISOString()
  const lineCount = rnd.int(1, 5)
  let subtotal = 0; let tax = 0; let cess = 0
  const orderItems: SeededOrder['row']['orderItems'] = []
  for (let l = 0; l < lineCount; l++) {
    const offer = rnd.pick(sd.offers)
    const qty = rnd.int(5, 60)
    const amount = offer.pricePaise * qty
    subtotal += amount
    tax += Math.round(amount * offer.gst / 100)
    cess += Math.round(amount * offer.cess / 100)
    const onDeal = offer.dealId !== null && rnd.chance(0.5) && placedAt.startsWith(dealDate)
    orderItems.push({
      id: String(ids.orderItems++), offerId: offer.id, quantity: String(qty), dealId: onDeal ? offer.dealId : null
    })
  }
  const extra = rnd.chance(0.2) ? rnd.pick([2000, 5000, 10000]) : 0
  const appliedPoints = payment === 'ONLINE_PAID' && rnd.chance(0.2) ? rnd.int(10, 50) * 100 : 0
  const total = subtotal + tax + cess
  const rounded = Math.round(total / 100) * 100
  const final = rounded + extra - appliedPoints
  const deleted = rnd.chance(0.01)
  const moved = status !== 'ORDER_PLACED'
  const updatedMs = moved ? createdMs + rnd.int(600, 3 * 86400) * 1000 : createdMs
  const reason = status === 'ORDER_REJECTED_BY_SELLER' ? rnd.pick(['Out of stock', 'Delivery area not serviceable', 'Price mismatch']) : null
  return {
    row: {
      orderId: String(orderId),
      orderNumber: `ORD-${100000000 + orderId}`,
      serviceOrderNumber: `OX${orderId.toString(36).toUpperCase().padStart(6, '0')}`,
      companyId: sd.sellerId,
      storeId: rnd.pick(sd.storeIds),
      retailerId: buyer.retailerId,
      shopId,
      deliveryType: 'REGULAR',
      currencyCode: 'INR',
      paymentMode: payment,
      orderTotal: paise(total),
      orderTotalFinal: paise(final),
      orderTaxAmount: paise(tax),
      orderCessAmount: paise(cess),
      appliedPoints: paise(appliedPoints),
      totalExtraCharges: paise(extra),
      roundOff: paise(rounded - total),
      placedAt,
      orderItems
    },
    status,
    reason,
    updatedMs,
    deleted
  }
}

/** Refuses to go on when a service refused a row of the seed's own data: the seed is wrong, not the data. */
function allAccepted (what: string, data: PlatformBatchData): void {
  if (data.failed > 0) throw new Error(`seed: ${what} refused ${data.failed} rows, first: ${JSON.stringify(data.errors[0])}`)
}

/**
 * What the API cannot express, written straight into the tables for each chunk of placed orders:
 * statuses reached in the past (changed at their own time, by the seed: no effects fire for history) and
 * soft-deletes. A rejected order paid online was refunded long ago; a prepaid order's payout follows its
 * status as the status update would have moved it.
 */
async function writeHistory (tx: Tx, chunk: SeededOrder[]): Promise<void> {
  // An order still placed keeps what placement wrote (placed by the seed: last updated when placed).
  const moved = chunk.filter((o) => o.status !== 'ORDER_PLACED' || o.deleted)
  if (moved.length === 0) return
  const rows = moved.map((o) => ({
    id: Number(o.row.orderId),
    seller_id: o.row.companyId,
    status: o.status,
    // Completed and delivered orders were accepted first, half-way between placement and their last change
    // (at least 600 s apart, so each step's time is strictly after the one before).
    accepted_at: o.status === 'ORDER_COMPLETED_BY_SELLER' || o.status === 'DELIVERED'
      ? new Date(Date.parse(o.row.placedAt) + Math.floor((o.updatedMs - Date.parse(o.row.placedAt)) / 2)).toISOString()
      : null,
    reason: o.reason,
    actionable: o.status === 'ORDER_PLACED' || o.status === 'ORDER_ACCEPTED',
    updated_at: new Date(o.updatedMs).toISOString(),
    deleted: o.deleted,
    payment: o.row.paymentMode,
    amount: o.row.orderTotalFinal
  }))
  const h = sql`json_to_recordset(${JSON.stringify(rows)}::json) as h(id bigint, seller_id int, status order_status,
    accepted_at timestamptz, reason text, actionable boolean, updated_at timestamptz, deleted boolean, payment text, amount numeric)`
  await tx.execute(sql`update orders o set status = h.status, is_actionable = h.actionable, updated_at = h.updated_at,
      is_deleted = h.deleted, deleted_at = case when h.deleted then h.updated_at end
    from ${h} where o.id = h.id`)
  // Each order's history is a chain from placement (written at its placedAt by placeOrders) to its status.
  await tx.execute(sql`insert into order_status_history (order_id, from_status, to_status, reason, source, changed_at)
    select s.id, s.from_status, s.to_status, s.reason, 'seed', s.changed_at
    from (
      select h.id, 'ORDER_PLACED'::order_status as from_status, 'ORDER_ACCEPTED'::order_status as to_status,
        null as reason, h.accepted_at as changed_at
      from ${h} where h.accepted_at is not null
      union all
      select h.id, case when h.accepted_at is null then 'ORDER_PLACED' else 'ORDER_ACCEPTED' end::order_status,
        h.status, h.reason, h.updated_at
      from ${h} where h.status <> 'ORDER_PLACED'
    ) s order by s.id, s.changed_at`)
  await tx.execute(sql`insert into refunds (order_id, seller_id, amount, status, gateway)
    select h.id, h.seller_id, h.amount, 'SUCCEEDED', 'manual' from ${h}
    where h.status = 'ORDER_REJECTED_BY_SELLER' and h.payment = 'ONLINE_PAID'`)
  await tx.execute(sql`update payout_schedules p set
      status = case when h.status = 'ORDER_COMPLETED_BY_SELLER' then 'SCHEDULED' else 'CANCELLED' end::payout_status,
      scheduled_for = case when h.status = 'ORDER_COMPLETED_BY_SELLER' then (h.updated_at + interval '7 days')::date end
    from ${h} where p.order_id = h.id and h.status in ('ORDER_COMPLETED_BY_SELLER', 'ORDER_REJECTED_BY_SELLER', 'CANCELLED')`)
}

/** Orders (and their history) are placed and written in chunks of the API's own batch size. */
const ORDER_BATCH = MAX_PLATFORM_ROWS
/** Batches placed at once by the seed (the database pool has more connections than this). */
const SEED_BATCHES_IN_FLIGHT = 3

/**
 * The demo data, built through the services the platform routes call (upsertSellers, addPoints,
 * upsertRetailers, upsertCatalogue, upsertDeals, placeOrders): the seed is the marketplace's first client,
 * and its data passes the same checks. What the API cannot express is written straight into the tables,
 * each place saying why.
 */
export async function seed (database: Database, options: SeedOptions): Promise<SeedSummary> {
  const log = options.log ?? (() => {})
  const rnd = new Random(options.seed)
  const anchorMs = options.anchor.getTime()
  // The day of the last orders before the anchor: deal lines are placed on their deal's day.
  const dealDate = new Date(anchorMs - 1).toISOString().slice(0, 10)
  const db = database.db
  // One seed at a time: ids are assigned here from max(id). A session lock, because the services commit
  // batch by batch.
  return withSessionLock(database.url, 7240112032, async () => {
    const ids = await nextIds(db)
    const { rows, sellerData } = planSellers(rnd, ids, options.orders, dealDate)
    const sellerRows = rows.sellers.map((s) => ({
      companyId: s.id,
      name: s.name,
      status: s.status === 'active' ? 'ACTIVE' : 'SUSPENDED',
      takeRate: s.takeRate,
      autoRejectEnabled: s.autoRejectEnabled,
      stores: rows.stores.filter((st) => st.sellerId === s.id).map((st) => ({ id: st.id, name: st.name }))
    }))
    allAccepted('sellers', await upsertSellers(db, sellerRows))
    allAccepted('points', await addPoints(db, rows.ledger.map((l) => ({ companyId: l.sellerId, amount: l.amount, reference: 'DEMO-OPENING' }))))
    for (let i = 0; i < rows.retailers.length; i += ORDER_BATCH) {
      allAccepted('retailers', await upsertRetailers(db, rows.retailers.slice(i, i + ORDER_BATCH)))
    }
    const catalogue = rows.items.map((item) => ({
      id: item.id,
      companyId: item.sellerId,
      itemName: item.itemName,
      skus: rows.skus.filter((k) => k.itemId === item.id).map((k) => ({
        id: k.id,
        skuNickName: k.skuNickName,
        images: k.images,
        tags: k.tags,
        itemSellingUnits: rows.units.filter((u) => u.skuId === k.id)
          .map((u) => ({ id: u.id, name: u.name, multiplier: u.multiplier, isBaseUnit: u.isBaseUnit })),
        offers: rows.offers.filter((o) => o.skuId === k.id).map((o) => ({
          id: o.id,
          purchasePrice: o.purchasePrice,
          mrpPriceAmount: o.mrpPriceAmount,
          finalPriceWithTax: o.finalPriceWithTax,
          currency: o.currency,
          priceRange: o.priceRange
        }))
      }))
    }))
    for (let i = 0; i < catalogue.length; i += ORDER_BATCH) {
      allAccepted('catalogue', await upsertCatalogue(db, catalogue.slice(i, i + ORDER_BATCH)))
    }
    const deals = rows.deals.map((d) => ({
      id: d.id,
      companyId: d.sellerId,
      offerId: d.offerId,
      dealDate: d.dealDate,
      dealPrice: d.dealPrice,
      maxQuantity: d.maxQuantity
    }))
    allAccepted('deals', await upsertDeals(db, deals))
    // Sync IDs are the seller's own (docs/api/references.md): no platform route sets them. The demo's sellers have
    // synced most of their buyers and their whole catalogue.
    await db.transaction((tx) => writeSyncIds(tx, rows))
    log(`catalogue: ${rows.sellers.length} sellers, ${rows.retailers.length} retailers, ${rows.offers.length} offers`)

    const firstOrderId = ids.orders
    let orderItemsTotal = 0
    let chunk: SeededOrder[] = []
    const place = async (orders: SeededOrder[]): Promise<void> => {
      // Placed without an auto-rejection job: most of these orders left ORDER_PLACED long ago; the ones
      // still placed get theirs below, with their clock starting now.
      const placed = await placeOrders(db, orders.map((o) => o.row),
        { credentialId: null, autoRejectAfterMs: 0, seed: true })
      allAccepted('orders', placed)
      await db.transaction((tx) => writeHistory(tx, orders))
      orderItemsTotal += orders.reduce((n, o) => n + o.row.orderItems.length, 0)
    }
    // A few batches in flight, as a marketplace with several connections sends them: while PostgreSQL
    // writes one, Node generates and checks the next (the two would otherwise take turns on the CPUs).
    const inFlight = new Pipeline(SEED_BATCHES_IN_FLIGHT)
    for (const sd of sellerData) {
      for (let n = 0; n < sd.orderCount; n++) {
        chunk.push(generateOrder(rnd, ids, sd, anchorMs, dealDate))
        if (chunk.length >= ORDER_BATCH) {
          await inFlight.add(place(chunk))
          chunk = []
        }
      }
    }
    if (chunk.length > 0) await inFlight.add(place(chunk))
    await inFlight.drain()

    await db.transaction(async (tx) => {
      // Historical rejections and cancellations gave their deal quantity back long ago.
      await tx.execute(sql`update daily_deals d set grabbed_quantity = coalesce((
          select sum(l.quantity) from order_items l join orders o on o.id = l.order_id
          where l.deal_id = d.id and o.status not in ('ORDER_REJECTED_BY_SELLER', 'CANCELLED')), 0)
        where d.id >= ${ids.dailyDeals - rows.deals.length}::int`)
      const autoRejections = await scheduleAutoRejections(tx, { fromId: firstOrderId }, options.autoRejectAfterMs ?? 24 * 60 * 60 * 1000, 'from-now')
      log(`auto-rejection jobs scheduled: ${autoRejections}`)
      // Ids were assigned here: move every sequence past them.
      for (const table of Object.values(TABLES)) {
        await tx.execute(sql`select setval(pg_get_serial_sequence(${getTableName(table)}, 'id'), greatest((select coalesce(max(id), 0) from ${table}), 1))`)
      }
    })
    // A bulk load: the planner has no statistics for the tables it filled until they are analyzed, and
    // autovacuum may not have run yet (src/db/analyze.ts).
    await analyzeTables(db, [...Object.values(TABLES), sellerRetailers, sellerShops].map((table) => `"${getTableName(table)}"`))
    log(`orders: ${options.orders}, order items: ${orderItemsTotal}`)
    const summaries: SellerSummary[] = sellerData.map((sd) => ({
      companyId: sd.sellerId,
      name: sd.plan.name,
      status: sd.plan.status,
      pointsBalance: paise(sd.plan.pointsPaise),
      takeRate: sd.plan.takeRate,
      storeIds: sd.storeIds,
      orderCount: sd.orderCount
    }))
    return { sellers: summaries, orders: options.orders, orderItems: orderItemsTotal }
  })
}

async function writeSyncIds (tx: Tx, rows: {
  retailerLinks: Array<{ sellerId: number, retailerId: number, syncId: string | null }>
  shopLinks: Array<{ sellerId: number, shopId: number, syncId: string }>
  items: Array<{ id?: number, itemSyncId?: string | null }>
  offers: Array<{ id?: number, offerSyncId?: string | null }>
}): Promise<void> {
  await tx.execute(sql`update seller_retailers l set sync_id = v."syncId"
    from json_to_recordset(${JSON.stringify(rows.retailerLinks)}::json) as v("sellerId" int, "retailerId" int, "syncId" text)
    where l.seller_id = v."sellerId" and l.retailer_id = v."retailerId"`)
  await tx.execute(sql`update seller_shops l set sync_id = v."syncId"
    from json_to_recordset(${JSON.stringify(rows.shopLinks)}::json) as v("sellerId" int, "shopId" int, "syncId" text)
    where l.seller_id = v."sellerId" and l.shop_id = v."shopId"`)
  await tx.execute(sql`update items i set item_sync_id = v."itemSyncId"
    from json_to_recordset(${JSON.stringify(rows.items)}::json) as v(id int, "itemSyncId" text) where i.id = v.id`)
  await tx.execute(sql`update offers o set offer_sync_id = v."offerSyncId"
    from json_to_recordset(${JSON.stringify(rows.offers)}::json) as v(id int, "offerSyncId" text) where o.id = v.id`)
}

/** True when the database holds no seller yet (start-up seeds demo data only then). */
export async function isEmpty (tx: Tx): Promise<boolean> {
  const [row] = await tx.execute<{ empty: boolean }>(sql`select not exists (select 1 from sellers) as empty`)
  return row.empty
}
