import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { Writable } from 'node:stream'
import t from 'tap'
import pino from 'pino'
import { print } from 'graphql'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { scheduleAutoRejections } from '../../src/effects/enqueue.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { loggerOptions } from '../../src/logger.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { startTracing, tracingRequested } from '../../src/tracing/start.js'
import { sellers } from '../../src/db/schema.js'
import { eq } from 'drizzle-orm'
import { build, testConfig, testDatabase } from '../helpers/build.js'
import { EVENTS_QUERY } from '../helpers/events.js'
import { credential } from '../helpers/fixtures.js'
import { startOtlpReceiver, type ExportedSpan } from '../helpers/otlp-receiver.js'
import { eventually } from '../helpers/eventually.js'
import { verifyingReceiver } from '../helpers/webhooks.js'
import { spawnWorker } from '../helpers/worker-process.js'
import { accept, createShop, ok, reject, URL as STATUS_URL } from '../helpers/status-update.js'

/*
 * Traces against a real OTLP/HTTP receiver (helpers/otlp-receiver.ts). The API runs in this process, with
 * OpenTelemetry started as server.ts starts it (one SDK per process: a tap file is a process of its own),
 * exporting http/json; the effects worker is the real `order-exchange worker` in a child process,
 * exporting http/protobuf. So a job's span can only join the request's trace through what the job
 * carries in the database (its traceparent), and both encodings are decoded.
 */

const SERVICE_VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
const SERVER = 2
const CLIENT = 3
const ERROR = 2

t.test('tracing is off unless an OTLP endpoint is set, and OTEL_SDK_DISABLED turns it off', async (t) => {
  t.equal(tracingRequested({}), false)
  t.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }), false)
  t.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true)
  t.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true)
  t.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' }), false)
  t.equal(process.env.OTEL_EXPORTER_OTLP_ENDPOINT, undefined, 'this process has none yet')
  t.equal(await startTracing({ ORDER_EXCHANGE_ENV: 'testing' }), null, 'off: no SDK, nothing to pass down')
  t.notOk('mixin' in (loggerOptions({ LOG_LEVEL: 'info' }) as object), 'log lines as they always were')
})

t.test('tracing off: an event stores no trace context, even for a caller that traces', async (t) => {
  // Before any SDK is started in this process (the next test starts it): as the service runs without one.
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const order = await shop.order()
  const caller = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-01`
  const res = await app.inject({
    method: 'POST',
    url: STATUS_URL,
    headers: { authorization: `Bearer ${await shop.apiKey()}`, traceparent: caller },
    payload: { order_status: [accept(order)] }
  })
  t.equal(res.statusCode, 200, res.body)
  const events = await database.sql`select traceparent from seller_events where seller_id = ${shop.sellerId}`
  t.equal(events.length, 1)
  t.same(events.map((e) => e.traceparent), [null])
})

t.test('one status batch is one trace: its request, its SQL, and the jobs it enqueued, in another process', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' }
  Object.assign(process.env, otel, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
  const tracing = (await startTracing({ ORDER_EXCHANGE_ENV: 'testing' }))!
  t.ok(tracing, 'on: OTEL_EXPORTER_OTLP_ENDPOINT is set')

  // What must never leave the process in a span: secrets, phone numbers, SQL parameter values.
  const secretsKey = randomBytes(32).toString('base64')
  const whatsapp = `+9198${randomBytes(4).readUInt32BE() % 1e8}`.padEnd(13, '7')
  const phone = `+9197${randomBytes(4).readUInt32BE() % 1e8}`.padEnd(13, '3')
  const reason = `Out of stock ${randomBytes(6).toString('hex')}`

  const fixtures = await testDatabase(t)
  const database = openDatabase(fixtures.url, { max: 5, observer: tracing.sqlObserver(fixtures.url) })
  t.teardown(() => database.close())
  // Rate limits on, as in production: the GraphQL cost is worked out for the bucket, and the span reports it.
  const config = testConfig(fixtures, { WEBHOOK_SECRETS_KEY: secretsKey, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', RATE_LIMIT_ENABLED: 'true' })
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const logger = pino(loggerOptions({ LOG_LEVEL: 'info' }, tracing) as pino.LoggerOptions, sink)
  const app = await buildApp({ config, database, logger, tracing })
  t.teardown(() => app.close())

  const shop = await createShop(fixtures, {}, { whatsapp, phone })
  const apiKey = await shop.apiKey()
  const accessToken = await credential(fixtures, shop.sellerId, 'access-token')
  const [toAccept, toReject, toExpire] = [await shop.order(), await shop.order({ paymentMode: 'ONLINE_PAID' }), await shop.order()]
  const unsampled = await shop.order()
  // Every delivery is verified with the endpoint's secret, as a seller's receiver would.
  let webhookSecret = ''
  const hooks = await verifyingReceiver(t, () => [webhookSecret])
  const endpoint = await app.inject({
    method: 'POST', url: WEBHOOK_ENDPOINTS_PATH, headers: { authorization: `Bearer ${apiKey}` }, payload: { url: hooks.url }
  })
  t.equal(endpoint.statusCode, 201, endpoint.body)
  webhookSecret = endpoint.json().data.secret as string

  const batch = await app.inject({
    method: 'POST',
    url: STATUS_URL,
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { order_status: [accept(toAccept), reject(toReject, reason)] }
  })
  t.equal(batch.statusCode, 200, batch.body)
  // A batch from a caller that traces but did not sample this request: nothing of it is exported, so its
  // event has no span to link to.
  const notSampled = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`
  const quiet = await app.inject({
    method: 'POST',
    url: STATUS_URL,
    headers: { authorization: `Bearer ${apiKey}`, traceparent: notSampled },
    payload: { order_status: [accept(unsampled)] }
  })
  t.same(quiet.json(), ok(1))
  const page = await app.inject({
    method: 'POST',
    url: '/v2/graphql',
    headers: { authorization: `Bearer ${accessToken}` },
    payload: { query: print(OrdersDocument), variables: { input: { limit: 5 } }, operationName: 'Orders' }
  })
  t.equal(page.statusCode, 200, page.body)
  // A GET carries its document in the URL, here with a phone number in a comment.
  const query = new URLSearchParams({ query: `{ seller { companyId } } # ${phone}` })
  // …sent by a caller that traces too: its W3C traceparent makes the request a part of the caller's trace.
  const caller = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') }
  const get = await app.inject({
    method: 'GET',
    url: `/v2/graphql?${query}`,
    headers: { authorization: `Bearer ${accessToken}`, traceparent: `00-${caller.traceId}-${caller.spanId}-01` }
  })
  t.equal(get.statusCode, 200, get.body)
  // A job enqueued from inside a span (as order placement does), due at once: the auto-rejection.
  await fixtures.db.update(sellers).set({ autoRejectEnabled: true }).where(eq(sellers.id, shop.sellerId))
  await tracing.span('test: place', {}, async () => {
    await database.db.transaction((tx) => scheduleAutoRejections(tx, { ids: [toExpire] }, 1, 'from-now'))
  })

  const worker = await spawnWorker(t, {
    DATABASE_URL: fixtures.url,
    WEBHOOK_SECRETS_KEY: secretsKey,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WORKER_POLL_INTERVAL_MS: '100',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_SERVICE_NAME: 'order-exchange-worker',
    ...otel
  })
  const named = (name: string): ExportedSpan[] => receiver.spans.filter((s) => s.name === name)
  // Four events (the batch's two, the unsampled accept, the auto-rejection), each to the seller's endpoint
  // and the three notification channels: a delivery attempt each. One refund.
  await eventually(t, 'the spans of the jobs and the deliveries', () =>
    named('process process-refund').length >= 1 && named('process auto-reject').length >= 1 &&
    named('webhook delivery').length >= 16, { timeoutMs: 60_000 })
  // The feed as the seller reads it, once every event is in.
  const feed = await app.inject({
    method: 'POST',
    url: '/v2/graphql',
    headers: { authorization: `Bearer ${accessToken}` },
    payload: { query: EVENTS_QUERY, variables: { input: { limit: 100 } }, operationName: 'Events' }
  })
  worker.child.kill('SIGTERM')
  t.equal((await worker.exited).code, 0, 'the worker exported what it had and stopped')
  await tracing.shutdown()
  const spans = receiver.spans
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  const inTrace = (traceId: string): ExportedSpan[] => spans.filter((s) => s.traceId === traceId)
  const ancestors = (span: ExportedSpan): ExportedSpan[] => {
    const chain: ExportedSpan[] = []
    for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) chain.push(p)
    return chain
  }

  t.test('the resource: service, version, environment; OTEL_SERVICE_NAME wins', async (t) => {
    const api = spans.find((s) => s.name === `POST ${STATUS_URL}`)!
    t.match(api.resource, {
      'service.name': 'order-exchange', 'service.version': SERVICE_VERSION, 'deployment.environment.name': 'testing'
    })
    t.match(named('webhook delivery')[0].resource, { 'service.name': 'order-exchange-worker', 'service.version': SERVICE_VERSION })
    t.equal(api.encoding, 'json', 'the API sent http/json (OTEL_EXPORTER_OTLP_PROTOCOL)')
    t.ok([...named('webhook delivery'), ...named('process auto-reject')].every((s) => s.encoding === 'protobuf'), 'the worker sent http/protobuf, decoded')
    t.ok(receiver.requests.json > 0 && receiver.requests.protobuf > 0)
  })

  t.test('the batch: the HTTP span, its transaction with every statement, the job it enqueued, the deliveries of its events', async (t) => {
    const http = spans.filter((s) => s.name === `POST ${STATUS_URL}`)
    t.equal(http.length, 1)
    const request = http[0]
    t.equal(request.kind, SERVER)
    t.equal(request.parentSpanId, '', 'the root of its trace')
    t.match(request.attributes, {
      'http.request.method': 'POST', 'http.route': STATUS_URL, 'url.path': STATUS_URL, 'http.response.status_code': 200
    })
    const trace = inTrace(request.traceId)
    const transaction = trace.filter((s) => s.name === 'transaction')
    t.equal(transaction.length, 1, 'one transaction')
    t.ok(ancestors(transaction[0]).includes(request), 'inside the request')
    const statements = trace.filter((s) => typeof s.attributes['db.query.text'] === 'string')
    // Its own statements, not those of the jobs it enqueued (which run under it, in the worker).
    const inTransaction = statements.filter((s) => ancestors(s).includes(transaction[0]) &&
      !ancestors(s).some((a) => a.name.startsWith('process ')))
    const written = ['begin', 'update orders o set status', 'insert into order_status_history', 'insert into refunds',
      'insert into seller_events']
    for (const text of written) {
      t.ok(inTransaction.some((s) => (s.attributes['db.query.text'] as string).includes(text)), `a span for: ${text}`)
    }
    for (const s of statements) {
      t.equal(s.kind, CLIENT)
      t.match(s.attributes, { 'db.system.name': 'postgresql', 'db.namespace': String, 'server.address': '127.0.0.1' })
    }
    // Within a millisecond: the SDK anchors each span's clock to Date.now() (whole milliseconds) when the span
    // starts, so two spans can disagree by up to 1 ms (a statement ending just before COMMIT once failed).
    const slackNs = 1_000_000n
    t.ok(inTransaction.every((s) => s.endNs <= transaction[0].endNs + slackNs), 'every statement ends before its transaction')

    // Notifications are no jobs: each is a delivery of its event, in a span of its own linked to the span
    // that recorded the event, in the batch's request (across processes, through seller_events).
    const recorded = await fixtures.sql<Array<{ id: string, traceparent: string | null }>>`
      select 'evt_' || seller_id || '_' || sequence as id, traceparent from seller_events
      where order_id in (${toAccept}, ${toReject}) order by sequence`
    t.equal(recorded.length, 2)
    const notify = named('webhook delivery').filter((s) => String(s.attributes['order_exchange.delivery.kind']).startsWith('notify-') &&
      recorded.some((e) => e.id === s.attributes['order_exchange.webhook.event_id']))
    t.equal(notify.length, 6, 'two events, three channels: an attempt each')
    t.same(notify.map((s) => `${String(s.attributes['order_exchange.webhook.event_id'])} ${String(s.attributes['order_exchange.delivery.kind'])}`).sort(),
      recorded.flatMap((e) => ['notify-customer', 'notify-messaging', 'notify-seller'].map((k) => `${e.id} ${k}`)).sort())
    for (const attempt of notify) {
      t.equal(attempt.kind, CLIENT)
      t.equal(attempt.parentSpanId, '', 'a trace of its own')
      t.not(attempt.traceId, request.traceId)
      t.equal(attempt.links.length, 1, 'linked to its event\'s span')
      const linked = byId.get(attempt.links[0].spanId)
      t.equal(attempt.links[0].traceId, request.traceId, 'in the request\'s trace')
      t.ok(linked !== undefined && (linked === request || ancestors(linked).includes(request)), 'a span of the request that recorded the event')
      t.match(attempt.attributes, {
        'order_exchange.webhook.attempt': 1,
        'order_exchange.webhook.outcome': 'delivered',
        'order_exchange.webhook.endpoint_id': String
      })
      t.equal(attempt.attributes['http.response.status_code'], undefined, 'no HTTP answer: the log transport')
      t.not(attempt.status.code, ERROR)
    }
    const refund = trace.filter((s) => s.name === 'process process-refund')
    t.equal(refund.length, 1, 'the refund job of the rejected prepaid order too')
  })

  t.test('a job enqueued by a job: the auto-rejection, and the notifications its event caused', async (t) => {
    const expire = named('process auto-reject')
    t.equal(expire.length, 1)
    t.equal(byId.get(expire[0].parentSpanId)?.name, 'transaction', 'under the span that scheduled it')
    const caused = named('webhook delivery').filter((s) => String(s.attributes['order_exchange.delivery.kind']).startsWith('notify-') &&
      s.links.length === 1 && s.links[0].traceId === expire[0].traceId)
    t.equal(caused.length, 3, 'its three notifications link to its trace')
    for (const attempt of caused) {
      const linked = byId.get(attempt.links[0].spanId)
      t.ok(linked !== undefined && (linked === expire[0] || ancestors(linked).includes(expire[0])), 'to a span under the auto-rejection')
    }
  })

  t.test('the GraphQL operation: name, type, cost, and which path answered', async (t) => {
    const operation = spans.filter((s) => s.name === 'query Orders')
    t.equal(operation.length, 1)
    t.equal(byId.get(operation[0].parentSpanId)?.name, 'handler - graphqlPlugin -> mercurius')
    t.match(operation[0].attributes, {
      'graphql.operation.type': 'query',
      'graphql.operation.name': 'Orders',
      'order_exchange.graphql.execution': 'pass-through',
      'order_exchange.graphql.cost.requested': Number,
      'order_exchange.graphql.cost.actual': Number
    })
    t.ok(spans.some((s) => s.parentSpanId === operation[0].spanId && s.attributes['db.system.name'] === 'postgresql'),
      'the page statement inside it')
    const anonymous = spans.find((s) => s.name === 'GET /v2/graphql')!
    t.equal(anonymous.attributes['url.path'], '/v2/graphql', 'the query string is not recorded')
    t.same([anonymous.traceId, anonymous.parentSpanId], [caller.traceId, caller.spanId], "the caller's trace, continued")
    t.ok(spans.some((s) => s.traceId === anonymous.traceId && s.name === 'query' &&
      s.attributes['order_exchange.graphql.execution'] === 'standard'), 'an unnamed query, answered by the standard execution')
  })

  t.test('webhook deliveries: a span per attempt', async (t) => {
    const attempts = named('webhook delivery').filter((s) => s.attributes['order_exchange.delivery.kind'] === 'seller-webhook')
    t.equal(attempts.length, 4, 'the batches\' and the auto-rejection\'s events')
    t.equal(named('webhook delivery').length, 16, 'and the notifications\' attempts: three channels per event')
    for (const attempt of attempts) {
      t.equal(attempt.kind, CLIENT)
      t.equal(attempt.parentSpanId, '', 'a trace of its own: the event log woke it, not a request')
      t.match(attempt.attributes, {
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
        'http.response.status_code': 200,
        'order_exchange.webhook.outcome': 'delivered',
        'order_exchange.webhook.attempt': 1,
        'order_exchange.webhook.endpoint_id': String
      })
      t.not(attempt.status.code, ERROR)
    }
    t.ok(hooks.received.length >= attempts.length, 'each was a real request')
  })

  t.test('a delivery links to the span that recorded its event, which nothing sent carries', async (t) => {
    const request = spans.find((s) => s.name === `POST ${STATUS_URL}`)!
    const expire = named('process auto-reject')[0]
    type Recorded = { id: string, orderId: string, traceparent: string | null }
    const recorded = await fixtures.sql<Recorded[]>`
      select 'evt_' || seller_id || '_' || sequence as id, order_id::text as "orderId", traceparent from seller_events
      where seller_id = ${shop.sellerId} order by sequence`
    const eventsOf = (...orders: number[]): Recorded[] => recorded.filter((e) => orders.map(String).includes(e.orderId))
    const deliveryOf = (eventId: string): ExportedSpan | undefined =>
      named('webhook delivery').find((s) => s.attributes['order_exchange.webhook.event_id'] === eventId &&
        s.attributes['order_exchange.delivery.kind'] === 'seller-webhook')
    const linked = [
      ...eventsOf(toAccept, toReject).map((event) => ({ event, recorder: request, what: 'the batch\'s request' })),
      ...eventsOf(toExpire).map((event) => ({ event, recorder: expire, what: 'the auto-rejection job' }))
    ]
    t.equal(linked.length, 3, 'the batch\'s two events and the auto-rejection\'s')
    for (const { event, recorder, what } of linked) {
      t.match(event.traceparent, new RegExp(`^00-${recorder.traceId}-[0-9a-f]{16}-01$`), `stored: ${what}`)
      const [, traceId, spanId] = event.traceparent!.split('-')
      const attempt = deliveryOf(event.id)
      t.same(attempt?.links, [{ traceId, spanId }], `its delivery links to ${what}`)
      t.not(attempt?.traceId, traceId, 'a link, not a parent: the attempt is a trace of its own')
      const span = byId.get(spanId)
      t.ok(span !== undefined && (span === recorder || ancestors(span).includes(recorder)),
        `the linked span was exported, inside ${what}`)
    }
    const quiet = eventsOf(unsampled)
    t.same(quiet.map((e) => e.traceparent), [null], 'an unsampled request stores nothing')
    t.same(deliveryOf(quiet[0].id)?.links, [], 'and its delivery has no link')

    t.same(hooks.unverified, [], 'every delivery verified with the endpoint\'s secret')
    t.ok(hooks.delivered.length >= 4)
    t.equal(feed.statusCode, 200, feed.body)
    t.equal(feed.json().data.events.nodes.length, recorded.length, 'the feed has every event')
    const sent = [...hooks.received.map((r) => JSON.stringify(r.headers) + r.rawBody), feed.body].join('\n')
    t.notOk(/traceparent/i.test(sent), 'no traceparent in a delivery\'s headers or body, nor in the feed')
    for (const { event } of linked) t.notOk(sent.includes(event.traceparent!.split('-')[1]), 'nor the trace id')
  })

  t.test('log lines carry the trace and span of their request or job', async (t) => {
    const request = spans.find((s) => s.name === `POST ${STATUS_URL}`)!
    const apiLines = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    const completed = apiLines.filter((l) => l.msg === 'request completed' && l.trace_id === request.traceId)
    t.equal(completed.length, 1, 'the batch\'s "request completed"')
    t.ok(spans.some((s) => s.spanId === completed[0].span_id), 'with a span of that trace')
    // The worker's notification lines (the log transport) carry the span of their delivery attempt.
    const told = worker.lines.filter((l) => String(l.msg).startsWith('notification: '))
    t.equal(told.length, 12, 'four events, three channels')
    const attempts = new Map(named('webhook delivery').map((s) => [s.spanId, s]))
    for (const l of told) {
      const attempt = attempts.get(l.span_id)
      t.ok(attempt !== undefined && attempt.traceId === l.trace_id, 'the line is in its attempt\'s span')
      t.match(attempt?.attributes, { 'order_exchange.webhook.event_id': l.eventId, 'order_exchange.delivery.kind': `notify-${String(l.channel)}` })
    }
    t.notOk(told.some((l) => l.trace_id === request.traceId), 'none in the request\'s trace: an attempt links to it')
  })

  t.test('no secret, phone number or parameter value in anything exported', async (t) => {
    const everything = [
      JSON.stringify(spans, (_key, value: unknown) => typeof value === 'bigint' ? String(value) : value),
      ...receiver.bodies.map((body) => body.toString('latin1'))
    ].join('\n')
    const forbidden = {
      'the API key': apiKey,
      'the access token': accessToken,
      'the webhook secret': webhookSecret,
      "the webhook secret's base64": webhookSecret.replace(/^whsec_/, ''),
      WEBHOOK_SECRETS_KEY: secretsKey,
      'the whatsapp number': whatsapp,
      'the phone number': phone,
      "the phone number's digits": phone.slice(1),
      'the rejection reason (a parameter)': reason,
      'the events of the batch (a parameter)': '"event_id":',
      'a bearer token': 'Bearer '
    }
    for (const [what, value] of Object.entries(forbidden)) t.notOk(everything.includes(value), what)
    t.notOk(spans.some((s) => s.status.message !== ''), 'no status message (an error message may hold values)')
    t.notOk(spans.some((s) => s.events.length > 0), 'no exception events')
  })
})
