import v8 from 'node:v8'
import vm from 'node:vm'
import t from 'tap'
import pino from 'pino'
import { testDatabase } from './helpers/build.js'
import { seedDemo } from './helpers/fixtures.js'
import { startReceiver } from './helpers/receiver.js'
import { captureLogger, deliveryRow, enqueueEvent, notifyPayload, ordersIn, startTestWorker, waitFor, workerEnv } from './helpers/effects.js'
import { TASKS } from '../src/effects/jobs.js'
import { addJob, enqueueNotification } from './helpers/jobs.js'
import { loadNotification, notificationText } from '../src/effects/notification.js'
import { createTransports } from '../src/effects/transports/factory.js'
import { webhookTransport } from '../src/effects/transports/webhook.js'
import { maskPhone } from '../src/effects/transports/log.js'
import { whatsappCloudTransport } from '../src/effects/transports/whatsapp-cloud.js'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { newEndpointSecret, standardSecretKey, standardSecretOf, standardWebhookHeaders } from '../src/outbound/standard-signature.js'
import { verifySignature } from './helpers/webhook-signature.js'

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

t.test('webhook deliveries carry Standard Webhooks headers that the standardwebhooks library verifies', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 10)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const { notification } = (await loadNotification(database.db, notifyPayload(order!, 'seller', 'order.accepted')))!
  notification.retailer.name = 'Zoë Ñúñez 🛒' // non-ASCII in the signed body
  const whsec = newEndpointSecret()
  const cases = [
    { what: 'a whsec_ secret: the receiver uses it as is', configured: whsec, receiver: whsec },
    // The README's claim: a raw secret's Standard Webhooks secret is whsec_ + base64 of its UTF-8 bytes.
    { what: 'a raw ASCII secret', configured: 'operator-secret-0123456789', receiver: `whsec_${Buffer.from('operator-secret-0123456789').toString('base64')}` },
    { what: 'a raw non-ASCII secret (UTF-8 bytes, not UTF-16 code units)', configured: 'clé-secrète-ünïcødé-🔑', receiver: `whsec_${Buffer.from('clé-secrète-ünïcødé-🔑', 'utf8').toString('base64')}` }
  ]
  for (const c of cases) {
    await t.test(c.what, async (t) => {
      const receiver = await startReceiver(t, (_r, i) => (i === 0 ? 503 : 200))
      const transport = webhookTransport({ url: receiver.url, secret: c.configured, timeoutMs: 2000 })
      await t.rejects(transport.send(notification), { message: 'webhook answered HTTP 503' })
      await new Promise((resolve) => setTimeout(resolve, 1100)) // the retry is signed at a later second
      await transport.send(notification)
      t.equal(receiver.received.length, 2)
      for (const r of receiver.received) {
        const headers = headersOf(r)
        t.equal(headers['webhook-id'], notification.eventId, 'webhook-id is the event id, on every attempt')
        t.match(headers['webhook-timestamp'], /^\d{10}$/)
        t.ok(Math.abs(Number(headers['webhook-timestamp']) - r.at / 1000) < 5, 'webhook-timestamp: unix seconds, now')
        t.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/, 'one v1 signature')
        t.equal(verifyError(c.receiver, r.rawBody, headers), null, 'the standardwebhooks library verifies it')
        t.same(new Webhook(c.receiver).verify(r.rawBody, headers), JSON.parse(r.rawBody), 'and hands back the event')
        t.equal(JSON.parse(r.rawBody).id, notification.eventId)
        t.equal(JSON.parse(r.rawBody).data.retailer.name, 'Zoë Ñúñez 🛒')

        t.equal(verifyError(c.receiver, r.rawBody.replace('Zoë', 'Zoe'), headers), 'No matching signature found', 'a tampered body fails')
        t.equal(verifyError(c.receiver, `${r.rawBody} `, headers), 'No matching signature found', 'an extra byte fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-id': `${notification.eventId}x` }), 'No matching signature found', 'another id fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) }), 'No matching signature found', 'another timestamp fails')
        t.equal(verifyError(newEndpointSecret(), r.rawBody, headers), 'No matching signature found', 'another secret fails')
        t.equal(verifyError(c.receiver, r.rawBody, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 301) }), 'Message timestamp too old', 'an old one is refused')
        const { 'webhook-signature': _gone, ...unsigned } = headers
        t.equal(verifyError(c.receiver, r.rawBody, unsigned), 'Missing required headers')

        // The deprecated headers, still sent for one release, keyed with the secret's text as before.
        t.equal(r.headers['x-order-exchange-event-id'], notification.eventId)
        t.equal(r.headers['x-order-exchange-event-type'], 'order.accepted')
        const old = r.headers['x-order-exchange-signature'] as string
        t.ok(verifySignature(c.configured, r.rawBody, old), 'X-Order-Exchange-Signature verifies as before')
        t.notOk(verifySignature(c.configured, r.rawBody.replace('Zoë', 'Zoe'), old), 'and refuses a tampered body')
        t.equal(old.match(/^t=(\d+),/)?.[1], headers['webhook-timestamp'], 'one timestamp for both')
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

  const rejected = notifyPayload({ id: Number(withWhatsapp.id), sellerId: withWhatsapp.seller_id }, 'messaging', 'order.rejected', 'Out of stock')
  const accepted = notifyPayload({ id: Number(phoneOnly.id), sellerId: phoneOnly.seller_id }, 'messaging', 'order.accepted')
  await database.db.transaction(async (tx) => {
    await enqueueNotification(tx, rejected)
    await enqueueNotification(tx, accepted)
  })
  await waitFor(t, 'two messages', () => standIn.received.length >= 2)
  await waitFor(t, 'rows delivered', async () => (await deliveryRow(database, accepted.eventId))?.status === 'DELIVERED' && (await deliveryRow(database, rejected.eventId))?.status === 'DELIVERED')

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
      biz_opaque_callback_data: rejected.eventId,
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
  const completed = notifyPayload({ id: Number(withWhatsapp.id), sellerId: withWhatsapp.seller_id }, 'messaging', 'order.completed')
  await database.db.transaction((tx) => enqueueNotification(tx, completed))
  await waitFor(t, 'failed', async () => (await deliveryRow(database, completed.eventId))?.status === 'FAILED')
  t.match(await deliveryRow(database, completed.eventId), { attempts: 1, last_error: `retailer ${withWhatsapp.retailer_id} has no whatsapp or phone number` })
  await waitFor(t, 'job done', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notify'`)[0].n === 0)
  t.equal(standIn.received.length, 2)
})

t.test('transports report failures in a few words', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const { notification } = (await loadNotification(database.db, notifyPayload(order, 'customer')))!
  t.match(notificationText(notification), /^Order ORD-\d+ of .+ with .+ was rejected: Out of stock$/)

  const standIn = await startReceiver(t, () => 400)
  const wa = whatsappCloudTransport({ baseUrl: standIn.url, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 1000 })
  notification.retailer.whatsapp = '+91 98765 43210'
  await t.rejects(wa.send(notification), { message: /^whatsapp-cloud answered HTTP 400$/ })
  t.equal(JSON.parse(standIn.received[0].rawBody).to, '919876543210')

  const closed = await startReceiver(t)
  const url = closed.url
  await closed.close()
  const hook = webhookTransport({ url, secret: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz', timeoutMs: 1000 })
  await t.rejects(hook.send(notification), { message: /^webhook request failed: ECONNREFUSED$/ })
  const waDown = whatsappCloudTransport({ baseUrl: url, phoneNumberId: '1', accessToken: 'x', language: 'en', templates: TEMPLATES, timeoutMs: 1000 })
  await t.rejects(waDown.send(notification), { message: /^whatsapp-cloud request failed: ECONNREFUSED$/ })

  t.equal(await loadNotification(database.db, { ...notifyPayload(order, 'customer'), orderId: 999_999 }), null)
})

t.test("Meta's error object is kept in last_error", async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const { notification } = (await loadNotification(database.db, notifyPayload(order, 'messaging')))!
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
  const mixed = createTransports(workerEnv(database, { NOTIFY_SELLER_TRANSPORT: 'webhook', WEBHOOK_URL: 'https://erp.example.com/hooks', WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz', NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud', ...WA }), logger)
  t.same([mixed.seller.name, mixed.customer.name, mixed.messaging.name], ['webhook', 'log', 'whatsapp-cloud'])
  t.throws(() => createTransports(workerEnv(database, { NOTIFY_CUSTOMER_TRANSPORT: 'webhook' }), logger),
    { name: 'ConfigError', message: 'Invalid configuration: NOTIFY_CUSTOMER_TRANSPORT=webhook needs WEBHOOK_URL and WEBHOOK_SECRET (at least 16 characters)' })
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
    t.throws(() => webhookTransport({ url: 'https://erp.example.com/hooks', secret, timeoutMs: 1000 }), { message: /^not a Standard Webhooks secret/ })
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
  await startTestWorker(t, database, {}, logger)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const payloads = await enqueueEvent(database, order, 'order.accepted')
  await waitFor(t, 'all delivered', async () => {
    const [row] = await database.sql`select count(*)::int as n from notification_deliveries where order_id = ${order.id} and status = 'DELIVERED'`
    return row.n === 3
  })
  const logged = lines.filter((l) => l.msg.startsWith('notification: '))
  t.same(logged.map((l) => l.eventId).sort(), payloads.map((p) => p.eventId).sort())
  for (const l of logged) {
    t.equal(l.level, 30, 'info')
    t.match(l.msg, /^notification: Order ORD-\d+ of .+ was accepted$/)
    t.match(l.to, l.channel === 'seller' ? `seller ${order.sellerId}` : /^retailer \d+ \((\+\*+\d{4}|no phone)\)$/, 'phone numbers masked')
  }
  t.equal(maskPhone('+91 98765 43210'), '+** ***** *3210')
  t.ok(lines.some((l) => l.msg === 'effects worker started' && l.transports.seller === 'log'))

  // Jobs that did not come through enqueueNotification: tracked all the same, dropped, or failed visibly.
  const [other] = await ordersIn(database, 'ORDER_ACCEPTED', 1)
  const untracked = notifyPayload(other, 'seller', 'order.completed')
  await addJob(database.db, TASKS.notify, untracked)
  await addJob(database.db, TASKS.notify, { ...notifyPayload(other, 'customer'), orderId: 999_999, eventId: 'gone' })
  await addJob(database.db, TASKS.notify, { ...notifyPayload(other, 'customer'), channel: 'fax' }, { maxAttempts: 1 })
  await waitFor(t, 'untracked delivered', async () => (await deliveryRow(database, untracked.eventId))?.status === 'DELIVERED')
  await waitFor(t, 'the others settled', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'notify' and (attempts = 0 or locked_at is not null)`)[0].n === 0)
  const left = await database.sql`select last_error from graphile_worker.jobs where task_identifier = 'notify'`
  t.same(left.map((j) => j.last_error), ['unknown notification channel "fax"'], 'a bad channel fails; a vanished order is dropped')
  t.ok(lines.some((l) => l.level === 40 && l.eventId === 'gone'))
})

t.test('a receiver that never answers times out under GC pressure (Node 20 collected AbortSignal.any mid-request)', async (t) => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  const receiver = await startReceiver(t, () => 'hang')
  const transport = webhookTransport({ url: receiver.url, secret: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz', timeoutMs: 300 })
  const database = await testDatabase(t)
  await seedDemo(database, 10)
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  const { notification } = (await loadNotification(database.db, notifyPayload(order!, 'customer')))!
  for (let i = 0; i < 5; i++) {
    const stop = new AbortController()
    // Collect garbage while the request waits, as a busy worker process does.
    const churn = setInterval(() => { gc(); Array.from({ length: 50_000 }, (_, j) => ({ j })) }, 5)
    const started = Date.now()
    const outcome = await Promise.race([
      transport.send(notification, stop.signal).then(() => 'answered', (err: Error) => err.message),
      new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000))
    ])
    clearInterval(churn)
    t.equal(outcome, 'webhook timed out after 300 ms', `attempt ${i + 1}`)
    t.ok(Date.now() - started < 3000)
  }
  // The worker stopping still abandons a request at once.
  const stop = new AbortController()
  const pending = transport.send(notification, stop.signal)
  setTimeout(() => stop.abort(), 50)
  await t.rejects(pending, { message: 'webhook request abandoned: the worker is stopping' })
})
