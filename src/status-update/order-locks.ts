import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { isLockTimeout } from '../db/unavailable.js'
import type { OrderStatus, PaymentMode, SellerStatus } from '../db/schema.js'

/*
 * The rows a status change decides on, read under row locks so two batches never decide on the same
 * state. Lock order is always: seller, then orders by ascending id, then daily deals by ascending id;
 * with one order everywhere, racing batches queue instead of deadlocking.
 *
 * FOR NO KEY UPDATE rather than FOR UPDATE: it blocks every other writer of the row just the same, but
 * not the FOR KEY SHARE locks that foreign-key checks take (inserting a history row, ledger entry or
 * notification that references the order or seller). With FOR UPDATE, a batch holding the seller would
 * deadlock against a rejection batch that holds the orders and inserts rows pointing at the seller.
 */

export interface LockedSeller {
  id: number
  status: SellerStatus
  pointsBalance: string
  takeRate: string
}

export interface LockedOrder {
  id: number
  storeId: number
  status: OrderStatus
  paymentMode: PaymentMode
  orderTotalFinal: string
  currencyCode: string
  /** The ledger amount of its acceptance (negative), null when never accepted: a cancellation gives it back. */
  acceptancePoints: string | null
}

export async function lockSeller (tx: Tx, sellerId: number): Promise<LockedSeller | undefined> {
  const rows = await tx.execute<{ id: number, status: SellerStatus, points_balance: string, take_rate: string }>(sql`
    select id, status, points_balance, take_rate from sellers where id = ${sellerId} for no key update`)
  const row = rows[0]
  return row && { id: row.id, status: row.status, pointsBalance: row.points_balance, takeRate: row.take_rate }
}

/** The orders locked, and those held by another transaction for longer than the session's lock_timeout. */
export interface LockedOrders {
  orders: Map<number, LockedOrder>
  /** Orders that exist but could not be locked in time: each is that order's storage failure alone. */
  busy: Set<number>
}

/** A lock the session's lock_timeout gave up on. */
export class OrderLockTimeout extends Error {
  override name = 'OrderLockTimeout'
  constructor (readonly orderId: number) {
    super(`order ${orderId} is locked by another transaction for longer than lock_timeout`)
  }
}

/**
 * The seller's live orders among these ids, locked in id order. Another seller's order and a
 * soft-deleted one are simply absent: the caller reports both as not found, so nothing leaks.
 *
 * Racing batches queue on each other's orders as before; but should one order stay locked longer than
 * the session's lock_timeout (a stuck transaction elsewhere), the wait is given up in a savepoint and the
 * orders are locked again without waiting (SKIP LOCKED): the ones still held are reported `busy`, so
 * they alone fail and the rest of the batch goes on.
 */
export async function lockOrders (tx: Tx, sellerId: number, orderIds: number[]): Promise<LockedOrders> {
  const ids = [...new Set(orderIds)].sort((a, b) => a - b)
  const found = new Map<number, LockedOrder>()
  const busy = new Set<number>()
  if (ids.length === 0) return { orders: found, busy }
  const idArray = `{${ids.join(',')}}`
  const select = (wait: boolean) => sql`
    select o.id, o.store_id, o.status, o.payment_mode, o.order_total_final, o.currency_code,
           (select pl.amount from points_ledger pl
            where pl.order_id = o.id and pl.kind = 'ORDER_ACCEPTANCE') as acceptance_points
    from orders o
    where o.id = any(${idArray}::bigint[]) and o.seller_id = ${sellerId} and not o.is_deleted
    order by o.id
    for no key update of o ${wait ? sql`` : sql`skip locked`}`
  type Row = {
    id: string,
    store_id: number,
    status: OrderStatus,
    payment_mode: LockedOrder['paymentMode'],
    order_total_final: string,
    currency_code: string,
    acceptance_points: string | null
  }
  let rows: Row[]
  try {
    rows = await tx.transaction((savepoint) => savepoint.execute<Row>(select(true)))
  } catch (err) {
    if (!isLockTimeout(err)) throw err
    rows = await tx.execute<Row>(select(false))
    const live = await tx.execute<{ id: string }>(sql`
      select id from orders where id = any(${idArray}::bigint[]) and seller_id = ${sellerId} and not is_deleted`)
    const locked = new Set(rows.map((r) => Number(r.id)))
    for (const { id } of live) if (!locked.has(Number(id))) busy.add(Number(id))
  }
  for (const row of rows) {
    const id = Number(row.id)
    found.set(id, {
      id,
      storeId: row.store_id,
      status: row.status,
      paymentMode: row.payment_mode,
      orderTotalFinal: row.order_total_final,
      currencyCode: row.currency_code,
      acceptancePoints: row.acceptance_points
    })
  }
  return { orders: found, busy }
}

/**
 * Locks the daily deals that rejecting these orders would give quantity back to, in id order. A batch
 * that changes its orders one by one takes them all up front, so two batches sharing deals never hold
 * one each while waiting for the other.
 */
export async function lockDailyDeals (tx: Tx, orderIds: number[]): Promise<void> {
  if (orderIds.length === 0) return
  await tx.execute(sql`
    select d.id from daily_deals d
    where d.id in (select oi.deal_id from order_items oi
                   where oi.order_id = any(${`{${orderIds.join(',')}}`}::bigint[]) and oi.deal_id is not null)
    order by d.id
    for no key update`)
}
