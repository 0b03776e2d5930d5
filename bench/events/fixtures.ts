import type postgres from 'postgres'
import { placementRow } from '../../src/platform/placement-row.js'

/*
 * The writes bench:events times, shared by the event log's part (run.ts) and the webhooks' (webhooks.ts):
 * new platform orders for one seller, and bench:status-like batches of status changes.
 */

/** Taken by order id in turn, so a run places orders of each payment mode. */
const PAYMENT_MODES = ['ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY'] as const

/**
 * A maker of the platform's new orders for `seller`: rows of POST /v2/platform/orders, from the seller's
 * own stores, linked retailers and their shops, and offers, 1–4 lines each, numbered from `firstId` on.
 */
export async function placementMaker (sql: postgres.Sql, seller: number, firstId = 90_000_000):
Promise<(n: number) => Array<Record<string, unknown>>> {
  const stores = (await sql`select id from stores where seller_id = ${seller} order by id`).map((r) => r.id as number)
  const buyers = await sql`select r.retailer_id, min(s.id) as shop_id from seller_retailers r join shops s on s.retailer_id = r.retailer_id
    where r.seller_id = ${seller} group by r.retailer_id order by r.retailer_id limit 200`
  const offers = (await sql`select id from offers where seller_id = ${seller} order by id limit 50`).map((r) => r.id as number)
  let nextId = firstId
  return (n) => Array.from({ length: n }, () => {
    const id = nextId++
    const buyer = buyers[id % buyers.length]!
    return placementRow({
      orderId: String(id),
      orderNumber: `BENCH-${id}`,
      serviceOrderNumber: `SB${id}`,
      companyId: seller,
      storeId: stores[id % stores.length],
      retailerId: buyer.retailer_id,
      shopId: buyer.shop_id,
      paymentMode: PAYMENT_MODES[id % 3],
      orderItems: Array.from({ length: 1 + (id % 4) }, (_, i) =>
        ({ id: String(id * 10 + i), offerId: offers[(id + i) % offers.length], quantity: 1 + i }))
    })
  })
}

/** The ids of the seller's orders in `status`, oldest id first. */
export async function ordersIn (sql: postgres.Sql, seller: number, status: string): Promise<number[]> {
  return (await sql`select id from orders where seller_id = ${seller} and status = ${status} and not is_deleted order by id`)
    .map((r) => Number(r.id))
}

/**
 * A maker of bench:status-like batches: a third each accepted, rejected with a reason (both taken from
 * `placed`) and completed (from `accepted`), each order used once (the lists are consumed).
 */
export function statusBatchMaker (placed: number[], accepted: number[]): (size: number) => unknown[] {
  const take = (from: number[], n: number): number[] => {
    if (from.length < n) throw new Error('not enough orders left: raise BENCH_ORDERS or lower BENCH_STATUS_BATCH')
    return from.splice(0, n)
  }
  return (size) => {
    const third = Math.floor(size / 3)
    return [
      ...take(placed, size - 2 * third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })),
      ...take(placed, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' })),
      ...take(accepted, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }))
    ]
  }
}
