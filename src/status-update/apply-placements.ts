import { sql, type SQL } from 'drizzle-orm'
import { advanceSequence } from '../db/advance-sequence.js'
import type { Tx } from '../db/client.js'
import { scheduleAutoRejections } from '../effects/enqueue.js'
import type { PaymentMode } from '../db/schema.js'
import { PLACED } from './state-machine.js'

/*
 * Placement: the one way into the state machine (state-machine.ts PLACED), written as the status update
 * writes a change (apply-changes.ts): a fixed number of set-based statements whatever the number of
 * orders, on the caller's transaction, so an order and every effect of placing it commit together or not
 * at all. The order's own row is the once-only record of placement: its id is the marketplace's orderId
 * (the primary key), so no order, history entry, deal grab or notification can be made twice.
 *
 * The caller holds the daily deals' row locks (read FOR NO KEY UPDATE in id order, as the status update
 * locks them) and has decided every placement against them.
 */

/** An order as the marketplace places it (docs/platform/orders.md), its amounts as decimal texts. */
export interface PlacedOrder {
  orderId: number
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
  /** ISO-8601 with an offset: the order's createdAt. */
  placedAt: string
}

/** A line with what its offer (or deal) gives it. */
export interface PlacedLine {
  id: number
  offerId: number
  dealId: number | null
  quantity: string
  itemId: number
  skuId: number
  unitPrice: string
}

export interface Placement {
  row: PlacedOrder
  /** The retailer's name when the order is placed (orders.retailer_name). */
  retailerName: string
  lines: PlacedLine[]
}

/** Who places: the platform key's credential, recorded in the history as every change's credential is. */
export interface Placer { credentialId: number | null, source: 'platform' | 'seed' }

const json = (rows: unknown[]): SQL => sql`${JSON.stringify(rows)}::json`

export async function applyPlacements (
  tx: Tx, placements: Placement[], placer: Placer, autoRejectAfterMs: number
): Promise<void> {
  if (placements.length === 0) return
  // Inserted in id order: two batches racing on the same ids wait on each other in one order.
  const sorted = [...placements].sort((a, b) => a.row.orderId - b.row.orderId)
  const ids = sorted.map((p) => p.row.orderId)
  // The lines and history reference the orders: the orders go first, the rest are pipelined behind.
  await insertOrders(tx, sorted, placer)
  const writes: Array<Promise<unknown>> = [
    insertLines(tx, sorted),
    insertHistory(tx, sorted, placer),
    grabDeals(tx, sorted),
    holdPayouts(tx, sorted.filter((p) => p.row.paymentMode === 'PREPAID')),
    // The seller's clock starts when the order reaches it: an order imported with an old placedAt is not
    // rejected at once for having waited before it existed here.
    scheduleAutoRejections(tx, { ids }, autoRejectAfterMs, 'from-now'),
    // The ids are the marketplace's; an order made without one (the demo seed) must never draw one of them.
    advanceSequence(tx, 'orders'),
    advanceSequence(tx, 'order_items')
  ]
  const results = await Promise.allSettled(writes)
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) throw failed.reason
}

async function insertOrders (tx: Tx, placements: Placement[], placer: Placer): Promise<void> {
  const rows = placements.map(({ row, retailerName, lines }) => ({
    id: row.orderId,
    seller_id: row.companyId,
    store_id: row.storeId,
    retailer_id: row.retailerId,
    shop_id: row.shopId,
    order_number: row.orderNumber,
    service_order_number: row.serviceOrderNumber,
    delivery_type: row.deliveryType,
    retailer_name: retailerName,
    currency_code: row.currencyCode,
    order_total: row.orderTotal,
    order_total_final: row.orderTotalFinal,
    order_tax_amount: row.orderTaxAmount,
    order_cess_amount: row.orderCessAmount,
    applied_points: row.appliedPoints,
    total_extra_charges: row.totalExtraCharges,
    round_off: row.roundOff,
    total_items_in_order: lines.length,
    payment_mode: row.paymentMode,
    created_at: row.placedAt
  }))
  await tx.execute(sql`
    insert into orders (id, seller_id, store_id, retailer_id, shop_id, order_number, service_order_number, status,
      delivery_type, retailer_name, is_actionable, currency_code, order_total, order_total_final, order_tax_amount,
      order_cess_amount, applied_points, total_extra_charges, round_off, total_items_in_order, payment_mode, created_at,
      updated_at)
    select o.id, o.seller_id, o.store_id, o.retailer_id, o.shop_id, o.order_number, o.service_order_number,
      ${PLACED}::order_status, o.delivery_type, o.retailer_name, true, o.currency_code, o.order_total,
      o.order_total_final, o.order_tax_amount, o.order_cess_amount, o.applied_points, o.total_extra_charges,
      o.round_off, o.total_items_in_order, o.payment_mode::payment_mode, o.created_at,
      -- The seed's orders are history: one still placed was last updated when it was placed.
      ${placer.source === 'seed' ? sql`o.created_at` : sql`now()`}
    from json_to_recordset(${json(rows)}) as o(id bigint, seller_id int, store_id int, retailer_id int, shop_id int,
      order_number text, service_order_number text, delivery_type text, retailer_name text, currency_code text,
      order_total numeric, order_total_final numeric, order_tax_amount numeric, order_cess_amount numeric,
      applied_points numeric, total_extra_charges numeric, round_off numeric, total_items_in_order int,
      payment_mode text, created_at timestamptz)
    order by o.id`)
}

async function insertLines (tx: Tx, placements: Placement[]): Promise<void> {
  const rows = placements.flatMap(({ row, lines }) => lines.map((l) => ({
    id: l.id,
    order_id: row.orderId,
    item_id: l.itemId,
    sku_id: l.skuId,
    offer_id: l.offerId,
    deal_id: l.dealId,
    quantity: l.quantity,
    unit_price: l.unitPrice
  })))
  await tx.execute(sql`
    insert into order_items (id, order_id, item_id, sku_id, offer_id, deal_id, quantity, unit_price)
    select l.id, l.order_id, l.item_id, l.sku_id, l.offer_id, l.deal_id, l.quantity, l.unit_price
    from json_to_recordset(${json(rows)}) as l(id bigint, order_id bigint, item_id int, sku_id int, offer_id int,
      deal_id int, quantity numeric, unit_price numeric)
    order by l.id`)
}

async function insertHistory (tx: Tx, placements: Placement[], placer: Placer): Promise<void> {
  if (placer.source === 'seed') {
    // The seed's orders are history: each was placed at its placedAt, not when the seed ran (the seed's
    // later steps follow it in time, src/seed/seed.ts writeHistory).
    const rows = placements.map(({ row }) => ({ id: row.orderId, placed_at: row.placedAt }))
    await tx.execute(sql`
      insert into order_status_history (order_id, from_status, to_status, credential_id, source, changed_at)
      select h.id, null, ${PLACED}::order_status, ${placer.credentialId}::int, ${placer.source}::change_source, h.placed_at
      from json_to_recordset(${json(rows)}) as h(id bigint, placed_at timestamptz)`)
    return
  }
  const ids = placements.map((p) => p.row.orderId)
  await tx.execute(sql`
    insert into order_status_history (order_id, from_status, to_status, credential_id, source)
    select id, null, ${PLACED}::order_status, ${placer.credentialId}::int, ${placer.source}::change_source
    from unnest(${sql.param(ids)}::bigint[]) as id`)
}

/** Each deal's grabbed quantity moved by the sum of the batch's lines on it, in deal id order. */
async function grabDeals (tx: Tx, placements: Placement[]): Promise<void> {
  const rows = placements.flatMap(({ lines }) => lines.filter((l) => l.dealId !== null)
    .map((l) => ({ deal_id: l.dealId, quantity: l.quantity })))
  if (rows.length === 0) return
  await tx.execute(sql`
    update daily_deals d set grabbed_quantity = d.grabbed_quantity + g.quantity, updated_at = now()
    from (select deal_id, sum(quantity) as quantity
          from json_to_recordset(${json(rows)}) as l(deal_id int, quantity numeric) group by deal_id) g
    where d.id = g.deal_id`)
}

/** What the platform owes the seller for a prepaid order, held until the seller completes it. */
async function holdPayouts (tx: Tx, prepaid: Placement[]): Promise<void> {
  if (prepaid.length === 0) return
  const rows = prepaid.map(({ row }) =>
    ({ order_id: row.orderId, seller_id: row.companyId, amount: row.orderTotalFinal }))
  await tx.execute(sql`
    insert into payout_schedules (order_id, seller_id, amount)
    select p.order_id, p.seller_id, p.amount from json_to_recordset(${json(rows)}) as p(order_id bigint, seller_id int, amount numeric)`)
}
