// The finance routes' test setup: the demo data's orders with refunds and payouts of known states.
import type { Test } from 'tap'
import { build } from './build.js'
import { credential, platformKey, seedDemo } from './fixtures.js'

export interface MoneyOrder { id: string, sellerId: number }

/** The app on the demo data, its refunds and payouts removed so each test writes the ones it reads. */
export async function setupMoney (t: Test, orders = 60) {
  const ctx = await build(t)
  await seedDemo(ctx.database, orders)
  const { database } = ctx
  await database.sql`delete from refunds`
  await database.sql`delete from payout_schedules`
  const key = await platformKey(database)
  const all: MoneyOrder[] = (await database.sql<Array<{ id: string, sellerId: number }>>`
    select id::text as id, seller_id as "sellerId" from orders order by id`).map((r) => ({ ...r }))
  const sellerKey = await credential(database, all[0].sellerId, 'api-key')
  const get = (url: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...headers } })
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body)
    })
  /** A refund of the order at `index`, returning its id. */
  const refund = async (index: number, status = 'MANUAL', amount = '100.00', createdAt: string | null = null): Promise<string> => {
    const order = all[index]
    const [row] = await database.sql`insert into refunds (order_id, seller_id, amount, status, created_at)
      values (${order.id}, ${order.sellerId}, ${amount}, ${status}, coalesce(${createdAt}::timestamptz, now())) returning id::text as id`
    return row.id as string
  }
  const payout = async (index: number, status = 'SCHEDULED', amount = '500.00'): Promise<string> => {
    const order = all[index]
    const [row] = await database.sql`insert into payout_schedules (order_id, seller_id, amount, status, scheduled_for)
      values (${order.id}, ${order.sellerId}, ${amount}, ${status}, '2026-12-05') returning id::text as id`
    return row.id as string
  }
  return { ...ctx, key, sellerKey, orders: all, get, post, refund, payout }
}
