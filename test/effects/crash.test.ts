import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { build } from '../helpers/build.js'
import { createShop, post, reject } from '../helpers/status-update.js'
import { startReceiver } from '../helpers/receiver.js'
import { captureLogger, deliveriesOf, deliveryOf, lastEventId, ordersIn, recordOrderEvent, startTestWorker } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { TASKS } from '../../src/effects/jobs.js'
import { addJob } from '../helpers/jobs.js'
import { DEAD_POOL_CONFIRM_MS, LIVENESS_LOCK_CLASS, WorkerLiveness, releaseJobsOfDeadWorkers } from '../../src/effects/crash-recovery.js'
import { openClient } from '../../src/db/client.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { seedDemo } from '../helpers/fixtures.js'
import { spawnWorker } from '../helpers/worker-process.js'
import type { Received } from '../helpers/receiver.js'

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'
const IN_AN_HOUR = (): Date => new Date(Date.now() + 3_600_000)
const WA = { WHATSAPP_PHONE_NUMBER_ID: '106540352242922', WHATSAPP_ACCESS_TOKEN: 'EAAG-test-token' }

/** Which subscription a request to the receiver was for, and its event id. */
function sentAs (r: Received): string {
  if (r.url === '/hooks') return `operator-webhook ${String(r.headers['webhook-id'])}`
  const body = JSON.parse(r.rawBody)
  return `whatsapp ${String(body.biz_opaque_callback_data)}`
}

t.test('the worker SIGKILLed mid-delivery: after a restart every delivery is made, each once', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  let answering = false
  // Until the crash, the receiver never answers: the worker's attempts are in flight when it dies.
  const receiver = await startReceiver(t, () => (answering ? 200 : 'hang'))
  const env = {
    DATABASE_URL: database.url,
    // The operator's endpoint and two notification channels through WhatsApp: every kind that leaves the process.
    WEBHOOK_URL: `${receiver.url}/hooks`,
    WEBHOOK_SECRET: SECRET,
    NOTIFY_CUSTOMER_TRANSPORT: 'whatsapp-cloud',
    NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud',
    WHATSAPP_API_BASE_URL: `${receiver.url}/wa`,
    ...WA,
    WHATSAPP_TIMEOUT_MS: '5000',
    WEBHOOK_DELIVERY_TIMEOUT_MS: '5000',
    WORKER_POLL_INTERVAL_MS: '200',
    WORKER_RECOVERY_INTERVAL_MS: '500'
  }
  const first = await spawnWorker(t, env)

  const orderIds = await shop.orders(10, { paymentMode: 'CASH_ON_DELIVERY' })
  const res = await post(app, await shop.apiKey(), { order_status: orderIds.map((id) => reject(id)) })
  t.equal(res.body.data?.successful, 10, 'ten rejections committed')
  const events = await database.sql`select count(*)::int as n from seller_events where seller_id = ${shop.sellerId}`
  t.equal(events[0].n, 10, 'ten events')

  // Ten to the operator's endpoint, ten to each WhatsApp channel; the seller's channel (the log) is done at once,
  // but written with the deliverer's next results: wait for both states before the kill.
  await eventually(t, 'thirty attempts in flight', () => receiver.received.length >= 30)
  await eventually(t, 'the log channel written DELIVERED', async () =>
    (await deliveriesOf(database)).filter((d) => d.kind === 'notify-seller' && d.status === 'DELIVERED').length === 10)
  first.child.kill('SIGKILL')
  t.same(await first.exited, { code: null, signal: 'SIGKILL' })
  const killed = await deliveriesOf(database)
  t.equal(killed.length, 40, 'four deliveries per event')
  t.same(killed.filter((d) => d.kind === 'notify-seller').map((d) => d.status), Array(10).fill('DELIVERED'), 'the log channel delivered')
  const inFlight = killed.filter((d) => d.kind !== 'notify-seller')
  t.ok(inFlight.every((d) => d.status === 'PENDING' && d.attempts === 0 && d.leased), 'the dead worker left thirty leased, none counted')
  const [{ leaseEnds }] = await database.sql`select extract(epoch from min(leased_until))::float8 * 1000 as "leaseEnds" from deliveries where leased_until is not null`

  answering = true
  const second = await spawnWorker(t, env)
  await eventually(t, 'all delivered', async () => (await deliveriesOf(database)).every((d) => d.status === 'DELIVERED'), { timeoutMs: 60_000 })
  const answered = receiver.received.slice(30)
  const expected = inFlight.map((d) => `${d.kind === 'operator-webhook' ? 'operator-webhook' : 'whatsapp'} ${d.eventId}`)
  t.equal(answered.length, 30, 'thirty requests after the restart')
  t.same(answered.map(sentAs).sort(), expected.sort(), 'every delivery reached the receiver after the restart, each once')
  t.ok(answered.every((r) => r.at >= leaseEnds - 1000), 'not before the dead worker\'s leases ended')
  const hooks = answered.filter((r) => r.url === '/hooks')
  t.equal(hooks.length, 10)
  for (const r of hooks) {
    t.doesNotThrow(() => new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), 'each verifies (Standard Webhooks)')
  }
  const after = await deliveriesOf(database)
  t.ok(after.every((d) => d.attempts === 1), 'one attempt each: the attempts the crash cut short were never counted')
  t.equal((await database.sql`select count(*)::int as n from delivery_attempts`)[0].n, 40, 'one attempt each in the log')

  second.child.kill('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null }, 'SIGTERM: a graceful stop, exit 0')
  t.ok(second.lines.some((l) => l.msg === 'effects worker stopped'))
})

t.test('two workers at once make each delivery once', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 400)
  const receiver = await startReceiver(t)
  const env = { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET }
  const a = captureLogger(); const b = captureLogger()
  const workers = [await startTestWorker(t, database, env, a.logger), await startTestWorker(t, database, env, b.logger)]
  const orders = await ordersIn(database, 'ORDER_PLACED', 90)
  t.equal(orders.length, 90)
  for (const order of orders) await recordOrderEvent(database, order, 'order.accepted')
  await eventually(t, 'all delivered', async () => {
    const rows = await deliveriesOf(database)
    return rows.length === 360 && rows.every((d) => d.status === 'DELIVERED')
  }, { timeoutMs: 60_000 })
  // Drained before counting: both stopped, so no attempt is still on its way to the receiver.
  await Promise.all(workers.map((w) => w.stop()))
  const ids = receiver.received.map((r) => r.headers['webhook-id'])
  t.equal(ids.length, 90, 'one POST per event to the operator\'s endpoint')
  t.equal(new Set(ids).size, 90, 'no event twice')
  const told = (lines: Array<Record<string, any>>): string[] => lines.filter((l) => String(l.msg).startsWith('notification: ')).map((l) => `${String(l.channel)} ${String(l.eventId)}`)
  const byA = told(a.lines); const byB = told(b.lines)
  t.equal(byA.length + byB.length, 270, 'three notifications per event')
  t.equal(new Set([...byA, ...byB]).size, 270, 'none twice')
  t.ok(byA.length > 0 && byB.length > 0, `both workers took part (${byA.length} + ${byB.length})`)
  t.equal((await database.sql`select count(*)::int as n from deliveries where attempts <> 1`)[0].n, 0, 'one attempt each')
  t.equal((await database.sql`select count(*)::int as n from delivery_attempts`)[0].n, 360)
})

t.test('dispatches at the same moment (deliverers, sweeps) queue each event once per subscription', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 200)
  const orders = await ordersIn(database, 'ORDER_PLACED', 60)
  const recording = { done: false }
  // Eight dispatch loops while the events come in: one's lock is taken right after another's commit.
  const loops = Array.from({ length: 8 }, async () => { while (!recording.done) await dispatchEvents(database.db) })
  for (const o of orders) await recordOrderEvent(database, o, 'order.accepted')
  recording.done = true
  await Promise.all(loops)
  await dispatchEvents(database.db)
  const [row] = await database.sql`select count(*)::int as all, count(distinct (subscription_id, seller_id, sequence))::int as distinct
    from deliveries`
  t.equal(row.all, orders.length * 3, 'three notifications per event')
  t.equal(row.distinct, row.all, 'none queued twice')
})

t.test('crash recovery takes only the jobs of pools whose liveness lock is gone', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 30)
  const [order, other] = await ordersIn(database, 'ORDER_PLACED', 2)
  // A pool that lives (its liveness lock held, as every worker holds it) and one that no longer exists
  // (as a SIGKILLed worker leaves it), each with a job locked.
  const live = new WorkerLiveness(database.url, captureLogger().logger, 60_000)
  await live.open()
  live.hold('pool-live')
  t.teardown(() => live.close())
  for (const [o, pool] of [[order, 'pool-live'], [other, 'pool-dead0000']] as const) {
    await addJob(database.db, TASKS.autoReject, { orderId: o.id }, { runAt: IN_AN_HOUR(), jobKey: pool })
    await database.sql`update graphile_worker._private_jobs set locked_by = ${pool}, locked_at = now() - interval '1 minute' where key = ${pool}`
  }
  await eventually(t, 'the live pool\'s lock', async () => (await database.sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${LIVENESS_LOCK_CLASS}::int8::oid and granted
    and database = (select oid from pg_database where datname = current_database())`)[0].n === 1)
  const released = await releaseJobsOfDeadWorkers(database.db, 0)
  t.same(released, ['pool-dead0000'], "the dead pool's job is released, the live one's is not, even with no grace")
  const locks = (await database.sql`select key, locked_by from graphile_worker._private_jobs where key like 'pool-%' order by key`).map((r) => [r.key, r.locked_by])
  t.same(locks, [['pool-dead0000', null], ['pool-live', 'pool-live']])
})

t.test('stopping does not wait out a hanging receiver: the attempt is abandoned after the grace, recorded, and made again later', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 30)
  let answering = false
  const receiver = await startReceiver(t, () => (answering ? 200 : 'hang'))
  const env = { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_DELIVERY_TIMEOUT_MS: '60000', SHUTDOWN_GRACE_MS: '1000' }
  const worker = await startTestWorker(t, database, env)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.accepted')
  const id = (await lastEventId(database, order.sellerId))!
  await eventually(t, 'an attempt in flight', () => receiver.received.length === 1)
  const stopping = Date.now()
  await worker.stop()
  t.ok(Date.now() - stopping < 10_000, `stopped in ${Date.now() - stopping} ms`)
  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'PENDING', attempts: 1, leased: false, lastError: 'abandoned: the worker is stopping' })
  answering = true
  await database.sql`update deliveries set next_attempt_at = now() where status = 'PENDING'`
  await startTestWorker(t, database, env)
  await eventually(t, 'delivered by the next worker', async () => (await deliveryOf(database, 'operator-webhook', id))?.status === 'DELIVERED')
  t.match(await deliveryOf(database, 'operator-webhook', id), { attempts: 2 })
  t.same(receiver.received.map((r) => r.headers['webhook-id']), [id, id])
})

t.test('a pool is taken for dead only after its lock has been missing for a while: a session that comes back keeps its jobs', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 30)
  const [a, b] = await ordersIn(database, 'ORDER_PLACED', 2)
  // Two jobs locked by pools that hold no liveness lock right now.
  for (const [order, pool] of [[a, 'pool-gone'], [b, 'pool-back']] as const) {
    await addJob(database.db, TASKS.autoReject, { orderId: order.id }, { runAt: IN_AN_HOUR(), jobKey: pool })
    await database.sql`update graphile_worker._private_jobs set locked_by = ${pool}, locked_at = now() - interval '1 minute' where key = ${pool}`
  }
  const { logger, lines } = captureLogger('info')
  // The confirmation period runs on this clock: each sweep reads it once, so its reads count the sweeps.
  let now = Date.now()
  let sweeps = 0
  const liveness = new WorkerLiveness(database.url, logger, 100, () => { sweeps++; return now })
  await liveness.open()
  liveness.hold('pool-sweeper')
  liveness.start()
  t.teardown(() => liveness.close())
  const lockedBy = async (key: string) => (await database.sql`select locked_by from graphile_worker._private_jobs where key = ${key}`)[0].locked_by
  await eventually(t, 'ten sweeps', () => sweeps >= 11)
  t.equal(await lockedBy('pool-gone'), 'pool-gone', 'ten sweeps later a missing lock is still only a suspicion')
  // pool-back's session returns (as a worker re-takes its lock after a network blip or a restart).
  const back = openClient(database.url, { max: 1 })
  t.teardown(() => back.end())
  await back`select pg_advisory_lock(${LIVENESS_LOCK_CLASS}::int4, hashtext('pool-back'))`
  // The period passes: every sweep from now on sees pool-back's lock, and pool-gone missing for long enough.
  now += DEAD_POOL_CONFIRM_MS
  await eventually(t, 'the dead pool released', async () => (await lockedBy('pool-gone')) === null, { timeoutMs: DEAD_POOL_CONFIRM_MS + 5000 })
  t.equal(await lockedBy('pool-back'), 'pool-back', 'the pool that came back keeps its job')
  t.ok(lines.some((l) => l.msg === 'released jobs of workers that died mid-job; they will run again' && JSON.stringify(l.pools) === '["pool-gone"]'))
})
