import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import {
  attemptsOf, captureLogger, deliveryOf, lastEventId, operatorEndpoint, ordersIn, recordOrderEvent, startDeliverer,
  startTestWorker
} from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { RETRY_WAITS_MS } from '../../src/delivery/retry-schedule.js'

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

// The deliverer's schedule with seconds for hours: 1.1 s, then 2.2 s (each attempt signed at another second).
const fastWait = (attempt: number, retryAfterMs: number | null): number | null => retryAfterMs ?? attempt * 1100

t.test('a receiver answering 500, 500, then 200 gets the event three times with one event id; the delivery ends delivered', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 30)
  const receiver = await startReceiver(t, (_r, i) => (i < 2 ? 500 : 200))
  const { logger, lines } = captureLogger()
  await startDeliverer(t, database, { operator: operatorEndpoint(receiver.url, SECRET), retryWait: fastWait, logger })
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.accepted')
  const id = (await lastEventId(database, order.sellerId))!

  await eventually(t, 'first failure recorded', async () => (await deliveryOf(database, 'operator-webhook', id))?.attempts === 1)
  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'PENDING', attempts: 1, lastHttpStatus: 500, lastError: 'HTTP 500' })
  await eventually(t, 'delivered', async () => (await deliveryOf(database, 'operator-webhook', id))?.status === 'DELIVERED', { timeoutMs: 40_000 })

  t.equal(receiver.received.length, 3)
  t.same(receiver.received.map((r) => r.headers['webhook-id']), [id, id, id], 'the same webhook-id each time')
  t.equal(new Set(receiver.received.map((r) => JSON.parse(r.rawBody).id)).size, 1)
  t.equal(JSON.parse(receiver.received[0].rawBody).id, id)
  for (const r of receiver.received) t.doesNotThrow(() => new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), 'each attempt verifies (Standard Webhooks)')
  t.equal(new Set(receiver.received.map((r) => r.headers['webhook-timestamp'])).size, 3, 'each attempt with its own timestamp')
  // Each wait runs from the moment the failure was written, after it was received: a gap is at least its wait
  // (and may be longer on a busy machine, so the two gaps are not compared with each other).
  t.ok(receiver.received[1].at - receiver.received[0].at >= 1050, 'backed off before the second attempt (1.1 s)')
  t.ok(receiver.received[2].at - receiver.received[1].at >= 2150, 'and longer before the third (2.2 s)')
  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'DELIVERED', attempts: 3, lastError: null, lastHttpStatus: 200 })
  t.match(await attemptsOf(database, 'operator-webhook', id), [
    { attempt: 1, succeeded: false, httpStatus: 500 },
    { attempt: 2, succeeded: false, httpStatus: 500 },
    { attempt: 3, succeeded: true, httpStatus: 200 }
  ], 'every attempt in the delivery log')
  t.equal(lines.filter((l) => l.level >= 50).length, 0, 'retried failures are not errors')
})

t.test('the worker retries on the deliverer\'s schedule: the first retry about 5 s after a failure', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 30)
  const receiver = await startReceiver(t, () => 503)
  await startTestWorker(t, database, { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET })
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.accepted')
  const id = (await lastEventId(database, order.sellerId))!
  await eventually(t, 'first failure recorded', async () => (await deliveryOf(database, 'operator-webhook', id))?.attempts === 1)
  const [row] = await database.sql`select d.status::text as status,
      extract(epoch from d.next_attempt_at - a.attempted_at)::float8 * 1000 as wait
    from deliveries d join subscriptions s on s.id = d.subscription_id join delivery_attempts a on a.delivery_id = d.id
    where s.kind = 'operator-webhook' and d.order_id = ${order.id}`
  t.equal(row.status, 'PENDING')
  t.ok(row.wait >= RETRY_WAITS_MS[0]! * 0.9 - 500 && row.wait <= RETRY_WAITS_MS[0]! * 1.1 + 500, `retried in ${Math.round(row.wait)} ms (5 s ± 10 %)`)
  t.equal(receiver.received.length, 1, 'not sooner')
})
