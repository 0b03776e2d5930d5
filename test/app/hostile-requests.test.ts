import net from 'node:net'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { build, memoryLogger, testConfig } from '../helpers/build.js'
import { credential, createSeller } from '../helpers/fixtures.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { accept, createShop, failed, ok, orderStatus, post, reject, URL as STATUS_URL } from '../helpers/status-update.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'

/*
 * Regression tests of the issue "Safe to expose" for the REST side: text the database cannot hold is a
 * per-order validation error (never a storage failure whose log line carries the statement), a
 * database that cannot be reached is a clean 503, and the decisions on __proto__, methods and request ids.
 */

t.test('a reason with NUL or a lone surrogate is that order\'s validation error; no log line carries parameters', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b, c, d, e] = await shop.orders(5)
  const res = await post(app, key, {
    order_status: [
      { ...reject(a), reason: 'Out of stock\u0000SECRET-NUL' },
      { ...reject(b), reason: 'Out of stock \ud800 SECRET-SURROGATE' },
      { ...accept(c), reason: 'fine\udc00SECRET-LOW' },
      reject(d, 'Damaged \ud83d\udce6 in transit'),
      accept(e)
    ]
  })
  const unstorable = OrderErrors.reasonUnstorable
  t.equal(unstorable.text, 'Reason must not contain NUL characters or unpaired surrogates')
  const errors = [failed(0, a, unstorable), failed(1, b, unstorable), failed(2, c, unstorable)]
  t.same(res, { statusCode: 200, body: ok(2, errors) })
  t.equal(await orderStatus(database, a), 'ORDER_PLACED')
  t.equal(await orderStatus(database, d), 'ORDER_REJECTED_BY_SELLER', 'a well-formed emoji (a surrogate pair) is fine')
  const [history] = await database.sql`select reason from order_status_history where order_id = ${d}`
  t.equal(history.reason, 'Damaged \ud83d\udce6 in transit', 'stored exactly')
  t.notMatch(logs(), /"level":50/, 'no error-level line: these are client mistakes')
  t.notMatch(logs(), /SECRET-/, 'the rejected text is not logged')
})

t.test('a storage failure is logged without the statement\'s parameters', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a] = await shop.orders(1)
  // A history row whose reason trips a CHECK constraint: the write fails inside PostgreSQL.
  await database.sql`alter table order_status_history add constraint no_secrets check (reason is null or reason not like '%PARAM-SECRET%')`
  const res = await post(app, key, { order_status: [reject(a, 'PARAM-SECRET +91 98 7654 3210')] })
  t.same(res.body, ok(0, [failed(0, a, OrderErrors.storageFailure)]))
  const errorLines = logs().split('\n').filter((l) => l.includes('"level":50'))
  t.ok(errorLines.length > 0, 'the failure is logged at error level')
  t.match(errorLines.join('\n'), /no_secrets/, 'with what failed')
  t.notMatch(logs(), /PARAM-SECRET|98 7654/, 'but never with the values it was given')
  t.notMatch(logs(), /params:/)
})

t.test('__proto__ and constructor keys are ignored like any unknown key', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b] = await shop.orders(2)
  const body = `{"__proto__": {"polluted": 1}, "order_status": [
    {"Order_id": ${a}, "Order_Status": "ORDER_ACCEPTED", "__proto__": {"Order_Status": "ORDER_REJECTED_BY_SELLER"}},
    {"Order_id": ${b}, "Order_Status": "ORDER_ACCEPTED", "constructor": {"prototype": {"x": 1}}}]}`
  const res = await app.inject({ method: 'POST', url: STATUS_URL, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: body })
  t.equal(res.statusCode, 200)
  t.same(res.json(), ok(2, []))
  t.equal(await orderStatus(database, a), 'ORDER_ACCEPTED')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing reached a prototype')
  const sync = await app.inject({
    method: 'PUT',
    url: '/v2/shipments/outstanding/sync-data',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: '[{"retailerSyncId":"R1","offerSyncId":"O1","outstandingQuantity":1,"__proto__":{"outstandingQuantity":-5}}]'
  })
  t.equal(sync.statusCode, 200)
  t.equal(sync.json().data.inserted, 1)
})

t.test('a method the path does not take is 405 with Allow; OPTIONS is 204 with Allow', async (t) => {
  const { app } = await build(t)
  const cases: Array<[string, string, string]> = [
    ['DELETE', STATUS_URL, 'POST, OPTIONS'],
    ['GET', STATUS_URL, 'POST, OPTIONS'],
    ['POST', '/v2/shipments/outstanding/sync-data', 'PUT, OPTIONS'],
    ['PUT', '/health/live', 'GET, HEAD, OPTIONS']
  ]
  for (const [method, url, allow] of cases) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow)
    t.same(res.json(), { error: true, status: false, statusCode: 405, message: `Method ${method} is not allowed on ${url}; allowed: ${allow}`, code: 'METHOD_NOT_ALLOWED' })
  }
  const graphql = await app.inject({ method: 'DELETE', url: '/v2/graphql' })
  t.equal(graphql.statusCode, 405)
  t.equal(graphql.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.equal(graphql.json().errors[0].extensions.code, 'METHOD_NOT_ALLOWED', 'the GraphQL path answers in GraphQL\'s shape')
  const options = await app.inject({ method: 'OPTIONS', url: STATUS_URL })
  t.equal(options.statusCode, 204)
  t.equal(options.headers.allow, 'POST, OPTIONS')
  t.equal(options.body, '')
  const unknown = await app.inject({ method: 'OPTIONS', url: '/nowhere' })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { error: true, status: false, statusCode: 404, message: 'Route OPTIONS /nowhere not found', code: 'NOT_FOUND' })
})

t.test('a path with parameters follows the same rule: 405 with Allow for any id, 404 only where no route matches', async (t) => {
  const { app } = await build(t)
  const id = '3f0c2a4e-9b1d-4c6f-8e2a-7d5b9c1e0f34'
  const endpoint = `${WEBHOOK_ENDPOINTS_PATH}/${id}`
  // The method is wrong for every id: no credential is asked for, and an id that is not a UUID (which the routes
  // would answer 404 WEBHOOK_ENDPOINT_NOT_FOUND) is still a 405.
  const cases: Array<[string, string, string]> = [
    ['PUT', endpoint, 'PATCH, DELETE, OPTIONS'],
    ['GET', endpoint, 'PATCH, DELETE, OPTIONS'],
    ['POST', `${WEBHOOK_ENDPOINTS_PATH}/not-a-uuid`, 'PATCH, DELETE, OPTIONS'],
    ['GET', `${endpoint}/rotate-secret`, 'POST, OPTIONS'],
    ['DELETE', `${endpoint}/replay`, 'POST, OPTIONS'],
    ['POST', `${endpoint}/deliveries`, 'GET, HEAD, OPTIONS'],
    ['PUT', WEBHOOK_ENDPOINTS_PATH, 'GET, HEAD, POST, OPTIONS']
  ]
  for (const [method, url, allow] of cases) {
    const res = await app.inject({ method: method as 'GET', url: `${url}?limit=1` })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow)
    t.same(res.json(), { error: true, status: false, statusCode: 405, message: `Method ${method} is not allowed on ${url}; allowed: ${allow}`, code: 'METHOD_NOT_ALLOWED' })
  }
  const options = await app.inject({ method: 'OPTIONS', url: endpoint })
  t.same([options.statusCode, options.headers.allow, options.body], [204, 'PATCH, DELETE, OPTIONS', ''])
  for (const path of [`${endpoint}/nowhere`, `${endpoint}/`, `${WEBHOOK_ENDPOINTS_PATH}//test`]) {
    const res = await app.inject({ method: 'PUT', url: path })
    t.same([res.statusCode, res.json().code], [404, 'NOT_FOUND'], `PUT ${path}: no route matches, so 404`)
  }
})

t.test('a request id that does not look like one is replaced, not logged', async (t) => {
  const { app, logs } = await build(t, {}, { captureLogs: true })
  const kept = await app.inject({ url: '/health/live', headers: { 'x-request-id': 'erp-batch-2026.11.22:0001' } })
  t.equal(kept.headers['x-request-id'], 'erp-batch-2026.11.22:0001')
  for (const hostile of ['a'.repeat(129), 'two words', 'line\nbreak', '{"level":60}', '']) {
    const res = await app.inject({ url: '/health/live', headers: { 'x-request-id': hostile } })
    t.match(res.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${JSON.stringify(hostile.slice(0, 20))} replaced by a generated id`)
  }
  t.notMatch(logs(), /two words|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/)
})

/** A port nothing listens on. */
async function closedPort (): Promise<number> {
  const srv = net.createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as net.AddressInfo
  await new Promise((resolve) => srv.close(resolve))
  return port
}

t.test('a database that cannot be reached is 503 with Retry-After on every endpoint, never 500', async (t) => {
  const { database } = await build(t)
  const { sellerId } = await createSeller(database)
  const token = await credential(database, sellerId, 'access-token')
  const key = await credential(database, sellerId, 'api-key')
  const down = openDatabase(`postgres://postgres@127.0.0.1:${await closedPort()}/nothing`, { max: 2 })
  const { logger, logs } = memoryLogger()
  const app = await buildApp({ config: testConfig(database), database: down, logger })
  t.teardown(async () => { await app.close(); await down.close() })

  const graphql = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: '{ seller { name } }' } })
  t.equal(graphql.statusCode, 503)
  t.equal(graphql.headers['retry-after'], '5')
  t.same(graphql.json(), { data: null, errors: [{ message: 'Service temporarily unavailable: the database cannot be reached; retry shortly', extensions: { code: 'SERVICE_UNAVAILABLE' } }] })
  const status = await app.inject({ method: 'POST', url: STATUS_URL, headers: { authorization: `Bearer ${key}` }, payload: { order_status: [accept(1)] } })
  t.equal(status.statusCode, 503)
  t.equal(status.headers['retry-after'], '5')
  t.same(status.json(), { error: true, status: false, statusCode: 503, message: 'Service temporarily unavailable: the database cannot be reached; retry shortly', code: 'SERVICE_UNAVAILABLE' })
  const sync = await app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key }, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }] })
  t.equal(sync.statusCode, 503)
  t.equal(sync.json().statusCode, 503)
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200, 'the process itself is fine')
  t.notMatch(logs(), /"level":50/, 'an outage is a warning per request, not an error')
})
