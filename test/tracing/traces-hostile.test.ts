import { randomBytes } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import pino from 'pino'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { loggerOptions } from '../../src/logger.js'
import { startTracing } from '../../src/tracing/start.js'
import { testConfig, testDatabase } from '../helpers/build.js'
import { startOtlpReceiver } from '../helpers/otlp-receiver.js'
import { accept, createShop, ok, URL as STATUS_URL } from '../helpers/status-update.js'

/*
 * A caller's trace context is input like any other. With tracing on (one SDK per process, hence a file of
 * its own), status batches over real HTTP carrying malformed, oversized, all-zero, repeated or otherwise
 * invalid `traceparent` headers are answered as usual; the W3C propagator ignores what it cannot parse, so
 * the request starts a trace of its own, and the traceparent stored with its event is that one — our own
 * ids, serialised by us, never the caller's text. A well-formed caller's context is continued (the control:
 * without it, ignoring the header altogether would pass).
 */

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const OURS = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/

t.test('hostile traceparent headers: answered as usual, a trace of our own, only our ids stored', async (t) => {
  const receiver = await startOtlpReceiver()
  t.teardown(() => receiver.close())
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json'
  })
  const tracing = (await startTracing({ ORDER_EXCHANGE_ENV: 'testing' }))!
  t.ok(tracing, 'tracing on')

  const fixtures = await testDatabase(t)
  const database = openDatabase(fixtures.url, { max: 5, observer: tracing.sqlObserver(fixtures.url) })
  t.teardown(() => database.close())
  const logger = pino(loggerOptions({ LOG_LEVEL: 'silent' }, tracing) as pino.LoggerOptions)
  const app = await buildApp({ config: testConfig(fixtures), database, logger, tracing })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo

  const shop = await createShop(fixtures)
  const apiKey = await shop.apiKey()
  const [trace, span] = [hex(16), hex(8)]
  // Each value is sent as the request's only traceparent header(s); tracestate rides along where given.
  type Case = { what: string, traceparent: string | string[], tracestate?: string }
  const hostile: Case[] = [
    { what: 'not a traceparent at all', traceparent: 'garbage' },
    { what: 'empty', traceparent: '' },
    { what: 'oversized (8 KB)', traceparent: `00-${trace}-${span}-01-${'a'.repeat(8_000)}x` },
    { what: 'all-zero trace id', traceparent: `00-${'0'.repeat(32)}-${span}-01` },
    { what: 'all-zero span id', traceparent: `00-${trace}-${'0'.repeat(16)}-01` },
    { what: 'version ff (forbidden)', traceparent: `ff-${trace}-${span}-01` },
    { what: 'a trace id one digit short', traceparent: `00-${trace.slice(1)}-${span}-01` },
    { what: 'non-hex digits', traceparent: `00-${trace.slice(2)}zz-${span}-01` },
    { what: 'SQL and markup in the fields', traceparent: `00-'; drop table orders; --<script>-${span}-01` },
    {
      what: 'two headers (joined by Node into one invalid value)',
      traceparent: [`00-${trace}-${span}-01`, `00-${hex(16)}-${hex(8)}-01`]
    },
    { what: 'an invalid traceparent with a huge tracestate', traceparent: 'x', tracestate: `k=${'v'.repeat(4_000)}` }
  ]
  const control: Case = { what: 'a well-formed sampled caller (the control)', traceparent: `00-${trace}-${span}-01` }

  type Answer = { statusCode: number, body: unknown }
  const send = async (headers: http.OutgoingHttpHeaders, orderId: number): Promise<Answer> =>
    await new Promise((resolve, reject) => {
      const payload = JSON.stringify({ order_status: [accept(orderId)] })
      const req = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: STATUS_URL,
        headers: { ...headers, authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }
      }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ statusCode: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()) }))
      })
      req.on('error', reject)
      req.end(payload)
    })

  const sent: Array<{ what: string, orderId: number, continues: string | null }> = []
  for (const c of [...hostile, control]) {
    const orderId = await shop.order()
    const headers: http.OutgoingHttpHeaders = { traceparent: c.traceparent }
    if (c.tracestate !== undefined) headers.tracestate = c.tracestate
    const res = await send(headers, orderId)
    t.equal(res.statusCode, 200, `${c.what}: answered as usual`)
    t.same(res.body, ok(1), `${c.what}: the batch applied`)
    sent.push({ what: c.what, orderId, continues: c === control ? trace : null })
  }
  await tracing.shutdown()

  const stored = await fixtures.sql<Array<{ orderId: string, traceparent: string | null }>>`
    select order_id::text as "orderId", traceparent from seller_events where seller_id = ${shop.sellerId}`
  const requests = receiver.spans.filter((s) => s.name === `POST ${STATUS_URL}`)
  t.equal(requests.length, sent.length, 'one exported request span a batch')
  const callerText = hostile.flatMap((c) => [c.traceparent, c.tracestate ?? []].flat()).join('\n')
  for (const { what, orderId, continues } of sent) {
    const events = stored.filter((e) => e.orderId === String(orderId))
    t.equal(events.length, 1, `${what}: its event`)
    const match = OURS.exec(events[0]?.traceparent ?? '')
    t.ok(match, `${what}: a well-formed sampled traceparent stored`)
    if (!match) continue
    const [, traceId, spanId] = match
    const request = requests.find((s) => s.traceId === traceId)
    t.ok(request, `${what}: the stored trace is the request's`)
    t.ok(receiver.spans.some((s) => s.traceId === traceId && s.spanId === spanId), `${what}: the stored span was exported`)
    if (continues !== null) {
      t.equal(traceId, continues, `${what}: the caller's trace continued`)
      t.equal(request?.parentSpanId, span, `${what}: under the caller's span`)
    } else {
      t.equal(request?.parentSpanId, '', `${what}: a root, not a child of anything the caller sent`)
      t.notOk(callerText.includes(traceId), `${what}: no id taken from the caller's text`)
    }
  }
  const exported = receiver.bodies.map((b) => b.toString('latin1')).join('\n')
  for (const text of ['drop table', 'aaaaaaaaaaaaaaaa', 'vvvvvvvvvvvvvvvv', 'garbage']) {
    t.notOk(exported.includes(text), `nothing of the caller's headers exported: ${text}`)
  }
})
