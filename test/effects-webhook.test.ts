import t from 'tap'
import { build, testDatabase } from './helpers/build.js'
import { createShop, post, accept } from './status-update/helpers.js'
import { seedDemo } from './helpers/fixtures.js'
import { startReceiver } from './helpers/receiver.js'
import { deliveryRow, enqueueEvent, ordersIn, startTestWorker, waitFor } from './helpers/effects.js'
import { signatureHeader } from '../src/effects/transports/signature.js'
import { verifySignature } from './helpers/webhook-signature.js'
import { Webhook } from 'standardwebhooks'

const SECRET = 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'

t.test('signature: verifies its own, refuses tampering, replays and junk', async (t) => {
  const body = '{"id":"1:ORDER_ACCEPTED:seller"}'
  const now = 1_800_000_000
  const header = signatureHeader(SECRET, now, body)
  t.match(header, /^t=1800000000,v1=[0-9a-f]{64}$/)
  t.ok(verifySignature(SECRET, body, header, { now }))
  t.ok(verifySignature(SECRET, body, header, { now: now + 299 }), 'within 5 minutes')
  t.notOk(verifySignature(SECRET, body, header, { now: now + 301 }), 'a replay older than 5 minutes')
  t.notOk(verifySignature(SECRET, body + ' ', header, { now }), 'another body')
  t.notOk(verifySignature('another-secret-0123456789', body, header, { now }), 'another secret')
  t.notOk(verifySignature(SECRET, body, header.replace('t=1800000000', 't=1800000001'), { now }), 'another timestamp')
  t.notOk(verifySignature(SECRET, body, undefined))
  t.notOk(verifySignature(SECRET, body, 'garbage', { now }))
  t.notOk(verifySignature(SECRET, body, 't=1800000000,v1=zz', { now }))
})

t.test('an order event becomes three signed webhook deliveries that verify, once each', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 60)
  const receiver = await startReceiver(t)
  await startTestWorker(t, database, {
    NOTIFY_SELLER_TRANSPORT: 'webhook',
    NOTIFY_CUSTOMER_TRANSPORT: 'webhook',
    NOTIFY_MESSAGING_TRANSPORT: 'webhook',
    WEBHOOK_URL: `${receiver.url}/hooks/orders`,
    WEBHOOK_SECRET: SECRET
  })
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const [orderRow] = await database.sql`select order_number, order_total_final, store_id from orders where id = ${order.id}`
  const payloads = await enqueueEvent(database, order, 'order.rejected')

  await waitFor(t, 'three deliveries', () => receiver.received.length >= 3)
  await waitFor(t, 'rows delivered', async () => {
    const rows = await database.sql`select count(*)::int as n from notification_deliveries where order_id = ${order.id} and status = 'DELIVERED'`
    return rows[0].n === 3
  })
  t.equal(receiver.received.length, 3, 'each event delivered once')
  const byId = new Map(receiver.received.map((r) => [r.headers['x-order-exchange-event-id'], r]))
  for (const p of payloads) {
    const r = byId.get(p.eventId)
    if (!t.ok(r, `delivered ${p.eventId}`) || !r) continue
    t.equal(r.method, 'POST')
    t.equal(r.url, '/hooks/orders')
    t.equal(r.headers['content-type'], 'application/json')
    t.equal(r.headers['x-order-exchange-event-type'], 'order.rejected')
    t.ok(verifySignature(SECRET, r.rawBody, r.headers['x-order-exchange-signature'] as string), 'the signature verifies')
    t.equal(r.headers['webhook-id'], p.eventId)
    t.same(new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), JSON.parse(r.rawBody), 'Standard Webhooks verifies')
    t.throws(() => new Webhook(SECRET).verify(`${r.rawBody} `, r.headers as Record<string, string>), { name: 'WebhookVerificationError' })
    const body = JSON.parse(r.rawBody)
    t.equal(body.id, p.eventId)
    t.equal(body.type, 'order.rejected')
    t.equal(body.channel, p.channel)
    t.equal(body.occurredAt, p.occurredAt)
    t.match(body.data, {
      orderId: order.id,
      orderNumber: orderRow.order_number,
      orderStatus: 'ORDER_REJECTED_BY_SELLER',
      reason: 'Out of stock',
      companyId: order.sellerId,
      storeId: orderRow.store_id,
      orderTotalFinal: orderRow.order_total_final,
      currencyCode: 'INR',
      seller: { companyId: order.sellerId, name: String },
      retailer: { retailerId: Number, name: String }
    })
    const row = await deliveryRow(database, p.eventId)
    t.match(row, { status: 'DELIVERED', attempts: 1, last_error: null, channel: p.channel, event_type: 'order.rejected' })
    t.ok(row?.delivered_at, 'delivered_at set')
  }
  t.equal(payloads[0].eventId, `${order.id}:ORDER_REJECTED_BY_SELLER:seller`, 'event id = order + transition + channel')
  await waitFor(t, 'jobs completed', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notify'`)[0].n === 0)

  // Enqueueing the same event again (a retried status update) sends nothing new.
  await enqueueEvent(database, order, 'order.rejected')
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal(receiver.received.length, 3, 'no second delivery of a recorded event')
})

t.test('an accept through the status update endpoint reaches the receiver as three signed events', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, { pointsBalance: '500.00' })
  const receiver = await startReceiver(t)
  await startTestWorker(t, database, {
    NOTIFY_SELLER_TRANSPORT: 'webhook', NOTIFY_CUSTOMER_TRANSPORT: 'webhook', NOTIFY_MESSAGING_TRANSPORT: 'webhook', WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: SECRET
  })
  const orderId = await shop.order({ paymentMode: 'PREPAID' })
  const res = await post(app, await shop.apiKey(), { order_status: [accept(orderId)] })
  t.equal(res.statusCode, 200)
  t.equal(res.body.data.successful, 1)
  await waitFor(t, 'three deliveries', () => receiver.received.length >= 3)
  const bodies = receiver.received.map((r) => {
    t.ok(verifySignature(SECRET, r.rawBody, r.headers['x-order-exchange-signature'] as string), 'verifies')
    t.doesNotThrow(() => new Webhook(SECRET).verify(r.rawBody, r.headers as Record<string, string>), 'Standard Webhooks verifies')
    return JSON.parse(r.rawBody)
  })
  t.same(bodies.map((b) => b.id).sort(), ['customer', 'messaging', 'seller'].map((c) => `${orderId}:ORDER_ACCEPTED:${c}`))
  t.ok(bodies.every((b) => b.type === 'order.accepted' && b.data.orderId === orderId && b.data.orderStatus === 'ORDER_ACCEPTED' && b.data.reason === null))
})
