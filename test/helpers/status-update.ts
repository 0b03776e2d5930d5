// Orders, requests and expected answers for the status-update tests.
import type { FastifyInstance } from 'fastify'
import type { TestDatabase as Database } from './build.js'
import {
  dailyDeals, items, offers, orderItems, orders, payoutSchedules, retailers, sellerRetailers, skus, type OrderStatus
} from '../../src/db/schema.js'
import { autoRejectJobKey, TASKS } from '../../src/effects/jobs.js'
import { addJob } from './jobs.js'
import { createSeller, credential } from './fixtures.js'
import type { ItemError } from '../../src/item-error.js'
import type { OrderError } from '../../src/status-update/schemas.js'

/*
 * Orders with exactly the attributes a status-update test needs (status, payment mode, total, a daily
 * deal line), for a seller made by the shared fixtures.
 */

export const URL = '/v2/accounting/orders/update-status'

export type PaymentMode = 'ONLINE_PAID' | 'PREPAID' | 'CASH_ON_DELIVERY'

export interface OrderSpec {
  status?: OrderStatus
  paymentMode?: PaymentMode
  /** orderTotalFinal, as a decimal string. */
  total?: string
  /** Quantity on a daily-deal line (the deal's grabbed quantity includes it); 0 = no deal line. */
  dealQuantity?: number
  storeIndex?: number
  deleted?: boolean
  /** Schedule the order's auto-rejection job (placed orders of a seller with auto-rejection on). */
  autoRejectJob?: boolean
}

export interface Shop {
  sellerId: number
  storeIds: number[]
  dealId: number
  retailer: { whatsapp: string | null, phone: string | null }
  order: (spec?: OrderSpec) => Promise<number>
  orders: (count: number, spec?: OrderSpec) => Promise<number[]>
  apiKey: (options?: { storeIds?: number[] }) => Promise<string>
}

export async function createShop (database: Database, seller: { pointsBalance?: string, takeRate?: string, status?: 'active' | 'suspended' } = {},
  retailer: { whatsapp?: string | null, phone?: string | null } = {}): Promise<Shop> {
  const { sellerId, storeIds } = await createSeller(database, { pointsBalance: seller.pointsBalance ?? '1000.00', takeRate: seller.takeRate ?? '0.0200', status: seller.status ?? 'active' })
  const points = seller.pointsBalance ?? '1000.00'
  // The opening balance is a ledger entry too, so the ledger sums to the balance at all times.
  await database.sql`insert into points_ledger (seller_id, kind, amount, balance_after) values (${sellerId}, 'TOP_UP', ${points}, ${points})`
  const contact = { whatsapp: retailer.whatsapp === undefined ? '+919800000001' : retailer.whatsapp, phone: retailer.phone === undefined ? '+919800000002' : retailer.phone }
  const [r] = await database.db.insert(retailers).values({ name: 'Asha Rao', ...contact }).returning({ id: retailers.id })
  await database.db.insert(sellerRetailers).values({ sellerId, retailerId: r.id })
  const [item] = await database.db.insert(items).values({ sellerId, itemName: 'Tea 1kg' }).returning({ id: items.id })
  const [sku] = await database.db.insert(skus).values({ sellerId, itemId: item.id, skuNickName: 'Tea' }).returning({ id: skus.id })
  const [offer] = await database.db.insert(offers).values({
    sellerId, skuId: sku.id, purchasePrice: '80.00', mrpPriceAmount: '120.00', finalPriceWithTax: '100.00'
  }).returning({ id: offers.id })
  const [deal] = await database.db.insert(dailyDeals).values({
    sellerId, offerId: offer.id, dealDate: '2026-11-01', dealPrice: '90.00', maxQuantity: '1000', grabbedQuantity: '0'
  }).returning({ id: dailyDeals.id })
  let n = 0

  const order = async (spec: OrderSpec = {}): Promise<number> => {
    const status = spec.status ?? 'ORDER_PLACED'
    const paymentMode = spec.paymentMode ?? 'CASH_ON_DELIVERY'
    const total = spec.total ?? '100.00'
    n++
    const [row] = await database.db.insert(orders).values({
      sellerId,
      storeId: storeIds[spec.storeIndex ?? 0],
      retailerId: r.id,
      orderNumber: `T-${sellerId}-${n}-${Math.random().toString(36).slice(2, 8)}`,
      serviceOrderNumber: `OXT${n}`,
      status,
      retailerName: 'Asha Rao',
      orderTotal: total,
      orderTotalFinal: total,
      totalItemsInOrder: 1,
      paymentMode,
      isDeleted: spec.deleted ?? false
    }).returning({ id: orders.id })
    await database.db.insert(orderItems).values({ orderId: row.id, itemId: item.id, skuId: sku.id, offerId: offer.id, quantity: '2', unitPrice: '50.00' })
    if (spec.dealQuantity) {
      await database.db.insert(orderItems).values({ orderId: row.id, itemId: item.id, skuId: sku.id, offerId: offer.id, dealId: deal.id, quantity: String(spec.dealQuantity), unitPrice: '45.00' })
      await database.sql`update daily_deals set grabbed_quantity = grabbed_quantity + ${spec.dealQuantity} where id = ${deal.id}`
    }
    if (paymentMode === 'PREPAID') {
      await database.db.insert(payoutSchedules).values({ orderId: row.id, sellerId, amount: total, status: 'ON_HOLD' })
    }
    if (spec.autoRejectJob) {
      await addJob(database.db, TASKS.autoReject, { orderId: row.id }, {
        jobKey: autoRejectJobKey(row.id),
        runAt: new Date(Date.now() + 86_400_000)
      })
    }
    return row.id
  }

  return {
    sellerId,
    storeIds,
    dealId: deal.id,
    retailer: contact,
    order,
    orders: async (count, spec) => {
      const ids: number[] = []
      for (let i = 0; i < count; i++) ids.push(await order(spec))
      return ids
    },
    apiKey: (options = {}) => credential(database, sellerId, 'api-key', options)
  }
}

export interface Item { Order_id?: unknown, Order_Status?: unknown, reason?: unknown }

export async function post (app: FastifyInstance, key: string, body: unknown) {
  const res = await app.inject({
    method: 'POST',
    url: URL,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  return { statusCode: res.statusCode, body: res.json() }
}

export const accept = (id: unknown): Item => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })
export const reject = (id: unknown, reason: unknown = 'Out of stock'): Item => ({ Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason })
export const complete = (id: unknown): Item => ({ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' })

/** The 200 envelope of a batch; `unchanged` lists the orders that already had the asked status. */
export function ok (successful: number, errors: OrderError[] = [], unchanged: number[] = []) {
  return { error: false, status: true, statusCode: 200, message: 'Order statuses updated successfully', data: { successful, failed: errors.length, errors, unchangedOrderIds: unchanged } }
}

/** A per-order error as the service reports it: the item's index in order_status, its order, text and code. */
export function failed (index: number, orderId: number | null, { code, text }: ItemError): OrderError {
  return { index, orderId, error: text, code }
}

/** Every queued graphile-worker job, with its payload (the public jobs view leaves payloads out). */
export async function queuedJobs (
  database: Database
): Promise<Array<{ task: string, key: string | null, payload: Record<string, unknown> }>> {
  const rows = await database.sql`select t.identifier, j.key, j.payload from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`
  return rows.map((r) => ({
    task: r.identifier as string,
    key: r.key as string | null,
    payload: r.payload as Record<string, unknown>
  }))
}

export async function orderStatus (database: Database, id: number): Promise<string> {
  const [row] = await database.sql`select status from orders where id = ${id}`
  return row.status as string
}

export async function sellerPoints (database: Database, sellerId: number): Promise<string> {
  const [row] = await database.sql`select points_balance from sellers where id = ${sellerId}`
  return row.points_balance as string
}
