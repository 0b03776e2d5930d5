import t from 'tap'
import {
  AbortError,
  BadRequestError,
  createClient,
  NetworkError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnauthorizedError,
  type StatusChange
} from '@order-exchange/client'
import { faultProxy, serve, type ProxyAction, type Served } from '../helpers/client.js'
import { eventually } from '../helpers/eventually.js'

/*
 * Retries through a real proxy that fails the way networks and gateways fail. Every operation of the
 * service is idempotent (docs/api/idempotency.md), so sending a request again is safe; these tests show it is also
 * what the client does, and that what cannot succeed ends as a typed error.
 */

const fast = { baseDelayMs: 20, maxDelayMs: 200 }

async function placed (served: Served, n: number): Promise<number[]> {
  const rows = await served.database.sql`select id from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by id limit ${n}`
  return rows.map((r) => Number(r.id))
}

async function statusOf (served: Served, id: number): Promise<string> {
  const [row] = await served.database.sql`select status from orders where id = ${id}`
  return row!.status as string
}

t.test('an injected 503 and a dropped connection are retried; the batch is applied once', async (t) => {
  const served = await serve(t, { orders: 60 })
  const plan: ProxyAction[] = [{ status: 503, headers: { 'retry-after': '0' } }, 'drop', 'pass']
  const proxy = await faultProxy(t, served.baseUrl, (i) => plan[i] ?? 'pass')
  const client = createClient({ baseUrl: proxy.url, apiKey: served.apiKey, retry: fast })
  const [a, b] = await placed(served, 2)
  const results = await client.orders.updateStatuses([{ orderId: a!, status: 'ORDER_ACCEPTED' }, { orderId: b!, status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' }])
  t.same(proxy.requests.map((r) => r.action), plan, 'a 503, a dropped connection, then through')
  t.same(results.map((r) => r.outcome), ['changed', 'changed'])
  t.equal(await statusOf(served, a!), 'ORDER_ACCEPTED')
  const [history] = await served.database.sql`select count(*)::int as n from order_status_history where order_id = any(${[a!, b!]}::bigint[]) and source = 'api'`
  t.equal(history!.n, 2, 'each order changed once')
})

t.test('an answer lost after the service did the work: the retry (same Idempotency-Key) gets that answer', async (t) => {
  const served = await serve(t, { orders: 60 })
  const proxy = await faultProxy(t, served.baseUrl, (i) => i === 0 ? 'lose-answer' : 'pass')
  const client = createClient({ baseUrl: proxy.url, apiKey: served.apiKey, retry: fast })
  const [a] = await placed(served, 1)
  const [result] = await client.orders.updateStatuses([{ orderId: a!, status: 'ORDER_ACCEPTED' }])
  t.equal(proxy.requests.length, 2)
  t.same(result, { index: 0, orderId: a, outcome: 'changed' }, 'the first attempt made the change, and the retry says so')
  t.equal(proxy.requests[0]!.idempotencyKey, proxy.requests[1]!.idempotencyKey, 'the retry carried the first attempt\'s key')
  t.match(proxy.requests[0]!.idempotencyKey, /^[0-9a-f-]{36}$/)
  const [ledger] = await served.database.sql`select count(*)::int as n from points_ledger where order_id = ${a!}`
  t.equal(ledger!.n, 1, 'points deducted once')

  const sync = await faultProxy(t, served.baseUrl, (i) => i === 0 ? 'lose-answer' : 'pass')
  const syncing = createClient({ baseUrl: sync.url, apiKey: served.apiKey, retry: fast })
  const rows = [{ retailerSyncId: 'RET-1-00001', offerSyncId: 'OFF-X', outstandingQuantity: 5 }]
  const data = await syncing.shipments.sync(rows)
  t.equal(sync.requests.length, 2)
  t.match(data, { received: 1, inserted: 1, unchanged: 0 }, 'the first attempt\'s answer: inserted')
  t.equal(sync.requests[0]!.idempotencyKey, sync.requests[1]!.idempotencyKey)
})

t.test('Retry-After is honoured; reads are retried too', async (t) => {
  const served = await serve(t, { orders: 30 })
  const proxy = await faultProxy(t, served.baseUrl, (i) => i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 'pass')
  const client = createClient({ baseUrl: proxy.url, accessToken: served.accessToken, retry: fast })
  const pages = []
  for await (const page of client.orders.pages({ limit: 100 })) pages.push(page)
  t.equal(pages.length, 1)
  t.equal(proxy.requests.length, 2)
  const waited = proxy.requests[1]!.at - proxy.requests[0]!.at
  t.ok(waited >= 950, `waited ${waited} ms as the 429 asked, not the 20 ms backoff`)
})

t.test('what cannot succeed ends as a typed error: retries spent, 401 and 400 at once, abort', async (t) => {
  const served = await serve(t, { orders: 30 })
  const down = await faultProxy(t, served.baseUrl, () => ({ status: 502, headers: { 'content-type': 'text/html' }, body: '<html>Bad gateway</html>' }))
  const client = createClient({
    baseUrl: down.url,
    apiKey: served.apiKey,
    accessToken: served.accessToken,
    retry: { ...fast, attempts: 4 }
  })
  const spent = await t.rejects(client.shipments.sync([{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]))
  t.ok(spent instanceof ServiceUnavailableError)
  t.match(spent, { status: 502, message: 'HTTP 502', body: '<html>Bad gateway</html>' }, 'a body that is not JSON is kept as text')
  t.equal(down.requests.length, 4, 'four attempts in all')

  const refused = await faultProxy(t, 'http://127.0.0.1:1', () => 'drop')
  const network = await t.rejects(createClient({ baseUrl: refused.url, apiKey: 'k', retry: { ...fast, attempts: 2 } }).shipments.sync([{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]))
  t.ok(network instanceof NetworkError, 'no answer at all: a NetworkError')
  t.equal(refused.requests.length, 2)

  const direct = await faultProxy(t, served.baseUrl, () => 'pass')
  const wrongKey = createClient({ baseUrl: direct.url, apiKey: 'oxs_test_ak_wrong', retry: fast })
  await t.rejects(wrongKey.shipments.sync([{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]), UnauthorizedError)
  t.equal(direct.requests.length, 1, 'a 401 is not retried')

  const mangling = await faultProxy(t, served.baseUrl, () => 'mangle')
  const mangled = createClient({ baseUrl: mangling.url, apiKey: served.apiKey, retry: fast })
  const badSync = await t.rejects(mangled.shipments.sync([{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]))
  t.ok(badSync instanceof BadRequestError, 'a body the service cannot read: BadRequestError')
  t.match(badSync, { status: 400, message: 'Invalid JSON format', code: 'INVALID_JSON', body: { error: true, statusCode: 400, message: 'Invalid JSON format' } })
  const badUpdate = await t.rejects(mangled.orders.updateStatuses([{ orderId: 1, status: 'ORDER_ACCEPTED' } satisfies StatusChange]))
  t.ok(badUpdate instanceof BadRequestError)
  t.match(badUpdate, { status: 400, message: 'Invalid JSON format' })
  t.equal(mangling.requests.length, 2, 'a 400 is not retried')

  const slow = await faultProxy(t, served.baseUrl, () => ({ status: 503, headers: { 'retry-after': '30' } }))
  const controller = new AbortController()
  const started = Date.now()
  // The 503 read whole before the client has it: once it is, nothing is left but the wait to retry.
  let answered = 0
  const readWhole: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const body = await res.text()
    answered++
    return new Response(body, { status: res.status, headers: res.headers })
  }
  const waiting = t.rejects(createClient({ baseUrl: slow.url, apiKey: served.apiKey, fetch: readWhole }).orders.updateStatuses([{ orderId: 1, status: 'ORDER_ACCEPTED' }], { signal: controller.signal }))
  await eventually(t, 'the 503 answered', () => answered === 1)
  controller.abort()
  const aborted = await waiting
  t.ok(aborted instanceof AbortError, 'aborted while waiting to retry')
  t.ok(Date.now() - started < 5000, 'at once, not after the 30 s Retry-After')
})

t.test('a body over the service\'s limit is a PayloadTooLargeError, not retried', async (t) => {
  const served = await serve(t, { orders: 0, env: { SYNC_BODY_LIMIT_BYTES: '2048' } })
  let requests = 0
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    retry: fast,
    fetch: async (i, init) => { requests++; return fetch(i, init) }
  })
  const rows = Array.from({ length: 40 }, (_, i) => ({ retailerSyncId: `RET-${i}`, offerSyncId: `OFF-${i}`, outstandingQuantity: i }))
  const error = await t.rejects(client.shipments.sync(rows))
  t.ok(error instanceof PayloadTooLargeError)
  t.match(error, { status: 413, message: 'Request body is larger than the limit of 2048 bytes' })
  t.equal(requests, 1)
})

t.test('an attempt that gets no answer in time is abandoned and retried', async (t) => {
  const served = await serve(t, { orders: 30 })
  const proxy = await faultProxy(t, served.baseUrl, (i) => i === 0 ? 'hang' : 'pass')
  const client = createClient({ baseUrl: proxy.url, accessToken: served.accessToken, retry: fast, timeoutMs: 500 })
  const started = Date.now()
  const pages = []
  for await (const page of client.orders.pages({ limit: 100 })) pages.push(page)
  t.equal(pages.length, 1, 'the second attempt answered')
  t.equal(proxy.requests.length, 2)
  t.ok(Date.now() - started < 5000)

  const silent = await faultProxy(t, served.baseUrl, () => 'hang')
  const never = createClient({
    baseUrl: silent.url,
    apiKey: served.apiKey,
    retry: { ...fast, attempts: 2 },
    timeoutMs: 300
  })
  const error = await t.rejects(never.shipments.sync([{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]))
  t.ok(error instanceof NetworkError)
  t.match(error, { message: 'PUT /v2/shipments/outstanding/sync-data: no answer within 300 ms' })
  t.equal(silent.requests.length, 2)
})
