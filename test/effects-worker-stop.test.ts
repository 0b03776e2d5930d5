import t from 'tap'
import { testDatabase } from './helpers/build.js'
import { seedDemo } from './helpers/fixtures.js'
import { captureLogger, enqueueEvent, notifyPayload, ordersIn, waitFor } from './helpers/effects.js'
import { addJob } from './helpers/jobs.js'
import { TASKS } from '../src/effects/jobs.js'
import { WorkerLiveness } from '../src/effects/crash-recovery.js'
import { startReceiver } from './helpers/receiver.js'
import { spawnWorker } from './helpers/worker-process.js'

/*
 * A graceful stop finishes or releases its jobs: after SIGTERM and exit code 0, no job of the queue is left
 * locked by the stopped worker (such a job waited for the next start's crash recovery, "workers that died
 * mid-job", before it ran again). A real `order-exchange worker` process, a long queue of notifications and
 * a slow receiver: the stop comes while jobs are in flight and completions are being written.
 */

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

t.test('SIGTERM mid-queue: exit 0, no job left locked, every job delivered or still queued', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 200)
  // Each answer takes its time, as a real endpoint's does: a stop always meets jobs in hand.
  const receiver = await startReceiver(t, async () => {
    await new Promise((resolve) => setTimeout(resolve, 40))
    return 200
  })
  const env = {
    DATABASE_URL: database.url,
    NOTIFY_SELLER_TRANSPORT: 'webhook',
    NOTIFY_CUSTOMER_TRANSPORT: 'webhook',
    NOTIFY_MESSAGING_TRANSPORT: 'webhook',
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: SECRET,
    WORKER_CONCURRENCY: '8',
    WORKER_POLL_INTERVAL_MS: '200'
  }
  const orders = await ordersIn(database, 'ORDER_PLACED', 60)
  for (const order of orders) await enqueueEvent(database, order, 'order.accepted')
  const total = orders.length * 3
  const jobs = async () => (await database.sql`select count(*)::int as queued,
      count(*) filter (where locked_by is not null)::int as locked,
      coalesce(array_agg(distinct locked_by) filter (where locked_by is not null), '{}') as lockers
    from graphile_worker.jobs where task_identifier = 'notify'`)[0] as { queued: number, locked: number, lockers: string[] }

  // Three stops at different points of the queue, each by a fresh worker process.
  for (const after of [10, 50, 100]) {
    const worker = await spawnWorker(t, env)
    await waitFor(t, `${after} deliveries`, () => receiver.received.length >= after, 60_000)
    worker.child.kill('SIGTERM')
    t.same(await worker.exited, { code: 0, signal: null }, `SIGTERM after ${after} deliveries: a graceful stop, exit 0`)
    const left = await jobs()
    t.equal(left.locked, 0, `no job left locked after the stop (${JSON.stringify(left.lockers)})`)
    const [{ delivered }] = await database.sql`select count(*)::int as delivered from notification_deliveries where status = 'DELIVERED'`
    t.equal(delivered + left.queued, total, 'every job is delivered or still in the queue')
    t.notOk(worker.lines.some((l) => l.msg === 'released jobs the stopped worker still held; they will run again'),
      'the jobs in hand were finished, their completions written: none was left to release')
    const stopping = worker.lines.find((l) => l.msg === 'stopping the worker: finishing jobs in hand')
    const stopped = worker.lines.find((l) => l.msg === 'effects worker stopped')
    t.comment(`stop took ${stopped && stopping ? stopped.time - stopping.time : '?'} ms`)
    t.notOk(worker.lines.some((l) => l.level >= 50), `nothing logged as an error: ${JSON.stringify(worker.lines.filter((l) => l.level >= 50)).slice(0, 500)}`)
  }
})

t.test('a stopped pool releases the jobs it still holds (a completion that could not be written)', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [a, b] = await ordersIn(database, 'ORDER_PLACED', 2)
  for (const [order, pool] of [[a, 'pool-stopping'], [b, 'pool-other']] as const) {
    await addJob(database.db, TASKS.notify, notifyPayload(order, 'seller'), { jobKey: pool })
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
