import v8 from 'node:v8'
import vm from 'node:vm'
import t from 'tap'
import pino from 'pino'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import {
  attemptsOf, captureLogger, deliveriesOf, deliveryOf, lastEventId, notificationOfEvent, notificationsOf,
  operatorEndpoint, ordersIn, recordOrderEvent, startDeliverer, startTestWorker, workerEnv
} from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { notificationText } from '../../src/effects/notification.js'
import { createTransports } from '../../src/effects/transports/factory.js'
import { maskPhone } from '../../src/effects/transports/log.js'
import { whatsappCloudTransport } from '../../src/effects/transports/whatsapp-cloud.js'
import { operatorEndpointOf } from '../../src/delivery/shared-subscriptions.js'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { newEndpointSecret, operatorSigningKey, standardSecretKey, standardSecretOf, standardWebhookHeaders } from '../../src/outbound/standard-signature.js'

const TEMPLATES = {
  'order.accepted': 'a', 'order.rejected': 'r', 'order.completed': 'c', 'order.placed': 'p', 'order.cancelled': 'x', 'order.delivered': 'd'
}

const WA = { WHATSAPP_PHONE_NUMBER_ID: '106540352242922', WHATSAPP_ACCESS_TOKEN: 'EAAG-test-token' }

/** The Standard Webhooks headers of a received request, as a receiver hands them to its library. */
function headersOf (r: { headers: Record<string, string | string[] | undefined> }): Record<string, string> {
  return Object.fromEntries(Object.entries(r.headers).filter((e): e is [string, string] => typeof e[1] === 'string'))
}

/** Standard Webhooks verification as a receiver does it; the error's message when it refuses. */
function verifyError (secret: string, body: string, headers: Record<string, string>): string | null {
  try {
    new Webhook(secret).verify(body, headers)
    return null
  } catch (err) {
    return err instanceof WebhookVerificationError ? err.message : `not a WebhookVerificationError: ${String(err)}`
  }
}

t.test('the operator\'s endpoint gets Standard Webhooks headers that the standardwebhooks library verifies', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 10)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  // Non-ASCII in the signed body: the event's order is read as it is now, its retailer's name included.
  await database.sql`update retailers set name = 'Zoë Ñúñez 🛒' where id = (select retailer_id from orders where id = ${order!.id})`
  const whsec = newEndpointSecret()
  const cases = [
    { what: 'a whsec_ secret: the receiver uses it as is', configured: whsec, receiver: whsec },
    // docs/operate/effects.md's claim: a raw secret's Standard Webhooks secret is whsec_ + base64 of its UTF-8 bytes.
    { what: 'a raw ASCII secret', configured: 'operator-secret-0123456789', receiver: `whsec_${Buffer.from('operator-secret-0123456789').toString('base64')}` },
    { what: 'a raw non-ASCII secret (UTF-8 bytes, not UTF-16 code units)', configured: 'clé-secrète-ünïcødé-🔑', receiver: `whsec_${Buffer.from('clé-secrète-ünïcødé-🔑', 'utf8').toString('base64')}` }
  ]
  for (const c of cases) {
    await t.test(c.what, async (t) => {
      const receiver = await startReceiver(t, (_r, i) => (i === 0 ? 503 : 200))
      // The retry is signed at a later second: the deliverer's clock puts the first signature a second back.
      const operator = operatorEndpoint(receiver.url, c.configured)
      let signed = 0
      const now = (): Date => new Date(Date.now() - (signed++ === 0 ? 1000 : 0))
      const deliverer = await startDeliverer(t, database, { operator, retryWait: () => 0, now })
      await recordOrderEvent(database, order!, 'order.accepted')
      const id = (await lastEventId(database, order!.sellerId))!
      await eventually(t, 'delivered on the second attempt', async () => (await deliveryOf(database, 'operator-webhook', id))?.status === 'DELIVERED')
      await deliverer.stop()
      t.match(await attemptsOf(database, 'operator-webhook', id), [{ attempt: 1, httpStatus: 503, error: 'HTTP 503' }, { attempt: 2, httpStatus: 200, error: null }])
      t.equal(receiver.received.length, 2)
      for (const r of receiver.received) {
        const headers = headersOf(r)
        t.equal(headers['webhook-id'], id, 'webhook-id is the event id, on every attempt')
        t.match(headers['webhook-timestamp'], /^\d{10}$/)
        t.ok(Math.abs(Number(headers['webhook-timestamp']) - r.at / 1000) < 5, 'webhook-timestamp: unix seconds, now')
        t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/, 'one v1 signature')
        t.equal(verifyError(c.receiver, r.rawBody, headers), null, 'the standardwebhooks library verifies it')
        t.same(new Webhook(c.receiver).verify(r.rawBody, headers), JSON.parse(r.rawBody), 'and hands back the event')
        t.equal(JSON.parse(r.rawBody).id, id)
        t.equal(JSON.parse(r.rawBody).data.order.retailer.name, 'Zoë Ñúñez 🛒')

        t.equal(verifyError(c.receiver, r.rawBody.replace('Zoë', 'Zoe'), headers), 'No matching signature found', 'a tampered body fails')
        t.equal(verifyError(c.receiver, `${r.rawBody} `, headers), 'No matching signature found', 'an extra byte fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-id': `${id}x` }), 'No matching signature found', 'another id fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }), 'No matching signature found', 'another timestamp fails')
        t.equal(verifyError(newEndpointSecret(), r.rawBody, headers), 'No matching signature found', 'another secret fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 301) }), 'Message timestamp too old', 'an old one is refused')
        const { 'webhook-signature': _gone, ...unsigned } = headers
        t.equal(verifyError(c.receiver, r.rawBody, unsigned), 'Missing required headers')

        // The deprecated headers are gone with the `webhook` transport.
        t.same(Object.keys(r.headers).filter((h) => h.startsWith('x-order-exchange')), [], 'no X-Order-Exchange-* header')
      }
      const [first, second] = receiver.received.map(headersOf)
      t.not(first['webhook-timestamp'], second['webhook-timestamp'], 'each attempt signed afresh')
      t.not(first['webhook-signature'], second['webhook-signature'])
    })
  }
})

t.test('Standard Webhooks signatures with several secrets (rotation): each secret alone verifies', async (t) => {
  const body = JSON.stringify({ id: 'evt_7_42', type: 'order.accepted', note: 'ünïcødé' })
  const oldSecret = newEndpointSecret()
  const rawKey = new TextEncoder().encode('a raw key of the operator')
  const rawKeyAsStandard = `whsec_${Buffer.from(rawKey).toString('base64')}`
  const at = new Date()
  const headers = standardWebhookHeaders('evt_7_42', at, body, [oldSecret, rawKey])
  t.same(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp'])
  t.equal(headers['webhook-id'], 'evt_7_42')
  t.equal(headers['webhook-timestamp'], String(Math.floor(at.getTime() / 1000)))
  const signatures = headers['webhook-signature'].split(' ')
  t.equal(signatures.length, 2, 'two signatures, space-separated')
  t.ok(signatures.every((s) => /^v1,[A-Za-z0-9+/]{43}=$/.test(s)))
  t.not(signatures[0], signatures[1])
  t.equal(signatures[0], standardWebhookHeaders('evt_7_42', at, body, [oldSecret])['webhook-signature'], 'the first is the first secret\'s')
  t.equal(signatures[1], standardWebhookHeaders('evt_7_42', at, body, [rawKeyAsStandard])['webhook-signature'],
    'a key as bytes signs as its whsec_ form does')

  t.equal(verifyError(oldSecret, body, headers), null, 'the old secret alone verifies')
  t.equal(verifyError(rawKeyAsStandard, body, headers), null, 'the new secret alone verifies')
  t.equal(verifyError(oldSecret.replace(/^whsec_/, ''), body, headers), null, 'the prefix is optional to a receiver')
  t.equal(verifyError(newEndpointSecret(), body, headers), 'No matching signature found', 'a third secret does not')
  t.equal(verifyError(oldSecret, body.replace('42', '43'), headers), 'No matching signature found', 'a tampered body fails with either')
  t.equal(verifyError(rawKeyAsStandard, body.replace('42', '43'), headers), 'No matching signature found')
  t.equal(verifyError(oldSecret, body, { ...headers, 'webhook-signature': signatures[1] }), 'No matching signature found', 'only the other secret\'s signature left')

  t.throws(() => standardWebhookHeaders('evt_7_42', at, body, []), { message: /no secret/ })
  t.throws(() => standardWebhookHeaders('evt_7_42', at, body, ['whsec_not base64!']), { message: /Base64/ })
  t.equal(standardSecretOf(rawKey), rawKeyAsStandard)
  t.same(standardSecretKey(rawKeyAsStandard), rawKey, 'and back')

  const secrets = [newEndpointSecret(), newEndpointSecret()]
  t.not(secrets[0], secrets[1], 'new secrets are random')
  for (const s of secrets) {
    t.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/)
    t.equal(Buffer.from(s.slice('whsec_'.length), 'base64').length, 32, '32 bytes')
  }
})

t.test('whatsapp-cloud sends the Cloud API template message to the retailer (whatsapp, else phone)', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 80)
  const standIn = await startReceiver(t, () => 200)
  await startTestWorker(t, database, { NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud', WHATSAPP_API_BASE_URL: `${standIn.url}/v21.0/`, ...WA })

  const [withWhatsapp] = (await database.sql`select o.id, o.seller_id, o.order_number, r.id as retailer_id, r.first_name, r.whatsapp, s.name as seller_name
    from orders o join retailers r on r.id = o.retailer_id join sellers s on s.id = o.seller_id
    where o.status = 'ORDER_PLACED' and r.whatsapp is not null order by o.id limit 1`)
  const [phoneOnly] = (await database.sql`select o.id, o.seller_id, r.id as retailer_id, r.phone from orders o join retailers r on r.id = o.retailer_id
    where o.status = 'ORDER_ACCEPTED' and r.whatsapp is null and r.phone is not null order by o.id limit 1`)
  t.ok(withWhatsapp && phoneOnly, 'the demo data has both kinds of retailer')

  await recordOrderEvent(database, { id: Number(withWhatsapp.id), sellerId: withWhatsapp.seller_id }, 'order.rejected', 'Out of stock')
  const rejected = (await lastEventId(database, withWhatsapp.seller_id))!
  await recordOrderEvent(database, { id: Number(phoneOnly.id), sellerId: phoneOnly.seller_id }, 'order.accepted')
  const accepted = (await lastEventId(database, phoneOnly.seller_id))!
  await eventually(t, 'two messages', () => standIn.received.length >= 2)
  await eventually(t, 'both delivered', async () => (await deliveryOf(database, 'notify-messaging', accepted))?.status === 'DELIVERED' &&
    (await deliveryOf(database, 'notify-messaging', rejected))?.status === 'DELIVERED')
  t.equal((await deliveriesOf(database, { kind: 'notify-messaging' })).length, 2, 'one message per event, to the messaging channel only')

  const byRecipient = new Map(standIn.received.map((r) => [JSON.parse(r.rawBody).to, r]))
  const first = byRecipient.get(withWhatsapp.whatsapp.replace(/\D/g, ''))
  if (t.ok(first, 'sent to the whatsapp number') && first) {
    t.equal(first.method, 'POST')
    t.equal(first.url, `/v21.0/${WA.WHATSAPP_PHONE_NUMBER_ID}/messages`)
    t.equal(first.headers.authorization, `Bearer ${WA.WHATSAPP_ACCESS_TOKEN}`)
    t.equal(first.headers['content-type'], 'application/json')
    t.same(JSON.parse(first.rawBody), {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: withWhatsapp.whatsapp.replace(/\D/g, ''),
      type: 'template',
      biz_opaque_callback_data: rejected,
      template: {
        name: 'order_rejected',
        language: { code: 'en' },
        components: [{
          type: 'body',
          parameters: [withWhatsapp.first_name, withWhatsapp.order_number, withWhatsapp.seller_name, 'Out of stock'].map((text) => ({ type: 'text', text }))
        }]
      }
    }, 'a template message with the rejection reason as a parameter')
  }
  const second = byRecipient.get(phoneOnly.phone.replace(/\D/g, ''))
  if (t.ok(second, 'sent to the phone when there is no whatsapp number') && second) {
    const body = JSON.parse(second.rawBody)
    t.equal(body.template.name, 'order_accepted')
    t.equal(body.template.components[0].parameters.length, 3, 'no reason on an acceptance')
  }

  // A retailer with no number at all: nothing to retry, failed at once.
  await database.sql`update retailers set whatsapp = null, phone = null where id = ${withWhatsapp.retailer_id}`
  await recordOrderEvent(database, { id: Number(withWhatsapp.id), sellerId: withWhatsapp.seller_id }, 'order.completed')
  const completed = (await lastEventId(database, withWhatsapp.seller_id))!
  await eventually(t, 'failed', async () => (await deliveryOf(database, 'notify-messaging', completed))?.status === 'FAILED')
  t.match(await deliveryOf(database, 'notify-messaging', completed), {
    attempts: 1, lastError: `whatsapp-cloud: retailer ${withWhatsapp.retailer_id} has no whatsapp or phone number`
  }, 'failed at once, no retry')
  t.equal(standIn.received.length, 2)
})

t.test('transports report failures in a few words', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.rejected', 'Out of stock')
  const id = (await lastEventId(database, order.sellerId))!
  const notification = (await notificationOfEvent(database, id, 'customer'))!
  t.match(notification, { eventId: id, eventType: 'order.rejected', channel: 'customer', order: { orderId: String(order.id), orderStatus: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' } })
  t.match(notificationText(notification), /^Order ORD-\d+ of .+ with .+ was rejected: Out of stock$/)

  const standIn = await startReceiver(t, () => 400)
  const wa = whatsappCloudTransport({ baseUrl: standIn.url, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 1000 })
  notification.retailer.whatsapp = '+91 98765 43210'
  await t.rejects(wa.send(notification), { message: /^whatsapp-cloud answered HTTP 400$/ })
  t.equal(JSON.parse(standIn.received[0].rawBody).to, '919876543210')

  const closed = await startReceiver(t)
  const url = closed.url
  await closed.close()
  const waDown = whatsappCloudTransport({ baseUrl: url, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 1000 })
  await t.rejects(waDown.send(notification), { message: /^whatsapp-cloud request failed: connection refused$/ })
  // The operator's endpoint down: the attempt's error says so in a few words.
  await startDeliverer(t, database, { operator: operatorEndpoint(url, 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'), retryWait: () => 60_000 })
  await recordOrderEvent(database, order, 'order.accepted')
  const next = (await lastEventId(database, order.sellerId))!
  await eventually(t, 'the attempt recorded', async () => (await deliveryOf(database, 'operator-webhook', next))?.attempts === 1)
  t.match(await deliveryOf(database, 'operator-webhook', next), { status: 'PENDING', lastHttpStatus: null, lastError: /^[^\n]{1,80}$/ })
  t.equal((await deliveryOf(database, 'operator-webhook', next))!.lastError, 'connection refused')

  // An order gone since its event: nothing to tell.
  await database.sql`update orders set is_deleted = true where id = ${order.id}`
  t.equal(await notificationOfEvent(database, id, 'customer'), null)
})

t.test("Meta's error object is kept in the attempt's error", async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.rejected')
  const notification = (await notificationOfEvent(database, (await lastEventId(database, order.sellerId))!, 'messaging'))!
  notification.retailer.phone = '+919876543210'
  const http = await import('node:http')
  const server = http.createServer((_req, res) => { res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: '(#131026) Message undeliverable', code: 131026 } })) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const wa = whatsappCloudTransport({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 1000 })
  await t.rejects(wa.send(notification), { message: 'whatsapp-cloud answered HTTP 400: 131026 (#131026) Message undeliverable' })
})

t.test('transports per channel come from configuration; a chosen transport that lacks settings stops the start', async (t) => {
  const database = await testDatabase(t)
  const logger = pino({ level: 'silent' })
  const defaults = createTransports(workerEnv(database), logger)
  t.same([defaults.seller.name, defaults.customer.name, defaults.messaging.name], ['log', 'log', 'log'], 'log by default')
  t.equal(defaults.seller, defaults.customer, 'one instance per kind')
  const mixed = createTransports(workerEnv(database, { WEBHOOK_URL: 'https://erp.example.com/hooks', WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz', NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud', ...WA }), logger)
  t.same([mixed.seller.name, mixed.customer.name, mixed.messaging.name], ['log', 'log', 'whatsapp-cloud'], 'WEBHOOK_URL is no channel\'s transport')
  for (const variable of ['NOTIFY_SELLER_TRANSPORT', 'NOTIFY_CUSTOMER_TRANSPORT', 'NOTIFY_MESSAGING_TRANSPORT']) {
    t.throws(() => createTransports(workerEnv(database, { [variable]: 'webhook', WEBHOOK_URL: 'https://erp.example.com/hooks', WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz' }), logger),
      { name: 'ConfigError', message: new RegExp(`^Invalid configuration: ${variable}=webhook was removed: set WEBHOOK_URL and WEBHOOK_SECRET`) },
      `${variable}=webhook names its replacement`)
  }
  t.throws(() => operatorEndpointOf(workerEnv(database, { WEBHOOK_URL: 'https://erp.example.com/hooks' })),
    { name: 'ConfigError', message: 'Invalid configuration: WEBHOOK_URL needs WEBHOOK_SECRET (at least 16 characters)' })
  t.equal(operatorEndpointOf(workerEnv(database)), null, 'no WEBHOOK_URL: no operator endpoint')
  t.same(operatorEndpointOf(workerEnv(database, { WEBHOOK_URL: 'https://erp.example.com/hooks', WEBHOOK_SECRET: 'operator-secret-0123456789' })),
    { url: 'https://erp.example.com/hooks', key: new TextEncoder().encode('operator-secret-0123456789') }, 'a raw secret signs with its UTF-8 bytes')
  t.throws(() => createTransports(workerEnv(database, { NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud', WHATSAPP_PHONE_NUMBER_ID: '1' }), logger),
    { name: 'ConfigError', message: /NOTIFY_MESSAGING_TRANSPORT=whatsapp-cloud needs WHATSAPP_PHONE_NUMBER_ID and WHATSAPP_ACCESS_TOKEN/ })
  t.throws(() => workerEnv(database, { NOTIFY_SELLER_TRANSPORT: 'whatsapp-cloud' }), { name: 'ConfigError', message: /NOTIFY_SELLER_TRANSPORT/ }, 'the seller has no phone: no whatsapp for that channel')
  t.throws(() => workerEnv(database, { WEBHOOK_SECRET: 'short' }), { name: 'ConfigError', message: /WEBHOOK_SECRET/ })
  // A whsec_ secret is Standard Webhooks: base64 of at least 16 bytes, or the start is refused (without quoting it).
  // Unpadded base64 too: the JavaScript library would take it, other languages' libraries refuse it.
  const notBase64 = ['whsec_test_0123456789abcdef', 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTI', 'whsec_ dGVzdC13ZWJob29rLXNlY3JldC0wMTIz',
    'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz\n', 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz_-', 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz====']
  for (const secret of notBase64) {
    t.throws(() => workerEnv(database, { WEBHOOK_SECRET: secret }), {
      name: 'ConfigError',
      message: 'Invalid configuration: WEBHOOK_SECRET: not a Standard Webhooks secret: whsec_ followed by base64 (A-Z a-z 0-9 + /, padded with =), e.g. whsec_ and the output of `openssl rand -base64 32`'
    }, `not base64: ${JSON.stringify(secret)}`)
    t.throws(() => operatorSigningKey(secret), { message: /^not a Standard Webhooks secret/ })
  }
  const padded = [1, 2, 3, 16, 17, 18, 32].map((n) => `whsec_${Buffer.alloc(n, n).toString('base64')}`)
  t.same(padded.map((s) => standardSecretKey(s).length), [1, 2, 3, 16, 17, 18, 32], 'padded base64 of any length decodes')
  t.same(padded.map((s) => Buffer.from(standardSecretKey(s)).toString('hex')), [1, 2, 3, 16, 17, 18, 32].map((n) => Buffer.alloc(n, n).toString('hex')))
  const at = new Date()
  t.same(padded.map((s) => standardWebhookHeaders('evt_1_1', at, '{}', [standardSecretKey(s)])), padded.map((s) => standardWebhookHeaders('evt_1_1', at, '{}', [s])),
    'the key decoded here is the one the library uses')
  t.throws(() => standardSecretKey('whsec_'), { message: /^not a Standard Webhooks secret/ }, 'empty')
  t.throws(() => workerEnv(database, { WEBHOOK_SECRET: `whsec_${Buffer.alloc(15, 7).toString('base64')}` }),
    { name: 'ConfigError', message: 'Invalid configuration: WEBHOOK_SECRET: a Standard Webhooks secret of 15 bytes: at least 16 are needed' })
  t.equal(workerEnv(database, { WEBHOOK_SECRET: `whsec_${Buffer.alloc(16, 7).toString('base64')}` }).WEBHOOK_SECRET?.length, 30, '16 bytes will do')
  t.equal(workerEnv(database, { WEBHOOK_SECRET: 'any text, even whsec_ inside' }).WEBHOOK_SECRET, 'any text, even whsec_ inside', 'other text is a raw secret')
})

t.test('the log transport (default) writes each notification to the log and records it delivered', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const { logger, lines } = captureLogger('info')
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const [other, pruned] = await ordersIn(database, 'ORDER_ACCEPTED', 2)
  // Before the worker starts, two events whose notifications cannot be sent: an order deleted since
  // its event (nothing to tell), and an event the log no longer keeps (retention).
  await recordOrderEvent(database, other, 'order.completed')
  const gone = (await lastEventId(database, other.sellerId))!
  await database.sql`update orders set is_deleted = true where id = ${other.id}`
  await recordOrderEvent(database, pruned, 'order.completed')
  const prunedId = (await lastEventId(database, pruned.sellerId))!
  t.equal((await notificationsOf(database, pruned.id)).length, 3, 'queued')
  await database.sql`delete from seller_events where 'evt_' || seller_id || '_' || sequence = ${prunedId}`

  await startTestWorker(t, database, {}, logger)
  await recordOrderEvent(database, order, 'order.accepted')
  const id = (await lastEventId(database, order.sellerId))!
  await eventually(t, 'all delivered', async () => (await notificationsOf(database, order.id)).filter((n) => n.status === 'DELIVERED').length === 3)
  const logged = lines.filter((l) => l.msg.startsWith('notification: '))
  t.same(logged.map((l) => l.channel).sort(), ['customer', 'messaging', 'seller'], 'one line per channel')
  t.same(logged.map((l) => l.eventId), [id, id, id], 'each under the event\'s id')
  for (const l of logged) {
    t.equal(l.level, 30, 'info')
    t.match(l.msg, /^notification: Order ORD-\d+ of .+ was accepted$/)
    t.match(l.to, l.channel === 'seller' ? `seller ${order.sellerId}` : /^retailer \d+ \((\+\*+\d{4}|no phone)\)$/, 'phone numbers masked')
  }
  t.equal(maskPhone('+91 98765 43210'), '+** ***** *3210')
  t.ok(lines.some((l) => l.msg === 'effects worker started' && l.transports.seller === 'log'))

  await eventually(t, 'the others settled', async () => (await deliveriesOf(database)).every((d) => d.status !== 'PENDING'))
  t.same((await notificationsOf(database, other.id)).map((n) => [n.eventId, n.status, n.attempts]), [[gone, 'FAILED', 1], [gone, 'FAILED', 1], [gone, 'FAILED', 1]],
    'the deleted order\'s notifications: failed at once, not retried')
  t.ok((await deliveriesOf(database, { orderId: other.id })).every((d) => d.lastError === 'its order no longer exists: nothing to tell'))
  t.ok((await deliveriesOf(database, { orderId: pruned.id })).every((d) => d.status === 'FAILED' && d.attempts === 1 &&
    d.lastError === 'event no longer kept (EVENT_RETENTION_DAYS): given up'), 'the pruned event\'s: given up, saying why')
  t.notOk(lines.some((l) => String(l.msg).startsWith('notification:') && (l.eventId === gone || l.eventId === prunedId)),
    'nothing was told about either')
  t.ok(lines.some((l) => l.level === 50 && l.eventId === gone && l.msg === 'delivery failed for good: no more retries'),
    'the operator is told in the log that it was given up')
})

t.test('a receiver that never answers times out under GC pressure (Node 20 collected AbortSignal.any mid-request)', async (t) => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  const receiver = await startReceiver(t, () => 'hang')
  const transport = whatsappCloudTransport({ baseUrl: receiver.url, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 300 })
  const database = await testDatabase(t)
  await seedDemo(database, 10)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order!, 'order.rejected')
  const notification = (await notificationOfEvent(database, (await lastEventId(database, order!.sellerId))!, 'customer'))!
  notification.retailer.whatsapp = '+91 98765 43210'
  for (let i = 0; i < 5; i++) {
    const stop = new AbortController()
    const started = Date.now()
    let outcome: string | undefined
    transport.send(notification, stop.signal).then(() => { outcome = 'answered' }, (err: Error) => { outcome = err.message })
    // Garbage collected between looks, every 5 ms, while the request waits, as in a busy worker process.
    await eventually(t, `attempt ${i + 1} to end`, () => {
      gc()
      Array.from({ length: 50_000 }, (_, j) => ({ j }))
      return outcome
    }, { timeoutMs: 5000, intervalMs: 5 })
    t.equal(outcome, 'whatsapp-cloud timed out after 300 ms', `attempt ${i + 1}`)
    t.ok(Date.now() - started < 3000)
  }
  // The worker stopping still abandons a request at once: stopped once the receiver holds the request.
  const stop = new AbortController()
  const pending = transport.send(notification, stop.signal)
  await eventually(t, 'the sixth request at the receiver', () => receiver.received.length === 6)
  stop.abort()
  await t.rejects(pending, { message: 'whatsapp-cloud request abandoned: the worker is stopping' })
  t.equal(receiver.received.length, 6, 'each attempt was a real request')
})
