import t from 'tap'
import { build, testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { createShop, post, accept, ok, queuedJobs } from '../helpers/status-update.js'
import { captureLogger, notificationsOf, startTestWorker } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { scheduleAutoRejections } from '../../src/effects/enqueue.js'
import { AUTO_REJECT_KEY_PREFIX, autoRejectJobKey, TASKS } from '../../src/effects/jobs.js'
import { addJob } from '../helpers/jobs.js'
import { autoRejectOrder } from '../../src/status-update/auto-reject.js'
import { changeOrderStatus } from '../../src/status-update/change-status.js'
import { AUTO_REJECT_REASON } from '../../src/status-update/texts.js'
import type { Tx } from '../../src/db/client.js'

/** One order's auto-rejection, as order placement schedules it; true when a job was made. */
const scheduleAutoRejection = async (tx: Tx, orderId: number, afterMs: number) =>
  (await scheduleAutoRejections(tx, { ids: [orderId] }, afterMs)) > 0

const jobKeys = async (database: Parameters<typeof queuedJobs>[0]) => (await queuedJobs(database)).filter((j) => j.task === 'auto-reject').map((j) => j.key)

t.test('an order still placed when its time is up is rejected with every reject effect', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  await database.sql`update sellers set auto_reject_enabled = true where id = ${shop.sellerId}`
  const { logger, lines } = captureLogger('info')
  const worker = await startTestWorker(t, database, {}, logger)

  const orderId = await shop.order({ paymentMode: 'ONLINE_PAID', total: '190.00', dealQuantity: 5 })
  const scheduled = await database.db.transaction((tx) => scheduleAutoRejection(tx, orderId, 1500))
  t.ok(scheduled)
  t.same(await jobKeys(database), [autoRejectJobKey(orderId)], 'keyed by order')
  t.equal(AUTO_REJECT_KEY_PREFIX + orderId, autoRejectJobKey(orderId))
  const [{ run_at: runAt, created_at: createdAt }] = await database.sql`select j.run_at::text, o.created_at::text from graphile_worker.jobs j, orders o where o.id = ${orderId}`
  t.equal(new Date(runAt).getTime() - new Date(createdAt).getTime(), 1500, 'due AUTO_REJECT_AFTER_MS after placement')
  const [{ status: before }] = await database.sql`select status from orders where id = ${orderId}`
  t.equal(before, 'ORDER_PLACED', 'not before its time')

  await eventually(t, 'rejected', async () => (await database.sql`select status from orders where id = ${orderId}`)[0].status === 'ORDER_REJECTED_BY_SELLER')
  const [history] = await database.sql`select from_status, to_status, reason, credential_id, source, changed_at::text, (select created_at::text from orders where id = ${orderId}) as created_at
    from order_status_history where order_id = ${orderId}`
  t.match(history, { from_status: 'ORDER_PLACED', to_status: 'ORDER_REJECTED_BY_SELLER', reason: AUTO_REJECT_REASON, credential_id: null, source: 'auto-reject' })
  t.ok(new Date(history.changed_at).getTime() - new Date(history.created_at).getTime() >= 1500, 'fired at its time, not earlier')

  await eventually(t, 'refund processed', async () => (await database.sql`select status from refunds where order_id = ${orderId}`)[0]?.status === 'MANUAL')
  t.match((await database.sql`select amount, status, gateway from refunds where order_id = ${orderId}`)[0], { amount: '190.00', status: 'MANUAL', gateway: 'manual' })
  const [deal] = await database.sql`select grabbed_quantity from daily_deals where id = ${shop.dealId}`
  t.equal(Number(deal.grabbed_quantity), 0, 'the deal quantity is given back')
  await eventually(t, 'notifications delivered', async () => (await notificationsOf(database, orderId)).filter((n) => n.status === 'DELIVERED').length === 3)
  const [event] = await database.sql`select 'evt_' || seller_id || '_' || sequence as id, type::text as type, reason from seller_events where order_id = ${orderId}`
  t.match(event, { type: 'order.rejected', reason: AUTO_REJECT_REASON }, 'one event, with the reason')
  t.same((await notificationsOf(database, orderId)).map((n) => n.eventId), [event.id, event.id, event.id], 'its notifications')
  const told = lines.filter((l) => l.orderId === String(orderId) && l.msg.startsWith('notification: '))
  t.same(told.map((l) => l.channel).sort(), ['customer', 'messaging', 'seller'])
  t.ok(told.every((l) => l.msg.endsWith(`was rejected: ${AUTO_REJECT_REASON}`)), 'with the reason')
  t.ok(lines.some((l) => l.msg === 'order auto-rejected: not accepted in time' && l.orderId === orderId))
  await eventually(t, 'job done', async () => (await jobKeys(database)).length === 0)

  // Accepting in time removes the job (status update); nothing fires later. No worker until the accept is in:
  // a running one rejects the order first whenever making it and accepting it take longer than the 1 s (load).
  await worker.stop()
  const second = await shop.order()
  await database.db.transaction((tx) => scheduleAutoRejection(tx, second, 1000))
  t.same(await post(app, await shop.apiKey(), { order_status: [accept(second)] }), { statusCode: 200, body: ok(1) })
  t.same(await jobKeys(database), [], 'the accept removed the job')
  await startTestWorker(t, database, {}, logger)
  // Drained: no auto-rejection left queued or running (had the accept left the job, the worker runs it at its
  // time and only then is the queue empty).
  await eventually(t, 'no auto-rejection queued', async () => (await jobKeys(database)).length === 0)
  t.equal((await database.sql`select status from orders where id = ${second}`)[0].status, 'ORDER_ACCEPTED')
})

t.test('a job that finds its order already moved does nothing', async (t) => {
  const database = await testDatabase(t)
  const shop = await createShop(database)
  await database.sql`update sellers set auto_reject_enabled = true where id = ${shop.sellerId}`
  await startTestWorker(t, database)
  const accepted = await shop.order({ status: 'ORDER_ACCEPTED', paymentMode: 'ONLINE_PAID' })
  const missing = 987_654
  // As if the removal had been missed (or the job was added by hand): the job must still leave the order alone.
  await addJob(database.db, TASKS.autoReject, { orderId: accepted }, { jobKey: autoRejectJobKey(accepted) })
  await addJob(database.db, TASKS.autoReject, { orderId: missing }, { jobKey: autoRejectJobKey(missing) })
  await eventually(t, 'jobs done', async () => (await jobKeys(database)).length === 0)
  t.equal((await database.sql`select status from orders where id = ${accepted}`)[0].status, 'ORDER_ACCEPTED')
  const [counts] = await database.sql`select (select count(*)::int from order_status_history) as history, (select count(*)::int from refunds) as refunds,
    (select count(*)::int from seller_events) as events`
  t.same(counts, { history: 0, refunds: 0, events: 0 })
  t.same(await notificationsOf(database), [], 'no notification')
})

t.test('scheduling: only placed orders of sellers with auto-rejection on; 0 turns it off; the seed schedules its placed orders', async (t) => {
  const database = await testDatabase(t)
  const on = await createShop(database)
  await database.sql`update sellers set auto_reject_enabled = true where id = ${on.sellerId}`
  const off = await createShop(database)
  const placedOn = await on.order(); const acceptedOn = await on.order({ status: 'ORDER_ACCEPTED' }); const placedOff = await off.order()
  const deleted = await on.order({ deleted: true })
  const schedule = (id: number, ms: number) => database.db.transaction((tx) => scheduleAutoRejection(tx, id, ms))
  t.equal(await schedule(placedOn, 0), false, '0 = off')
  t.equal(await schedule(acceptedOn, 1000), false)
  t.equal(await schedule(placedOff, 1000), false)
  t.equal(await schedule(deleted, 1000), false)
  t.equal(await schedule(placedOn, 60_000), true)
  t.equal(await schedule(placedOn, 60_000), true, 'again: replaces, one job per order')
  t.same(await jobKeys(database), [autoRejectJobKey(placedOn)])

  const seeded = await testDatabase(t)
  const started = Date.now()
  await seedDemo(seeded, 300)
  const [row] = await seeded.sql`select
    (select count(*)::int from orders o join sellers s on s.id = o.seller_id where o.status = 'ORDER_PLACED' and not o.is_deleted and s.auto_reject_enabled) as placed,
    (select count(*)::int from graphile_worker.jobs where task_identifier = 'auto-reject') as jobs,
    (select count(*)::int from graphile_worker._private_jobs j join orders o on o.id = (j.payload->>'orderId')::bigint and j.key = 'auto-reject:' || o.id) as keyed,
    (select min(extract(epoch from run_at) * 1000)::float8 from graphile_worker.jobs) as earliest`
  t.ok(row.placed > 10, 'the demo has placed orders of an auto-reject seller')
  t.equal(row.jobs, row.placed, 'one job per such order')
  t.equal(row.keyed, row.placed, 'each keyed by its order')
  t.ok(row.earliest >= started + 24 * 3_600_000 - 60_000, 'a loaded order gets the full window from loading')

  const none = await testDatabase(t)
  await (await import('../../src/seed/seed.js')).seed(none, { orders: 50, seed: 1, anchor: new Date('2026-11-01T00:00:00Z'), autoRejectAfterMs: 0 })
  t.equal((await none.sql`select count(*)::int as n from graphile_worker.jobs`)[0].n, 0, 'AUTO_REJECT_AFTER_MS=0 schedules none')
})

t.test('the seller accepting between the job\'s look and its change wins: the accepted order is not rejected', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const orderId = await shop.order({ paymentMode: 'ONLINE_PAID' })
  const key = await shop.apiKey()
  // The seller's accept commits right after the task has read the order as placed.
  const racing: typeof changeOrderStatus = async (tx, input, events) => {
    t.same(await post(app, key, { order_status: [accept(orderId)] }), { statusCode: 200, body: ok(1) })
    return changeOrderStatus(tx, input, events)
  }
  await autoRejectOrder(database.db, orderId, racing)
  t.equal((await database.sql`select status from orders where id = ${orderId}`)[0].status, 'ORDER_ACCEPTED')
  t.equal((await database.sql`select count(*)::int as n from refunds`)[0].n, 0, 'no refund')
  t.same((await database.sql`select source from order_status_history where order_id = ${orderId}`).map((r) => r.source), ['api'], 'only the seller changed it')
})
