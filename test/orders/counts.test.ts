import t from 'tap'
import type { TestDatabase as Database } from '../helpers/build.js'
import { OrderIdsDocument } from '../../src/graphql/generated/operations.js'
import { build } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'

/** order_counts against a real count of the live orders, per seller and store. */
async function drift (database: Database): Promise<unknown[]> {
  const rows = await database.sql`
    select coalesce(a.seller_id, c.seller_id) as seller_id, coalesce(a.store_id, c.store_id) as store_id, a.n as actual, c.live_orders as counted
    from (select seller_id, store_id, count(*)::bigint as n from orders where not is_deleted group by 1, 2) a
    full join order_counts c on c.seller_id = a.seller_id and c.store_id = a.store_id
    where coalesce(a.n, 0) <> coalesce(c.live_orders, 0)`
  return [...rows]
}

t.test('order_counts follows every insert, soft delete, store move and delete', async (t) => {
  const { app, database } = await build(t)
  const summary = await seedDemo(database, 300)
  const { sql } = database
  t.same(await drift(database), [], 'after a bulk seed')
  const [seller] = summary.sellers
  const [a, b] = seller.storeIds

  // New orders (copies of existing ones), in one statement.
  const copied = await sql`
    insert into orders (seller_id, store_id, retailer_id, shop_id, order_number, service_order_number, status, retailer_name,
      order_total, order_total_final, total_items_in_order, payment_mode)
    select seller_id, store_id, retailer_id, shop_id, order_number || '-C', service_order_number, status, retailer_name,
      order_total, order_total_final, total_items_in_order, payment_mode
    from orders where seller_id = ${seller.companyId} and not is_deleted order by id limit 25 returning id`
  t.same(await drift(database), [], 'after inserts')
  const ids = copied.map((r) => Number(r.id))

  await sql`update orders set is_deleted = true, deleted_at = now() where id = any(${ids.slice(0, 5)})`
  t.same(await drift(database), [], 'after soft deletes')
  await sql`update orders set is_deleted = false, deleted_at = null where id = ${ids[0]}`
  t.same(await drift(database), [], 'after an undelete')
  await sql`update orders set store_id = case when store_id = ${a} then ${b}::int else ${a}::int end where id = any(${ids.slice(5, 15)})`
  t.same(await drift(database), [], 'after moving orders between stores')
  await sql`update orders set status = 'ORDER_ACCEPTED' where id = any(${ids.slice(15)})`
  t.same(await drift(database), [], 'a status change changes no count')
  await sql`delete from orders where id = any(${ids.slice(1, 20)})`
  t.same(await drift(database), [], 'after deletes')
  await sql.begin(async (tx) => {
    await tx`delete from orders where id = any(${ids.slice(20)})`
    await tx`select 1/0`
  }).catch(() => {})
  t.same(await drift(database), [], 'a rolled-back change leaves the counts as they were')

  // The unfiltered total comes from the counters and equals the live orders the page walk sees.
  const token = await credential(database, seller.companyId, 'access-token')
  const narrowed = await credential(database, seller.companyId, 'access-token', { storeIds: [b] })
  const [live] = await sql`select count(*)::int as all, count(*) filter (where store_id = ${b})::int as b
    from orders where seller_id = ${seller.companyId} and not is_deleted`
  const all = await graphql(app, token, OrderIdsDocument, { input: { limit: 1 } })
  t.equal(all.body.data!.orders!.pageInfo.total, live.all)
  const onlyB = await graphql(app, narrowed, OrderIdsDocument, { input: { limit: 1 } })
  t.equal(onlyB.body.data!.orders!.pageInfo.total, live.b, 'a credential narrowed to a store counts only that store')
})
