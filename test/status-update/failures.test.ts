import { Writable } from 'node:stream'
import t from 'tap'
import pino from 'pino'
import { buildApp } from '../../src/app.js'
import type { TestDatabase as Database } from '../helpers/build.js'
import { updateOrderStatuses } from '../../src/status-update/update-batch.js'
import { updateOrderStatusesWith, type BatchStrategy } from '../../bench/status-update/strategies.js'
import { build, testConfig, testDatabase } from '../helpers/build.js'
import { notificationsOf } from '../helpers/effects.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { accept, complete, createShop, failed, ok, orderStatus, post, queuedJobs, reject } from '../helpers/status-update.js'

/* A storage failure costs one order, whichever way the batch is written; the details go to the log only. */

/** Makes every write of these orders' history fail, as a broken disk or a bad row would. */
async function breakOrder (database: Database, ...orderIds: number[]): Promise<void> {
  await database.sql.unsafe(`
    create function fail_for_order() returns trigger language plpgsql as $$
    begin
      if new.order_id in (${orderIds.join(',')}) then raise exception 'simulated storage failure for order %', new.order_id; end if;
      return new;
    end $$;
    create trigger fail_for_order before insert on order_status_history for each row execute function fail_for_order();`)
}

t.test('through HTTP: Order could not be updated for that order only, details only in the log', async (t) => {
  const database = await testDatabase(t)
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({ write (chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done() } })
  const app = await buildApp({ config: testConfig(database), database, logger: pino({ level: 'info' }, sink) })
  t.teardown(() => app.close())
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, broken, c] = await shop.orders(3, { paymentMode: 'ONLINE_PAID' })
  await breakOrder(database, broken)

  const res = await post(app, key, { order_status: [accept(a), reject(broken), reject(c)] })
  t.same(res, { statusCode: 200, body: ok(2, [failed(1, broken, OrderErrors.storageFailure)]) })
  t.equal(await orderStatus(database, a), 'ORDER_ACCEPTED')
  t.equal(await orderStatus(database, c), 'ORDER_REJECTED_BY_SELLER')
  t.equal(await orderStatus(database, broken), 'ORDER_PLACED')
  const [refunds] = await database.sql`select count(*)::int as n from refunds where order_id = ${broken}`
  t.equal(refunds.n, 0, 'none of the failed order\'s effects were kept')
  t.notOk((await queuedJobs(database)).some((j) => j.payload.orderId === broken), 'no job for it either')
  t.same(await notificationsOf(database, broken), [], 'nor any notification')
  t.equal((await notificationsOf(database, c)).length, 3, 'while the others have theirs')

  const logged = JSON.stringify(lines.filter((l) => l.level === 50))
  t.match(logged, /simulated storage failure for order/, 'the cause is logged at error level')
  t.match(logged, new RegExp(`"orderId":${broken}`), 'with the order')
  t.notMatch(JSON.stringify(res.body), /simulated/, 'and never answered')
  t.ok(lines.some((l) => l.msg === 'order statuses not updated' && JSON.stringify(l.errors).includes('Order could not be updated')), 'per-order errors are logged')
})

t.test('a large batch with a few broken orders: exactly those fail, the rest is written', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, { pointsBalance: '100000.00' })
  const key = await shop.apiKey()
  const ids = await shop.orders(60, { paymentMode: 'ONLINE_PAID' })
  const broken = [ids[0], ids[31], ids[32], ids[59]]
  await breakOrder(database, ...broken)
  const items = ids.map((id, i) => (i % 2 === 0 ? accept(id) : reject(id)))
  const res = await post(app, key, { order_status: items })
  t.same(res.body, ok(56, broken.map((orderId) => failed(ids.indexOf(orderId), orderId, OrderErrors.storageFailure))))
  const [counts] = await database.sql`select count(*) filter (where status = 'ORDER_PLACED')::int as placed,
    (select count(*) from points_ledger where kind = 'ORDER_ACCEPTANCE')::int as deductions,
    (select count(*) from refunds)::int as refunds, (select count(*) from seller_events)::int as events
    from orders where seller_id = ${shop.sellerId}`
  t.same({ ...counts }, { placed: 4, deductions: 28, refunds: 28, events: 56 })
  const notifications = await notificationsOf(database)
  t.equal(notifications.length, 56 * 3, 'three notifications per change, none for a broken order')
  const [brokenEvents] = await database.sql`select count(*)::int as n from seller_events where order_id = any(${broken})`
  t.equal(brokenEvents.n, 0, 'no event, so no notification, for a broken order')
  const [balance] = await database.sql`select (select points_balance from sellers where id = ${shop.sellerId}) = (select sum(amount) from points_ledger where seller_id = ${shop.sellerId}) as matches`
  t.ok(balance.matches, 'the ledger still sums to the balance')
})

t.test('every strategy: same outcome, same effects, one failed order', async (t) => {
  const strategies: BatchStrategy[] = ['set-based', 'savepoint-per-order', 'transaction-per-order']
  const outcomes: unknown[] = []
  for (const strategy of strategies) {
    const database = await testDatabase(t)
    const shop = await createShop(database, { pointsBalance: '5.00' })
    const [placed1, placed2, placed3] = await shop.orders(3, { paymentMode: 'ONLINE_PAID', dealQuantity: 2 })
    const accepted = await shop.order({ status: 'ORDER_ACCEPTED', paymentMode: 'PREPAID' })
    const broken = await shop.order({ total: '10.00' }) // 0.20 points: affordable after the two acceptances
    await breakOrder(database, broken)
    const caller = { credentialId: null as unknown as number, sellerId: shop.sellerId, kind: 'api-key' as const, environment: 'testing' as const, storeIds: null }
    const items = [accept(placed1), accept(placed2), accept(placed3), reject(placed3), reject(placed2), complete(accepted), accept(broken), accept('x')]
    const outcome = await updateOrderStatusesWith(strategy, database.db, caller, items)
    const [effects] = await database.sql`select
      (select string_agg(id || status::text, ',' order by id) from orders) as orders,
      (select points_balance from sellers where id = ${shop.sellerId}) as points,
      (select count(*) from refunds)::int as refunds,
      (select grabbed_quantity from daily_deals) as deal,
      (select string_agg(status::text, ',') from payout_schedules) as payouts,
      (select string_agg(type::text || '>' || status::text, ',' order by sequence) from seller_events) as events,
      (select count(*) from graphile_worker._private_jobs)::int as jobs`
    const notifications = (await notificationsOf(database)).map((n) => `${n.channel}:${n.type}`)
    outcomes.push({ outcome, effects: { ...effects, orders: (effects.orders as string).replace(/\d+/g, '') }, notifications })
    t.match(outcome, { successful: 5, failed: 3, invalidStatus: false }, strategy)
    t.same(outcome.errors.map((e) => e.error), ['Insufficient points to accept this order', 'Order could not be updated', 'Order_id must be a positive integer'], strategy)
  }
  t.same(outcomes[1], outcomes[0], 'savepoint-per-order = set-based')
  t.same(outcomes[2], outcomes[0], 'transaction-per-order = set-based')
})

t.test('the batch\'s own transaction failing: every order reported, nothing claimed done', async (t) => {
  const database = await testDatabase(t)
  const shop = await createShop(database)
  const [a, b] = await shop.orders(2)
  await database.close()
  const caller = { credentialId: 1, sellerId: shop.sellerId, kind: 'api-key' as const, environment: 'testing' as const, storeIds: null }
  const outcome = await updateOrderStatuses(database.db, { seller: caller }, [accept(a), reject(b, null), accept(b)])
  t.same(outcome, {
    successful: 0,
    failed: 3,
    invalidStatus: false,
    errors: [
      failed(0, a, OrderErrors.storageFailure),
      failed(1, b, OrderErrors.reasonRequired),
      failed(2, b, OrderErrors.storageFailure)
    ],
    unchangedOrderIds: []
  })
})
