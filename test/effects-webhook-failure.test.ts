import t from 'tap'
import { testDatabase } from './helpers/build.js'
import { seedDemo } from './helpers/fixtures.js'
import { startReceiver } from './helpers/receiver.js'
import { captureLogger, deliveryRow, ordersIn, startTestWorker, waitFor, notifyPayload } from './helpers/effects.js'
import { TASKS } from '../src/effects/jobs.js'
import { addJob } from './helpers/jobs.js'
import { notificationDeliveries } from '../src/db/schema.js'

// Three attempts (2.7 s and 7.4 s of backoff between them): about 11 s.
t.test('a receiver that never succeeds leaves a failed job after the set attempts, logged at error level', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 30)
  // The first attempt times out, the others get 503.
  const receiver = await startReceiver(t, (_r, i) => (i === 0 ? 'hang' : 503))
  const { logger, lines } = captureLogger()
  await startTestWorker(t, database, {
    NOTIFY_CUSTOMER_TRANSPORT: 'webhook', WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz', WEBHOOK_TIMEOUT_MS: '300'
  }, logger)
  const [order] = await ordersIn(database, 'ORDER_ACCEPTED', 1)
  const payload = notifyPayload(order, 'customer', 'order.completed')
  await database.db.transaction(async (tx) => {
    await tx.insert(notificationDeliveries).values({ eventId: payload.eventId, orderId: order.id, sellerId: order.sellerId, channel: 'customer', eventType: payload.eventType })
    await addJob(tx, TASKS.notify, payload, { maxAttempts: 3 })
  })

  await waitFor(t, 'the first attempt timed out', async () => (await deliveryRow(database, payload.eventId))?.attempts === 1)
  t.match(await deliveryRow(database, payload.eventId), { status: 'PENDING', last_error: 'webhook timed out after 300 ms' })
  await waitFor(t, 'given up', async () => (await deliveryRow(database, payload.eventId))?.status === 'FAILED', 40_000)

  t.equal(receiver.received.length, 3, 'three attempts')
  t.ok(receiver.received.every((r) => r.headers['x-order-exchange-event-id'] === payload.eventId))
  t.match(await deliveryRow(database, payload.eventId), { status: 'FAILED', attempts: 3, last_error: 'webhook answered HTTP 503', delivered_at: null })
  await waitFor(t, 'the job released', async () => (await database.sql`select locked_at from graphile_worker.jobs where task_identifier = 'notify'`)[0]?.locked_at === null)
  const jobs = await database.sql`select j.task_identifier, j.attempts, j.max_attempts, j.last_error, p.payload from graphile_worker.jobs j join graphile_worker._private_jobs p on p.id = j.id where j.task_identifier = 'notify'`
  t.equal(jobs.length, 1, 'the failed job stays visible')
  t.match(jobs[0], { task_identifier: 'notify', attempts: 3, max_attempts: 3, last_error: 'webhook answered HTTP 503' })
  t.equal(jobs[0].payload.eventId, payload.eventId)

  const errors = lines.filter((l) => l.level >= 50)
  t.ok(errors.some((l) => l.msg === 'notification failed for good: no more retries' && l.eventId === payload.eventId && l.attempts === 3), 'our error line names the event')
  t.ok(errors.some((l) => /attempt 3 of 3/.test(l.msg)), "graphile-worker's last failure is an error")
  t.notOk(errors.some((l) => /attempt [12] of 3/.test(l.msg)), 'earlier failures are not')

  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(receiver.received.length, 3, 'no fourth attempt')
})
