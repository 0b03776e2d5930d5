import t from 'tap'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { captureLogger, ordersIn, recordOrderEvent } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { addJob } from '../helpers/jobs.js'
import { TASKS } from '../../src/effects/jobs.js'
import { WorkerLiveness } from '../../src/effects/crash-recovery.js'
import { answerAfter, startReceiver } from '../helpers/receiver.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js'

/*
 * A graceful stop finishes or gives back what it holds: after SIGTERM and exit code 0, no delivery is left
 * leased by the stopped worker (such a delivery waited for its lease to end before it went again) and no
 * job locked. A real `order-exchange worker` process, a long queue of deliveries (the operator's endpoint
 * and two WhatsApp channels) and a slow receiver: the stop comes while attempts are in flight and their
 * results are being written.
 */

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

t.test('SIGTERM mid-queue: exit 0, nothing left leased, every delivery made once or still queued', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 200)
  // Each answer takes its time, as a real endpoint's does: a stop always meets attempts in flight.
  const receiver = await startReceiver(t, answerAfter(40))
  const env = {
    DATABASE_URL: database.url,
    WEBHOOK_URL: `${receiver.url}/hooks`,
    WEBHOOK_SECRET: SECRET,
    NOTIFY_CUSTOMER_TRANSPORT: 'whatsapp-cloud',
    NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud',
    WHATSAPP_API_BASE_URL: `${receiver.url}/wa`,
    WHATSAPP_PHONE_NUMBER_ID: '1',
    WHATSAPP_ACCESS_TOKEN: 'x',
    WEBHOOK_DELIVERY_CONCURRENCY: '8',
    WORKER_POLL_INTERVAL_MS: '200'
  }
  // The operator's endpoint is enabled by the first worker (from the log's end): it starts before the events.
  const first = await spawnWorker(t, env)
  const orders = (await database.sql`select o.id::int as id, o.seller_id as "sellerId" from orders o join retailers r on r.id = o.retailer_id
    where o.status = 'ORDER_PLACED' and not o.is_deleted and coalesce(r.whatsapp, r.phone) is not null order by o.id limit 60`) as unknown as Array<{ id: number, sellerId: number }>
  t.ok(orders.length >= 40, `${orders.length} placed orders of retailers with a phone`)
  for (const order of orders) await recordOrderEvent(database, order, 'order.accepted')
  const total = orders.length * 4
  // What the log holds queued first (as the next worker's deliverer does when it starts).
  const state = async () => {
    await dispatchEvents(database.db)
    return (await database.sql`select count(*)::int as all,
      count(*) filter (where status = 'DELIVERED' and attempts = 1)::int as delivered,
      count(*) filter (where status = 'PENDING' and attempts = 0)::int as queued,
      count(*) filter (where leased_until > now())::int as leased
    from deliveries`)[0] as { all: number, delivered: number, queued: number, leased: number }
  }
  const lockedJobs = async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where locked_by is not null`)[0].n

  // Three stops at different points of the queue, each by a fresh worker process.
  let worker: WorkerProcess | null = first
  for (const after of [10, 50, 100]) {
    if (worker === null) worker = await spawnWorker(t, env)
    await eventually(t, `${after} requests`, () => receiver.received.length >= after, { timeoutMs: 60_000 })
    worker.child.kill('SIGTERM')
    t.same(await worker.exited, { code: 0, signal: null }, `SIGTERM after ${after} requests: a graceful stop, exit 0`)
    const left = await state()
    t.equal(left.all, total, 'four deliveries per event')
    t.equal(left.leased, 0, 'no delivery left leased after the stop')
    t.equal(left.delivered + left.queued, total, 'every delivery made (once) or still queued, untried')
    t.equal(await lockedJobs(), 0, 'no job left locked')
    const http = await database.sql`select count(*)::int as n from deliveries d join subscriptions s on s.id = d.subscription_id
      where d.status = 'DELIVERED' and s.kind <> 'notify-seller'`
    t.equal(receiver.received.length, http[0].n, 'each request the receiver got is a delivery recorded once')
    t.notOk(worker.lines.some((l) => l.msg === 'claimed deliveries not released: due when their lease ends' ||
      l.msg === 'delivery attempts not recorded: they will be retried'), 'what was claimed was given back, what was sent written')
    const stopping = worker.lines.find((l) => l.msg === 'stopping the worker: finishing jobs in hand')
    const stopped = worker.lines.find((l) => l.msg === 'effects worker stopped')
    t.comment(`stop took ${stopped && stopping ? stopped.time - stopping.time : '?'} ms`)
    t.notOk(worker.lines.some((l) => l.level >= 50), `nothing logged as an error: ${JSON.stringify(worker.lines.filter((l) => l.level >= 50)).slice(0, 500)}`)
    worker = null
  }
  // The operator's endpoint once per event; WhatsApp twice (the customer's and the messaging channel's, alike).
  const times = new Map<string, number>()
  for (const r of receiver.received) {
    const key = r.url === '/hooks' ? `operator ${String(r.headers['webhook-id'])}` : `whatsapp ${String(JSON.parse(r.rawBody).biz_opaque_callback_data)}`
    times.set(key, (times.get(key) ?? 0) + 1)
  }
  t.same([...times].filter(([key, n]) => n > (key.startsWith('operator') ? 1 : 2)), [], 'no request more often than its subscriptions across the three workers')
})

t.test('a stopped pool releases the jobs it still holds (a completion that could not be written)', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [a, b] = await ordersIn(database, 'ORDER_PLACED', 2)
  for (const [order, pool] of [[a, 'pool-stopping'], [b, 'pool-other']] as const) {
    const runAt = new Date(Date.now() + 3_600_000)
    await addJob(database.db, TASKS.autoReject, { orderId: order.id }, { jobKey: pool, runAt })
    await database.sql`update graphile_worker._private_jobs set locked_by = ${pool}, locked_at = now() where key = ${pool}`
  }
  const { logger, lines } = captureLogger('info')
  const liveness = new WorkerLiveness(database.url, logger, 60_000)
  await liveness.open()
  liveness.hold('pool-stopping')
  t.teardown(() => liveness.close())
  t.equal(await liveness.releaseOwnJobs(), 1)
  const locks = await database.sql`select key, locked_by from graphile_worker._private_jobs where key like 'pool-%' order by key`
  t.same(locks.map((r) => [r.key, r.locked_by]), [['pool-other', 'pool-other'], ['pool-stopping', null]],
    'its own job is back in the queue; another pool\'s is not touched')
  t.ok(lines.some((l) => l.msg === 'released jobs the stopped worker still held; they will run again' && l.jobs === 1))
  t.equal(await liveness.releaseOwnJobs(), 0, 'nothing left the second time')
})
