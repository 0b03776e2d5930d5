import t from 'tap'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import {
  attemptsOf, deliveryOf, lastEventId, operatorEndpoint, recordOrderEvent, startDeliverer
} from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { logTransport } from '../../src/effects/transports/log.js'
import { whatsappCloudTransport } from '../../src/effects/transports/whatsapp-cloud.js'
import pino from 'pino'

const TEMPLATES = {
  'order.accepted': 'a', 'order.rejected': 'r', 'order.completed': 'c', 'order.placed': 'p', 'order.cancelled': 'x', 'order.delivered': 'd'
}

// Three attempts, then given up (the deliverer's schedule, in fractions of a second).
const threeAttempts = (attempt: number): number | null => (attempt >= 3 ? null : 300 * attempt)

t.test('a receiver that never succeeds leaves a failed delivery after the set attempts; its order\'s next event goes then', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 30)
  // The first attempt times out, the others get 503: the operator's endpoint and a WhatsApp stand-in alike.
  const seen = new Set<string>()
  const receiver = await startReceiver(t, (r) => {
    if (seen.has(r.url)) return 503
    seen.add(r.url)
    return 'hang'
  })
  const silent = pino({ level: 'silent' })
  const log = logTransport(silent)
  const whatsapp = whatsappCloudTransport({ baseUrl: `${receiver.url}/wa`, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 300 })
  await startDeliverer(t, database, {
    operator: operatorEndpoint(`${receiver.url}/hooks`, 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'),
    channels: { seller: log, customer: log, messaging: whatsapp },
    timeoutMs: 300,
    retryWait: threeAttempts
  })
  const [order] = (await database.sql`select o.id::int as id, o.seller_id as "sellerId" from orders o join retailers r on r.id = o.retailer_id
    where o.status = 'ORDER_ACCEPTED' and not o.is_deleted and coalesce(r.whatsapp, r.phone) is not null order by o.id limit 1`) as unknown as Array<{ id: number, sellerId: number }>
  t.ok(order, 'an accepted order of a retailer with a phone')
  await recordOrderEvent(database, order, 'order.completed')
  const id = (await lastEventId(database, order.sellerId))!

  await eventually(t, 'the first attempts timed out', async () =>
    (await deliveryOf(database, 'operator-webhook', id))?.attempts === 1 && (await deliveryOf(database, 'notify-messaging', id))?.attempts === 1)
  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'PENDING', lastError: 'timed out after 300 ms' })
  t.match(await deliveryOf(database, 'notify-messaging', id), { status: 'PENDING', lastError: 'whatsapp-cloud: whatsapp-cloud timed out after 300 ms' })
  await eventually(t, 'given up', async () =>
    (await deliveryOf(database, 'operator-webhook', id))?.status === 'FAILED' && (await deliveryOf(database, 'notify-messaging', id))?.status === 'FAILED', { timeoutMs: 40_000 })

  const hooks = receiver.received.filter((r) => r.url === '/hooks')
  const messages = receiver.received.filter((r) => r.url === '/wa/1/messages')
  t.equal(hooks.length, 3, 'three attempts to the operator\'s endpoint')
  t.equal(messages.length, 3, 'three to WhatsApp')
  t.ok(hooks.every((r) => r.headers['webhook-id'] === id), 'each with the event id')
  t.ok(messages.every((r) => JSON.parse(r.rawBody).biz_opaque_callback_data === id))
  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'FAILED', attempts: 3, lastError: 'HTTP 503', lastHttpStatus: 503 })
  t.match(await deliveryOf(database, 'notify-messaging', id), { status: 'FAILED', attempts: 3, lastError: 'whatsapp-cloud: whatsapp-cloud answered HTTP 503' })
  t.same((await attemptsOf(database, 'operator-webhook', id)).map((a) => [a.attempt, a.succeeded]), [[1, false], [2, false], [3, false]], 'every attempt in the log')
  t.match(await deliveryOf(database, 'notify-seller', id), { status: 'DELIVERED', attempts: 1 }, 'the other channels are not held back')
  const [finished] = await database.sql`select count(*)::int as n from deliveries where status = 'FAILED' and finished_at is not null`
  t.equal(finished.n, 2, 'the failed deliveries are finished')

  // Given up, the order's next event is not held behind it.
  await recordOrderEvent(database, order, 'order.delivered')
  const next = (await lastEventId(database, order.sellerId))!
  await eventually(t, 'the next event sent', () => receiver.received.some((r) => r.headers['webhook-id'] === next))
  // Drained (nothing pending: the next event's deliveries given up too), the first event had no fourth attempt.
  await eventually(t, 'nothing left pending', async () =>
    (await database.sql`select count(*)::int as n from deliveries where status = 'PENDING'`)[0].n === 0, { timeoutMs: 40_000 })
  const ofFirst = receiver.received.filter((r) => r.headers['webhook-id'] === id ||
    (r.url === '/wa/1/messages' && JSON.parse(r.rawBody).biz_opaque_callback_data === id))
  t.equal(ofFirst.length, 6, 'no fourth attempt')
})
