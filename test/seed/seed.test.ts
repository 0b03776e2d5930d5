import t from 'tap'
import type { TestDatabase as Database } from '../helpers/build.js'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { brokenHistories } from '../helpers/history.js'
import { isEmpty, paise } from '../../src/seed/seed.js'

/** A digest of everything the seed decides (not the clock-given created_at of catalogue rows). */
async function digest (database: Database): Promise<string> {
  const [row] = await database.sql`
    select md5(concat_ws('|',
      (select string_agg(concat_ws(',', id, name, status, points_balance, take_rate), ';' order by id) from sellers),
      (select string_agg(concat_ws(',', id, name, phone, whatsapp), ';' order by id) from retailers),
      (select string_agg(concat_ws(',', id, retailer_id, shop_name), ';' order by id) from shops),
      (select string_agg(concat_ws(',', seller_id, retailer_id, sync_id), ';' order by seller_id, retailer_id)
        from seller_retailers),
      (select string_agg(concat_ws(',', seller_id, shop_id, sync_id), ';' order by seller_id, shop_id) from seller_shops),
      (select string_agg(concat_ws(',', id, offer_sync_id, final_price_with_tax, price_range::text), ';' order by id) from offers),
      (select string_agg(concat_ws(',', id, seller_id, store_id, retailer_id, shop_id, status, payment_mode, order_total,
         order_total_final, order_tax_amount, order_cess_amount, round_off, is_deleted, created_at), ';' order by id) from orders),
      (select string_agg(concat_ws(',', id, order_id, offer_id, deal_id, quantity, unit_price), ';' order by id) from order_items),
      (select string_agg(concat_ws(',', id, grabbed_quantity), ';' order by id) from daily_deals)
    )) as digest`
  return row.digest as string
}

t.test('same seed gives the same data; another seed does not', async (t) => {
  const a = await testDatabase(t); const b = await testDatabase(t); const c = await testDatabase(t)
  t.ok(await isEmpty(a.db))
  await seedDemo(a, 200, 42); await seedDemo(b, 200, 42); await seedDemo(c, 200, 43)
  t.notOk(await isEmpty(a.db))
  t.equal(await digest(a), await digest(b))
  t.not(await digest(a), await digest(c))
  // A second seed on a database that holds one already appends after its ids.
  await seedDemo(a, 50, 44)
  for (const database of [a, c]) {
    const check = await brokenHistories(database.sql)
    t.ok(check.orders > 0)
    t.equal(check.broken, 0, `every seeded order's history is a chain from null to its status, in time: ${JSON.stringify(check.examples)}`)
  }
})

t.test('the demo data covers every case the endpoints care about', async (t) => {
  const database = await testDatabase(t)
  const summary = await seedDemo(database, 400)
  const { sql } = database
  t.same(summary.sellers.map((s) => s.status), ['active', 'active', 'suspended'])
  const [rich, poor] = summary.sellers

  const [cheapest] = await sql`select min(order_total_final) as m from orders where seller_id = ${poor.companyId}`
  t.ok(Number(cheapest.m) * Number(poor.takeRate) > Number(poor.pointsBalance), 'the poor seller cannot afford any of its orders')
  t.ok(Number(rich.pointsBalance) > 1_000_000, 'the rich seller can')

  const statuses = (await sql`select distinct status from orders order by 1`).map((r) => r.status)
  t.same(statuses.sort(), ['CANCELLED', 'DELIVERED', 'ORDER_ACCEPTED', 'ORDER_COMPLETED_BY_SELLER', 'ORDER_PLACED', 'ORDER_REJECTED_BY_SELLER'])
  const modes = (await sql`select distinct payment_mode from orders`).map((r) => r.payment_mode)
  t.same(modes.sort(), ['CASH_ON_DELIVERY', 'ONLINE_PAID', 'PREPAID'])

  const [counts] = await sql`select
    (select count(*) from order_items where deal_id is not null)::int as deal_lines,
    (select count(*) from seller_retailers where sync_id is null)::int as retailers_without_sync,
    (select count(*) from seller_retailers where sync_id is not null)::int as retailers_with_sync,
    (select count(*) from orders where shop_id is null)::int as orders_without_shop,
    (select count(*) from orders where shop_id is not null)::int as orders_with_shop,
    (select count(*) from orders where currency_code <> 'INR')::int as non_inr,
    (select count(*) from orders where order_cess_amount > 0)::int as with_cess,
    (select count(*) from orders where order_tax_amount > 0)::int as with_tax,
    (select count(*) from orders o where total_items_in_order <> (select count(*) from order_items i where i.order_id = o.id))::int as bad_item_counts,
    (select count(*) from order_items i join offers f on f.id = i.offer_id left join daily_deals d on d.id = i.deal_id
      where i.unit_price <> coalesce(d.deal_price, f.final_price_with_tax))::int as bad_prices,
    (select count(*) from payout_schedules)::int as payouts,
    (select count(*) from orders where payment_mode = 'PREPAID')::int as prepaid,
    (select count(*) from refunds)::int as refunds,
    (select coalesce(sum(amount), 0) from points_ledger where seller_id = ${rich.companyId}) as ledger_sum,
    (select points_balance from sellers where id = ${rich.companyId}) as balance`
  t.ok(counts.deal_lines > 0, 'items under daily deals')
  t.ok(counts.retailers_without_sync > 0 && counts.retailers_with_sync > 0, 'retailers with and without syncId')
  t.ok(counts.orders_without_shop > 0 && counts.orders_with_shop > 0, 'orders with and without a shop')
  t.equal(counts.non_inr, 0)
  t.ok(counts.with_cess > 0 && counts.with_tax > 0, 'GST and cess')
  t.equal(counts.bad_item_counts, 0, 'totalItemsInOrder matches the items')
  t.equal(counts.bad_prices, 0, 'a line\'s price is its offer\'s, or its deal\'s (placement sets it)')
  t.equal(counts.payouts, counts.prepaid, 'a payout schedule for every prepaid order')
  t.ok(counts.refunds > 0, 'refunds of online-paid rejected orders')
  t.equal(counts.ledger_sum, counts.balance, 'the ledger sums to the balance')

  const history = await brokenHistories(sql)
  t.equal(history.orders, 400)
  t.equal(history.broken, 0, `every seeded order's history is a chain from null to its status, in time: ${JSON.stringify(history.examples)}`)
  const [steps] = await sql`select count(*)::int as n from order_status_history h join orders o on o.id = h.order_id
    where o.status in ('ORDER_COMPLETED_BY_SELLER', 'DELIVERED') and h.to_status = 'ORDER_ACCEPTED'`
  t.ok(steps.n > 0, 'completed and delivered orders went through ORDER_ACCEPTED')

  const [seq] = await sql`select nextval(pg_get_serial_sequence('orders', 'id'))::int as next, (select max(id) from orders)::int as max`
  t.ok(seq.next > seq.max, 'sequences move past seeded ids')
})

t.test('paise formatting is exact', async (t) => {
  t.equal(paise(0), '0.00')
  t.equal(paise(5), '0.05')
  t.equal(paise(123456), '1234.56')
  t.equal(paise(-250), '-2.50')
})
