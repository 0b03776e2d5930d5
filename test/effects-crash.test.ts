import t from 'tap'
import { build } from './helpers/build.js'
import { createShop, post, reject } from './status-update/helpers.js'
import { startReceiver } from './helpers/receiver.js'
import { captureLogger, deliveryRow, enqueueEvent, notifyPayload, ordersIn, startTestWorker, waitFor } from './helpers/effects.js'
import { TASKS } from '../src/effects/jobs.js'
import { addJob, enqueueNotification } from './helpers/jobs.js'
import { DEAD_POOL_CONFIRM_MS, LIVENESS_LOCK_CLASS, WorkerLiveness, releaseJobsOfDeadWorkers } from '../src/effects/crash-recovery.js'
import { openClient } from '../src/db/client.js'
import { seedDemo } from './helpers/fixtures.js'
import { spawnWorker } from './helpers/worker-process.js'
import { verifySignature } from './helpers/webhook-signature.js'

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

t.test('the worker SIGKILLed between the status commit and delivery: after a restart every notification is delivered', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  let answering = false
  // Until the crash, the receiver never answers: the worker's jobs are in flight when it dies.
  const receiver = await startReceiver(t, () => (answering ? 200 : 'hang'))
  const env = {
    DATABASE_URL: database.url,
    NOTIFY_SELLER_TRANSPORT: 'webhook',
    NOTIFY_CUSTOMER_TRANSPORT: 'webhook',
    NOTIFY_MESSAGING_TRANSPORT: 'webhook',
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_TIMEOUT_MS: '120000',
    WORKER_CONCURRENCY: '4',
    WORKER_POLL_INTERVAL_MS: '200',
    WORKER_RECOVERY_INTERVAL_MS: '500'
  }
  const first = await spawnWorker(t, env)

  const orderIds = await shop.orders(10, { paymentMode: 'CASH_ON_DELIVERY' })
  const res = await post(app, await shop.apiKey(), { order_status: orderIds.map((id) => reject(id)) })
  t.equal(res.body.data?.successful, 10, 'ten rejections committed')
  const [{ n: events }] = await database.sql`select count(*)::int as n from notification_deliveries`
  t.equal(events, 30)

  await waitFor(t, 'four deliveries in flight', () => receiver.received.length >= 4)
  first.child.kill('SIGKILL')
  t.same(await first.exited, { code: null, signal: 'SIGKILL' })
  const [{ n: locked }] = await database.sql`select count(*)::int as n from graphile_worker.jobs where locked_by is not null`
  t.equal(locked, 4, 'the dead worker left four jobs locked')
  t.equal((await database.sql`select count(*)::int as n from notification_deliveries where status = 'DELIVERED'`)[0].n, 0, 'nothing delivered yet')

  answering = true
  const second = await spawnWorker(t, env)
  await waitFor(t, 'all delivered', async () => (await database.sql`select count(*)::int as n from notification_deliveries where status = 'DELIVERED'`)[0].n === 30, 60_000)
  const answered = receiver.received.slice(4)
  const delivered = new Set(answered.map((r) => r.headers['x-order-exchange-event-id']))
  const expected = (await database.sql`select event_id from notification_deliveries`).map((r) => r.event_id)
  t.same([...delivered].sort(), expected.sort(), 'every event reached the receiver after the restart')
  t.equal(answered.length, 30, 'and each once after the restart')
  t.ok(answered.every((r) => verifySignature(SECRET, r.rawBody, r.headers['x-order-exchange-signature'] as string)))
  t.ok(second.lines.some((l) => l.msg === 'released jobs of workers that died mid-job; they will run again'), 'the dead worker\'s jobs were released')
  await waitFor(t, 'queue empty', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notify'`)[0].n === 0)

  second.child.kill('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null }, 'SIGTERM: a graceful stop, exit 0')
  t.ok(second.lines.some((l) => l.msg === 'effects worker stopped'))
})

t.test('two workers at once deliver each job once', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 400)
  const receiver = await startReceiver(t)
  const env = { NOTIFY_SELLER_TRANSPORT: 'webhook', NOTIFY_CUSTOMER_TRANSPORT: 'webhook', NOTIFY_MESSAGING_TRANSPORT: 'webhook', WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, WORKER_CONCURRENCY: '4' }
  const a = captureLogger(); const b = captureLogger()
  await startTestWorker(t, database, env, a.logger)
  await startTestWorker(t, database, env, b.logger)
  const orders = await ordersIn(database, 'ORDER_PLACED', 90)
  t.equal(orders.length, 90)
  for (const order of orders) await enqueueEvent(database, order, 'order.accepted')
  await waitFor(t, 'all delivered', async () => (await database.sql`select count(*)::int as n from notification_deliveries where status = 'DELIVERED'`)[0].n === 270, 60_000)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const ids = receiver.received.map((r) => r.headers['x-order-exchange-event-id'])
  t.equal(ids.length, 270, 'one delivery per event')
  t.equal(new Set(ids).size, 270, 'no event twice')
  const byA = a.lines.filter((l) => l.msg === 'notification delivered').length
  const byB = b.lines.filter((l) => l.msg === 'notification delivered').length
  t.equal(byA + byB, 270)
  t.ok(byA > 0 && byB > 0, `both workers took part (${byA} + ${byB})`)
  t.equal((await database.sql`select count(*)::int as n from notification_deliveries where attempts <> 1`)[0].n, 0, 'one attempt each')
})

t.test('crash recovery takes only the jobs of pools whose liveness lock is gone', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 30)
  const receiver = await startReceiver(t, () => 'hang')
  const worker = await startTestWorker(t, database, { NOTIFY_SELLER_TRANSPORT: 'webhook', WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: '60000' })
  const [order, other] = await ordersIn(database, 'ORDER_PLACED', 2)
  await database.db.transaction((tx) => enqueueNotification(tx, notifyPayload(order, 'seller')))
  await waitFor(t, 'a job in flight', () => receiver.received.length === 1)
  const [live] = await database.sql`select locked_by from graphile_worker.jobs where task_identifier = 'notify' and locked_by is not null`
  t.ok(live, 'the live worker holds its job')
  const [lock] = await database.sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${LIVENESS_LOCK_CLASS}::int8::oid and granted
    and database = (select oid from pg_database where datname = current_database())`
  t.equal(lock.n, 1, 'and its liveness lock')

  // A job locked by a pool that no longer exists (as a SIGKILLed worker leaves it).
  await addJob(database.db, TASKS.notify, notifyPayload(other, 'seller'), { runAt: new Date(Date.now() + 3_600_000) })
  await database.sql`update graphile_worker._private_jobs set locked_by = 'pool-dead0000', locked_at = now() - interval '1 minute' where locked_by is null and task_id = (select id from graphile_worker._private_tasks where identifier = 'notify')`
  const released = await releaseJobsOfDeadWorkers(database.db, 0)
  t.same(released, ['pool-dead0000'], "the dead pool's job is released, the live one's is not, even with no grace")
  const locks = (await database.sql`select locked_by from graphile_worker.jobs where task_identifier = 'notify' order by id`).map((r) => r.locked_by)
  t.same(locks, [live.locked_by, null])

  // Stopping does not wait out a 60 s webhook: graphile-worker aborts the jobs in hand after its 5 s grace
  // and the attempt is recorded. The job may stay locked by the stopped pool, whose liveness lock is gone
  // with it: the next sweep of any worker puts it back in the queue.
  const stopping = Date.now()
  await worker.stop()
  t.ok(Date.now() - stopping < 20_000, `stopped in ${Date.now() - stopping} ms`)
  t.match(await deliveryRow(database, notifyPayload(order, 'seller').eventId), { status: 'PENDING', attempts: 1, last_error: 'webhook request abandoned: the worker is stopping' })
  await releaseJobsOfDeadWorkers(database.db, 0)
  const [back] = await database.sql`select locked_by, attempts from graphile_worker._private_jobs where id = (select min(id) from graphile_worker.jobs where task_identifier = 'notify')`
  t.match(back, { locked_by: null, attempts: 1 }, 'the job is back in the queue')
})

t.test('a pool is taken for dead only after its lock has been missing for a while: a session that comes back keeps its jobs', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 30)
  const [a, b] = await ordersIn(database, 'ORDER_PLACED', 2)
  // Two jobs locked by pools that hold no liveness lock right now.
  for (const [order, pool] of [[a, 'pool-gone'], [b, 'pool-back']] as const) {
    await addJob(database.db, TASKS.notify, notifyPayload(order, 'seller'), { runAt: new Date(Date.now() + 3_600_000), jobKey: pool })
    await database.sql`update graphile_worker._private_jobs set locked_by = ${pool}, locked_at = now() - interval '1 minute' where key = ${pool}`
  }
  const { logger, lines } = captureLogger('info')
  const liveness = new WorkerLiveness(database.url, logger, 100)
  await liveness.open()
  liveness.hold('pool-sweeper')
  liveness.start()
  t.teardown(() => liveness.close())
  const lockedBy = async (key: string) => (await database.sql`select locked_by from graphile_worker._private_jobs where key = ${key}`)[0].locked_by
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal(await lockedBy('pool-gone'), 'pool-gone', 'ten sweeps later a missing lock is still only a suspicion')
  // pool-back's session returns (as a worker re-takes its lock after a network blip or a restart).
  const back = openClient(database.url, { max: 1 })
  t.teardown(() => back.end())
  await back`select pg_advisory_lock(${LIVENESS_LOCK_CLASS}::int4, hashtext('pool-back'))`
  await waitFor(t, 'the dead pool released', async () => (await lockedBy('pool-gone')) === null, DEAD_POOL_CONFIRM_MS + 5000)
  t.equal(await lockedBy('pool-back'), 'pool-back', 'the pool that came back keeps its job')
  t.ok(lines.some((l) => l.msg === 'released jobs of workers that died mid-job; they will run again' && JSON.stringify(l.pools) === '["pool-gone"]'))
})
