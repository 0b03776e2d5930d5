import t from 'tap'
import { build } from '../helpers/build.js'
import { notificationsOf } from '../helpers/effects.js'
import type { Caller } from '../../src/credentials/service.js'
import { updateOrderStatusesWith } from '../../bench/status-update/strategies.js'
import { accept, complete, createShop, post, queuedJobs, reject, type Item } from '../helpers/status-update.js'

/*
 * Several batches racing on the same 100 orders of a seller whose points cover only some of them. Row
 * locks, not luck, must keep every invariant: each effect once, the balance never below zero, the
 * ledger summing to the balance.
 */

function shuffled<T> (values: T[], seed: number): T[] {
  const out = [...values]
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

t.test('parallel batches on the same orders and seller', async (t) => {
  const { app, database } = await build(t)
  // 2 % of 100.00 = 2.00 points an order: 50.00 points cover 25 of the 100 orders.
  const shop = await createShop(database, { pointsBalance: '50.00', takeRate: '0.0200' })
  const key = await shop.apiKey()
  const ids: number[] = []
  for (let i = 0; i < 100; i++) {
    ids.push(await shop.order({ paymentMode: i % 2 === 0 ? 'ONLINE_PAID' : 'PREPAID', dealQuantity: i % 4 === 0 ? 3 : 0, autoRejectJob: true }))
  }
  const [{ grabbed: grabbedBefore }] = await database.sql`select grabbed_quantity as grabbed from daily_deals where id = ${shop.dealId}`

  const acceptAll = ids.map((id) => accept(id))
  const rejectSome = ids.filter((_, i) => i % 3 === 0).map((id) => reject(id, 'Out of stock'))
  const httpBatches: Item[][] = [
    acceptAll,
    [...acceptAll].reverse(),
    shuffled([...rejectSome, ...acceptAll.filter((_, i) => i % 3 !== 0)], 7),
    shuffled([...acceptAll, ...ids.map((id) => complete(id))], 11),
    acceptAll
  ]
  const caller: Caller = { credentialId: 1, sellerId: shop.sellerId, kind: 'api-key', environment: 'testing', storeIds: null }
  const [cred] = await database.sql`select id from credentials where seller_id = ${shop.sellerId}`
  caller.credentialId = cred.id
  const responses = await Promise.all([
    ...httpBatches.map((batch) => post(app, key, { order_status: batch })),
    // The other two ways of writing a batch race too: they take the same locks in the same order.
    updateOrderStatusesWith('savepoint-per-order', database.db, caller, shuffled([...rejectSome, ...acceptAll], 3)),
    updateOrderStatusesWith('transaction-per-order', database.db, caller, shuffled(acceptAll, 5))
  ])
  const httpResponses = responses.slice(0, httpBatches.length) as Array<{
    statusCode: number,
    body: { data: { failed: number, errors: Array<{ error: string }> } }
  }>
  for (const res of httpResponses) {
    t.equal(res.statusCode, 200)
    t.notOk(res.body.data.errors.some((e) => e.error === 'Order could not be updated'), 'no batch hit a storage failure (no deadlock)')
  }
  for (const outcome of responses.slice(httpBatches.length) as Array<{ errors: Array<{ error: string }> }>) {
    t.notOk(outcome.errors.some((e) => e.error === 'Order could not be updated'), 'no deadlock in the per-order strategies')
  }

  const [seller] = await database.sql`select points_balance from sellers where id = ${shop.sellerId}`
  const [ledger] = await database.sql`select sum(amount)::text as total, count(*) filter (where kind = 'ORDER_ACCEPTANCE')::int as deductions,
    count(distinct order_id)::int as orders from points_ledger where seller_id = ${shop.sellerId}`
  const [history] = await database.sql`select count(*) filter (where to_status = 'ORDER_ACCEPTED')::int as accepted,
    count(*)::int as changes, count(distinct (order_id, to_status))::int as distinct_changes from order_status_history`
  t.ok(Number(seller.points_balance) >= 0, `balance ${seller.points_balance} is not negative`)
  t.equal(ledger.total, seller.points_balance, 'the ledger sums to the balance')
  t.equal(ledger.deductions, 25, 'the points covered exactly 25 acceptances')
  t.equal(seller.points_balance, '0.00')
  t.equal(ledger.orders, ledger.deductions, 'one deduction per order')
  t.equal(history.accepted, ledger.deductions, 'one deduction per acceptance')
  t.equal(history.distinct_changes, history.changes, 'no transition recorded twice')

  const statuses = await database.sql`select o.id, o.status, o.payment_mode, exists (select 1 from order_items oi where oi.order_id = o.id and oi.deal_id is not null) as has_deal
    from orders o where o.seller_id = ${shop.sellerId}`
  const rejected = statuses.filter((o) => o.status === 'ORDER_REJECTED_BY_SELLER')
  t.ok(rejected.length > 0, 'some orders were rejected')
  const [counts] = await database.sql`select (select count(*) from refunds)::int as refunds, (select count(*) from order_effects)::int as effects,
    (select count(*) from seller_events where seller_id = ${shop.sellerId})::int as events,
    (select count(distinct (order_id, status)) from seller_events where seller_id = ${shop.sellerId})::int as distinct_events,
    (select grabbed_quantity from daily_deals where id = ${shop.dealId}) as grabbed`
  t.equal(counts.refunds, rejected.filter((o) => o.payment_mode === 'ONLINE_PAID').length, 'one refund per rejected order paid online')
  t.equal(counts.effects, rejected.filter((o) => o.has_deal).length, 'deal quantity given back once per rejected order with a deal line')
  t.equal(Number(counts.grabbed), Number(grabbedBefore) - 3 * counts.effects, 'and by exactly their quantity')
  t.equal(counts.events, history.changes, 'one event per change')
  t.equal(counts.distinct_events, counts.events, 'no change announced twice')
  const notifications = await notificationsOf(database)
  t.equal(notifications.length, 3 * history.changes, 'three notifications per change')
  t.equal(new Set(notifications.map((n) => `${n.channel} ${n.eventId}`)).size, notifications.length, 'one notification per channel and event')

  const jobs = await queuedJobs(database)
  t.same([...new Set(jobs.map((j) => j.task))].sort(), ['auto-reject', 'process-refund'], 'no other jobs: notifications are not jobs')
  t.equal(jobs.filter((j) => j.task === 'process-refund').length, counts.refunds, 'one refund job per refund')
  const stillPlaced = new Set(statuses.filter((o) => o.status === 'ORDER_PLACED').map((o) => Number(o.id)))
  const autoReject = jobs.filter((j) => j.task === 'auto-reject').map((j) => Number(j.payload.orderId))
  t.same(autoReject.sort((a, b) => a - b), [...stillPlaced].sort((a, b) => a - b), 'auto-rejection jobs remain exactly for the orders still placed')
})
