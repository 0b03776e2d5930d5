import { randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { buildApp } from '../../src/app.js'
import { build, testConfig } from '../helpers/build.js'
import { credential, platformKey, seedDemo } from '../helpers/fixtures.js'
import { accept, createShop } from '../helpers/status-update.js'

/*
 * Rate limits per credential: REST requests per minute, GraphQL query cost from a refilling bucket,
 * 429 in each endpoint's envelope with Retry-After and RateLimit-* headers; counted in the process, or
 * shared by several instances through the machine's Redis (127.0.0.1:6379).
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function sync (app: FastifyInstance, key: string, rows: unknown[] = [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]) {
  return app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: rows })
}

function graphql (app: FastifyInstance, token: string, query: string) {
  return app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { query } })
}

async function sharedRedis (t: Test): Promise<{ url: string, prefix: string, client: () => Redis }> {
  const prefix = `oxs-test-${randomUUID()}:`
  const clients: Redis[] = []
  t.teardown(async () => {
    const admin = new Redis(REDIS_URL)
    const keys = await admin.keys(`${prefix}*`)
    if (keys.length > 0) await admin.del(...keys)
    await admin.quit()
    for (const c of clients) await c.quit().catch(() => {})
  })
  return { url: REDIS_URL, prefix, client: () => { const c = new Redis(REDIS_URL); clients.push(c); return c } }
}

t.test('REST: requests per minute per credential; the 429 in the REST envelope with its headers', async (t) => {
  const { app, database } = await build(t, { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_SYNC_PER_MINUTE: '3', RATE_LIMIT_STATUS_UPDATE_PER_MINUTE: '2' })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  for (let i = 0; i < 3; i++) {
    const ok = await sync(app, key)
    t.equal(ok.statusCode, 200, `sync ${i + 1} of 3`)
    t.equal(ok.headers['ratelimit-limit'], '3')
    t.equal(ok.headers['ratelimit-remaining'], String(2 - i))
  }
  const refused = await sync(app, key, [{ retailerSyncId: 'R', offerSyncId: 'REFUSED', outstandingQuantity: 1 }])
  t.equal(refused.statusCode, 429)
  t.match(refused.json(), { error: true, status: false, statusCode: 429, code: 'RATE_LIMITED', message: /^Rate limit exceeded: at most 3 requests a minute per credential on this endpoint; retry in \d+ s$/ })
  t.ok(Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 60, `Retry-After ${refused.headers['retry-after']}`)
  t.equal(refused.headers['ratelimit-remaining'], '0')
  const [stored] = await database.sql`select count(*)::int as n from outstanding_shipments where offer_sync_id = 'REFUSED'`
  t.equal(stored!.n, 0, 'a refused request does nothing')

  const other = await shop.apiKey()
  t.equal((await sync(app, other)).statusCode, 200, 'another credential has its own budget')
  const [a, b, c] = await shop.orders(3)
  const update = (id: number) => app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { order_status: [accept(id)] } })
  t.equal((await update(a!)).statusCode, 200, 'each endpoint has its own budget')
  t.equal((await update(b!)).statusCode, 200)
  const third = await update(c!)
  t.equal(third.statusCode, 429)
  t.equal(third.json().code, 'RATE_LIMITED')
  t.equal((await app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: 'Bearer nope', 'content-type': 'application/json' }, payload: {} })).statusCode, 401, 'a bad key is 401 before any budget is spent')
})

t.test('platform routes: requests per minute per platform key, each route its own budget', async (t) => {
  const { app, database } = await build(t, { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PLATFORM_PER_MINUTE: '2' })
  const key = await platformKey(database)
  const put = (k: string, url: string, rows: unknown[]) => app.inject({
    method: url.endsWith('/points') || url.endsWith('/orders') ? 'POST' : 'PUT',
    url,
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
    payload: rows
  })
  const seller = (id: number) => [{ companyId: id, name: `Seller ${id}`, status: 'ACTIVE', takeRate: '0.05', autoRejectEnabled: false, stores: [] }]
  t.equal((await put(key, '/v2/platform/sellers', seller(9001))).statusCode, 200, 'request 1 of 2')
  t.equal((await put(key, '/v2/platform/sellers', seller(9002))).statusCode, 200, 'request 2 of 2')
  const refused = await put(key, '/v2/platform/sellers', seller(9003))
  t.equal(refused.statusCode, 429)
  t.match(refused.json(), { error: true, statusCode: 429, code: 'RATE_LIMITED', message: /at most 2 requests a minute per credential/ })
  t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After')
  const [stored] = await database.sql`select count(*)::int as n from sellers where id = 9003`
  t.equal(stored!.n, 0, 'a refused batch writes nothing')
  const points = await put(key, '/v2/platform/sellers/points', [{ companyId: 9001, amount: '10.00', reference: 'R1' }])
  t.equal(points.statusCode, 200, 'another route has its own budget')
  t.equal((await put(await platformKey(database), '/v2/platform/sellers', seller(9004))).statusCode, 200,
    'another platform key has its own budget')
})

t.test('GraphQL: query cost from a refilling bucket, reported in extensions.cost; refused with RATE_LIMITED', async (t) => {
  const { app, database } = await build(t, { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '100000', GRAPHQL_COST_RESTORE_PER_SECOND: '1' })
  await seedDemo(database, 30)
  const token = await credential(database, 1, 'access-token')
  const page = '{ orders(input: {limit: 100}) { pageInfo { total } nodes { orderId orderItems { id sku { offers { id } } } } } }'
  const first = await graphql(app, token, page)
  t.equal(first.statusCode, 200)
  const cost = first.json().extensions.cost
  t.match(cost, {
    requestedQueryCost: Number, actualQueryCost: Number, throttleStatus: { maximumAvailable: 100_000, restoreRate: 1 }
  })
  t.ok(cost.requestedQueryCost > 5_000, `a page of 100 with nested lists costs ${cost.requestedQueryCost}`)
  t.ok(cost.actualQueryCost < cost.requestedQueryCost, `billed ${cost.actualQueryCost} for a page of 30 orders`)
  t.equal(cost.throttleStatus.currentlyAvailable, 100_000 - cost.actualQueryCost, 'the difference came back')
  t.equal(first.headers['ratelimit-remaining'], String(100_000 - cost.actualQueryCost))

  // Pages while the bucket still holds a page's requested cost, each billed its actual cost; then a
  // refusal (it refills at 1 point a second: nothing here).
  const fits = Math.floor((100_000 - cost.requestedQueryCost) / cost.actualQueryCost) + 1
  const statuses: number[] = [first.statusCode]
  let refused
  while (!refused && statuses.length < fits + 3) {
    const res = await graphql(app, token, page)
    statuses.push(res.statusCode)
    if (res.statusCode === 429) refused = res
  }
  t.same(statuses, [...Array(fits).fill(200), 429], `${fits} pages fit, the next is refused`)
  t.match(refused!.json(), { data: null, errors: [{ message: /^Rate limit exceeded: this query costs \d+ points and \d+ of 100000 are available/, extensions: { code: 'RATE_LIMITED' } }] })
  t.ok(Number(refused!.headers['retry-after']) >= 1)
  const cheap = await graphql(app, token, '{ seller { name } }')
  t.equal(cheap.statusCode, 200, 'a cheap query still fits what is left')
  t.ok(cheap.json().extensions.cost.requestedQueryCost < 1000)
})

t.test('two instances sharing Redis share each credential\'s budget', async (t) => {
  const redis = await sharedRedis(t)
  const env = { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_SYNC_PER_MINUTE: '4', GRAPHQL_COST_BUCKET: '100000', GRAPHQL_COST_RESTORE_PER_SECOND: '1', REDIS_KEY_PREFIX: redis.prefix }
  const { database } = await build(t)
  await seedDemo(database, 30)
  // Two instances of the service on one database and one Redis, as behind a load balancer.
  const apps = await Promise.all([0, 1].map(async () => {
    const app = await buildApp({ config: testConfig(database, env), database, redis: redis.client() })
    t.teardown(() => app.close())
    return app
  }))
  const key = await credential(database, 1, 'api-key')
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await sync(apps[i % 2]!, key)).statusCode)
  t.same(statuses, [200, 200, 200, 200, 429, 429], 'four in all, whichever instance answers')

  const token = await credential(database, 1, 'access-token')
  const page = '{ orders(input: {limit: 100}) { nodes { orderId orderItems { id sku { offers { id } } } } } }'
  const spent: number[] = []
  let cost = { requestedQueryCost: 0, actualQueryCost: 0 }
  for (let i = 0; i < 1000; i++) {
    const res = await graphql(apps[i % 2]!, token, page)
    if (res.statusCode !== 200) break
    cost = res.json().extensions.cost
    spent.push(res.json().extensions.cost.throttleStatus.currentlyAvailable)
  }
  const fits = Math.floor((100_000 - cost.requestedQueryCost) / cost.actualQueryCost) + 1
  t.equal(spent.length, fits, `${spent.length} pages billed ${cost.actualQueryCost} points, on two instances, before the shared bucket ran dry`)
  t.ok(spent.every((v, i) => i === 0 || v < spent[i - 1]!), 'each instance sees what the other spent')
})

t.test('Redis away: requests go through (the limiter is not worth an outage)', async (t) => {
  const { database } = await build(t)
  const broken = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null })
  broken.on('error', () => {})
  const app = await buildApp({ config: testConfig(database, { RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_SYNC_PER_MINUTE: '1' }), database, redis: broken })
  t.teardown(() => app.close())
  await seedDemo(database, 10)
  const key = await credential(database, 1, 'api-key')
  t.same([(await sync(app, key)).statusCode, (await sync(app, key)).statusCode], [200, 200])
  const token = await credential(database, 1, 'access-token')
  t.equal((await graphql(app, token, '{ seller { name } }')).statusCode, 200)
})
