import t from 'tap'
import { build } from '../helpers/build.js'
import { credential } from '../helpers/fixtures.js'
import { accept, createShop, ok, orderStatus, post, URL } from '../helpers/status-update.js'

/* The request-level errors and request rules of docs/api/status-updates.md, through HTTP. */

const unauthorized = { error: true, status: false, statusCode: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED' }
const required = { error: true, status: false, statusCode: 400, message: 'Order status is required', code: 'ORDER_STATUS_REQUIRED' }

t.test('401 Unauthorized for every bad or missing credential, before the body is read', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const id = await shop.order()
  const body = JSON.stringify({ order_status: [accept(id)] })
  const token = await credential(database, shop.sellerId, 'access-token')
  const liveKey = await credential(database, shop.sellerId, 'api-key', { environment: 'production' })
  const key = await shop.apiKey()
  const cases: Array<[string, Record<string, string>]> = [
    ['no header', {}],
    ['not a Bearer header', { authorization: key }],
    ['unknown key', { authorization: 'Bearer oxs_test_ak_nope_nope' }],
    ['an access token', { authorization: `Bearer ${token}` }],
    ['a key of the other environment', { authorization: `Bearer ${liveKey}` }],
    ['the key in x-api-key instead of Authorization', { 'x-api-key': key }]
  ]
  for (const [name, headers] of cases) {
    const res = await app.inject({ method: 'POST', url: URL, headers: { 'content-type': 'application/json', ...headers }, payload: body })
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), unauthorized, name)
  }
  const bad = await app.inject({ method: 'POST', url: URL, headers: { 'content-type': 'application/json' }, payload: '{not json' })
  t.same(bad.json(), unauthorized, 'authorization is checked before the body')

  await database.sql`update credentials set revoked_at = now()`
  const revoked = await post(app, key, { order_status: [accept(id)] })
  t.same(revoked, { statusCode: 401, body: unauthorized }, 'a revoked key')
  t.equal(await orderStatus(database, id), 'ORDER_PLACED', 'nothing changed')
})

t.test('400 Invalid JSON format; Fastify\'s own parser text never leaks', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  for (const payload of ['{"order_status": [', '{order_status: []}', 'nope', '']) {
    const res = await app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.same(res.json(), { error: true, status: false, statusCode: 400, message: 'Invalid JSON format', code: 'INVALID_JSON' }, JSON.stringify(payload))
  }
})

t.test('400 Order status is required: missing, empty, not an array, body not an object', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const bodies: unknown[] = [
    {}, { order_status: [] }, { order_status: null }, { order_status: 'ORDER_ACCEPTED' }, { order_status: { Order_id: 1 } },
    { orderStatus: [accept(1)] }, [accept(1)], 'null', '"text"', '42', 'true'
  ]
  for (const body of bodies) {
    t.same(await post(app, key, body), { statusCode: 400, body: required }, JSON.stringify(body))
  }
  const noBody = await app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${key}` } })
  t.same(noBody.json(), required, 'no body at all')
})

t.test('at most 1,000 items; the message names the limit', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const id = await shop.order()
  const tooMany = await post(app, key, { order_status: Array.from({ length: 1001 }, () => accept(id)) })
  t.same(tooMany, { statusCode: 400, body: { error: true, status: false, statusCode: 400, message: 'Order status must contain at most 1000 items', code: 'TOO_MANY_ITEMS' } })
  t.equal(await orderStatus(database, id), 'ORDER_PLACED', 'an oversized batch changes nothing')

  const full = await post(app, key, { order_status: Array.from({ length: 1000 }, () => accept(id)) })
  t.same(full, { statusCode: 200, body: ok(1000, [], Array.from({ length: 999 }, () => id)) }, 'exactly 1,000 items are taken (the same order: one change, 999 no-ops)')
  t.equal(await orderStatus(database, id), 'ORDER_ACCEPTED')
})

t.test('unknown top-level fields are ignored; a non-JSON content type is refused', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const id = await shop.order()
  t.same(await post(app, key, { order_status: [accept(id)], batchRef: 'X-1' }), { statusCode: 200, body: ok(1) })
  const text = await app.inject({ method: 'POST', url: URL, headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, payload: 'hello' })
  t.equal(text.statusCode, 415)
  t.same(text.json(), { error: true, status: false, statusCode: 415, message: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' })
})
