import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { build, testDatabase } from '../helpers/build.js'
import { createShop, post, accept } from '../helpers/status-update.js'
import { seedDemo } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import { deliveriesOf, deliveryOf, lastEventId, notificationsOf, ordersIn, recordOrderEvent, startTestWorker } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { standardWebhookHeaders } from '../../src/outbound/standard-signature.js'

/*
 * The operator's firehose: WEBHOOK_URL (with WEBHOOK_SECRET) is the 'operator-webhook' subscription, which
 * gets every event of every seller once (no longer once per notification channel), signed the Standard
 * Webhooks way; its body is the event as the feed has it.
 */

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

/** Standard Webhooks verification as a receiver does it: the error's message, or null when it verifies. */
function verifyError (body: string, headers: Record<string, string>, secret = SECRET): string | null {
  try {
    new Webhook(secret).verify(body, headers)
    return null
  } catch (err) {
    return (err as Error).message
  }
}

t.test('signature: verifies its own, refuses tampering, replays and junk', async (t) => {
  const body = '{"id":"evt_1_1","type":"order.accepted"}'
  const at = new Date(Date.now() - 10_000)
  const headers = standardWebhookHeaders('evt_1_1', at, body, [SECRET])
  t.match(headers, { 'webhook-id': 'evt_1_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': /^v1,[A-Za-z0-9+/]{43}=$/ })
  t.equal(verifyError(body, headers), null)
  const old = standardWebhookHeaders('evt_1_1', new Date(Date.now() - 299_000), body, [SECRET])
  t.equal(verifyError(body, old), null, 'within 5 minutes')
  const replay = standardWebhookHeaders('evt_1_1', new Date(Date.now() - 301_000), body, [SECRET])
  t.equal(verifyError(body, replay), 'Message timestamp too old', 'a replay older than 5 minutes')
  t.equal(verifyError(`${body} `, headers), 'No matching signature found', 'another body')
  t.equal(verifyError(body, headers, 'whsec_YW5vdGhlci1zZWNyZXQtMDEyMzQ1Njc4OQ=='), 'No matching signature found', 'another secret')
  t.equal(verifyError(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }), 'No matching signature found', 'another timestamp')
  t.equal(verifyError(body, { ...headers, 'webhook-id': 'evt_1_2' }), 'No matching signature found', 'another id')
  t.equal(verifyError(body, {}), 'Missing required headers')
  t.equal(verifyError(body, { ...headers, 'webhook-signature': 'garbage' }), 'No matching signature found')
  t.equal(verifyError(body, { ...headers, 'webhook-signature': 'v1,zz' }), 'No matching signature found')
})

t.test('an order event reaches the operator\'s endpoint once, signed, as the event; the notifications go to their channels', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 60)
  const receiver = await startReceiver(t)
  const worker = await startTestWorker(t, database, { WEBHOOK_URL: `${receiver.url}/hooks/orders`, WEBHOOK_SECRET: SECRET })
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const [orderRow] = await database.sql`select order_number, order_total_final, store_id from orders where id = ${order.id}`
  await recordOrderEvent(database, order, 'order.rejected', 'Out of stock')
  const id = (await lastEventId(database, order.sellerId))!
  t.match(id, new RegExp(`^evt_${order.sellerId}_\\d+$`))

  await eventually(t, 'the delivery', () => receiver.received.length >= 1)
  await eventually(t, 'every delivery recorded', async () => (await deliveriesOf(database, { orderId: order.id })).every((d) => d.status === 'DELIVERED'))
  const r = receiver.received[0]
  t.equal(r.method, 'POST')
  t.equal(r.url, '/hooks/orders')
  t.equal(r.headers['content-type'], 'application/json')
  t.equal(r.headers['webhook-id'], id, 'webhook-id is the event id')
  t.same(new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), JSON.parse(r.rawBody), 'Standard Webhooks verifies')
  t.throws(() => new Webhook(SECRET).verify(`${r.rawBody} `, r.headers as Record<string, string>), { name: 'WebhookVerificationError' })
  t.notOk(r.headers['x-order-exchange-signature'] ?? r.headers['x-order-exchange-event-id'] ?? r.headers['x-order-exchange-event-type'],
    'the old X-Order-Exchange headers are gone')
  const body = JSON.parse(r.rawBody)
  t.same(Object.keys(body).sort(), ['data', 'id', 'sequence', 'timestamp', 'type'])
  t.equal(body.id, id)
  t.equal(body.type, 'order.rejected')
  t.equal(`evt_${order.sellerId}_${String(body.sequence)}`, id)
  t.match(body.timestamp, /^\d{4}-\d\d-\d\dT/)
  t.match(body.data, { previousStatus: 'ORDER_PLACED', reason: 'Out of stock' })
  t.match(body.data.order, {
    orderId: String(order.id),
    orderNumber: orderRow.order_number,
    companyId: order.sellerId,
    storeId: orderRow.store_id
  })
  t.equal(Number(body.data.order.orderTotalFinal), Number(orderRow.order_total_final))

  t.match(await deliveryOf(database, 'operator-webhook', id), { status: 'DELIVERED', attempts: 1, lastError: null, lastHttpStatus: 200 })
  const notes = await notificationsOf(database, order.id)
  t.same(notes.map((n) => [n.channel, n.status, n.attempts, n.eventId]).sort(), [
    ['customer', 'DELIVERED', 1, id], ['messaging', 'DELIVERED', 1, id], ['seller', 'DELIVERED', 1, id]
  ], 'one notification per notification subscription, under the same event id')

  // Dispatching again (another deliverer waking, a sweep) queues nothing twice.
  t.match(await dispatchEvents(database.db), { queued: 0 })
  // Drained: nothing left to deliver, and the worker stopped (no attempt still on its way to the receiver).
  await eventually(t, 'nothing left to deliver', async () => (await deliveriesOf(database)).every((d) => d.status !== 'PENDING'))
  await worker.stop()
  t.equal(receiver.received.length, 1, 'no second delivery of a recorded event')
  t.equal((await deliveriesOf(database, { orderId: order.id })).length, 4, 'four deliveries: the operator\'s and three notifications')
})

t.test('an accept through the status update endpoint reaches the operator\'s endpoint as one signed event; a retry sends nothing more', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, { pointsBalance: '500.00' })
  const receiver = await startReceiver(t)
  const worker = await startTestWorker(t, database, { WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET })
  const orderId = await shop.order({ paymentMode: 'PREPAID' })
  const res = await post(app, await shop.apiKey(), { order_status: [accept(orderId)] })
  t.equal(res.statusCode, 200)
  t.equal(res.body.data.successful, 1)
  await eventually(t, 'one delivery', () => receiver.received.length >= 1)
  const id = (await lastEventId(database, shop.sellerId))!
  const [r] = receiver.received
  t.doesNotThrow(() => new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), 'Standard Webhooks verifies')
  const body = JSON.parse(r.rawBody)
  t.equal(body.id, id)
  t.equal(r.headers['webhook-id'], id)
  t.match(body, { type: 'order.accepted', data: { order: { orderId: String(orderId) }, previousStatus: 'ORDER_PLACED', reason: null } })

  // The same accept again (a retried request): unchanged, no event, nothing sent.
  const again = await post(app, await shop.apiKey(), { order_status: [accept(orderId)] })
  t.equal(again.statusCode, 200)
  await eventually(t, 'the notifications delivered', async () => (await notificationsOf(database, orderId)).filter((n) => n.status === 'DELIVERED').length === 3)
  // Drained: whatever the log holds dispatched and delivered (a second event would be, before this holds), and
  // the worker stopped (no attempt still on its way to the receiver).
  await eventually(t, 'nothing left to deliver', async () => (await deliveriesOf(database)).every((d) => d.status !== 'PENDING'))
  await worker.stop()
  t.equal(receiver.received.length, 1, 'one event, one delivery')
  t.same((await notificationsOf(database, orderId)).map((n) => n.eventId), [id, id, id])
})
