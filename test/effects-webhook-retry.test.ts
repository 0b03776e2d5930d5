import t from 'tap'
import { testDatabase } from './helpers/build.js'
import { seedDemo } from './helpers/fixtures.js'
import { startReceiver } from './helpers/receiver.js'
import { captureLogger, deliveryRow, ordersIn, startTestWorker, waitFor, notifyPayload } from './helpers/effects.js'
import { enqueueNotification } from './helpers/jobs.js'
import { verifySignature } from './helpers/webhook-signature.js'
import { Webhook } from 'standardwebhooks'

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

// graphile-worker 0.17 retries after exp(attempt) seconds: 2.7 s, then 7.4 s. This test takes ~11 s.
t.test('a receiver answering 500, 500, then 200 gets the event three times with one event id; the job ends delivered', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 30)
  const receiver = await startReceiver(t, (_r, i) => (i < 2 ? 500 : 200))
  const { logger, lines } = captureLogger()
  await startTestWorker(t, database, { NOTIFY_SELLER_TRANSPORT: 'webhook', WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET }, logger)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const payload = notifyPayload(order, 'seller', 'order.accepted')
  await database.db.transaction((tx) => enqueueNotification(tx, payload))

  await waitFor(t, 'first failure recorded', async () => (await deliveryRow(database, payload.eventId))?.attempts === 1)
  t.match(await deliveryRow(database, payload.eventId), { status: 'PENDING', attempts: 1, last_error: 'webhook answered HTTP 500' })
  await waitFor(t, 'delivered', async () => (await deliveryRow(database, payload.eventId))?.status === 'DELIVERED', 40_000)

  t.equal(receiver.received.length, 3)
  t.same(receiver.received.map((r) => r.headers['x-order-exchange-event-id']), [payload.eventId, payload.eventId, payload.eventId], 'the same event id each time')
  t.same(new Set(receiver.received.map((r) => JSON.parse(r.rawBody).id)).size, 1)
  for (const r of receiver.received) t.ok(verifySignature(SECRET, r.rawBody, r.headers['x-order-exchange-signature'] as string), 'each attempt signed')
  t.same(receiver.received.map((r) => r.headers['webhook-id']), [payload.eventId, payload.eventId, payload.eventId], 'the same webhook-id each time')
  for (const r of receiver.received) t.doesNotThrow(() => new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), 'each attempt verifies (Standard Webhooks)')
  t.equal(new Set(receiver.received.map((r) => r.headers['webhook-timestamp'])).size, 3, 'each attempt with its own timestamp')
  t.ok(receiver.received[1].at - receiver.received[0].at >= 2000, 'backed off before the second attempt')
  t.ok(receiver.received[2].at - receiver.received[1].at > receiver.received[1].at - receiver.received[0].at, 'and longer before the third')
  t.match(await deliveryRow(database, payload.eventId), { status: 'DELIVERED', attempts: 3, last_error: null })
  await waitFor(t, 'job gone', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notify'`)[0].n === 0)
  t.equal(lines.filter((l) => l.level >= 50).length, 0, 'retried failures are not errors')
  t.ok(lines.some((l) => l.level === 40 && /webhook answered HTTP 500/.test(l.msg)), 'each failed attempt is a warning')
})
