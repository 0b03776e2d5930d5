import t from 'tap'
import fc from 'fast-check'
import { build } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import {
  assertDeepBodies, codeUnits, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns,
  fuzzSeed, hostileString, listen, responseProblem, send, type FuzzRequest
} from '../helpers/fuzz.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { MAX_ITEMS } from '../../src/status-update/schemas.js'

/*
 * The two REST endpoints fuzzed over real HTTP from fixed seeds: bodies of every shape (items and rows
 * whose every field is of the wrong type or hostile text, __proto__ keys, deep nesting, invalid and
 * truncated JSON, sizes past the limits), headers and content types. Every answer is the contract's
 * envelope with a 2xx or 4xx; the counts add up; no order ever fails for storage reasons (that would be
 * bad input reaching the database); nothing is logged as an error.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const ENVELOPE_KEYS = ['error', 'status', 'statusCode', 'message']
const PER_ORDER_ERRORS = new Set<string>(Object.values(OrderErrors).flatMap((e) => typeof e === 'function' ? [] : [`${e.code} ${e.text}`]))
const REQUEST_STATUSES = new Set([200, 400, 401, 405, 413, 415])

/** Keys that break naive code: prototype names, JSON-looking, empty. */
const oddKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', 'order_status ', 'Order_ID', 'ORDER_STATUS')

function value (g: G): unknown {
  return g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.integer(), fc.double(), fc.constant(null)))
}

function withOddKeys (g: G, text: string): string {
  if (!coin(g, 10) || !text.startsWith('{')) return text
  return `{${JSON.stringify(g(() => oddKey))}: ${JSON.stringify(value(g))}, ${text.slice(1)}`
}

function statusItem (g: G, orderIds: number[]): unknown {
  if (coin(g, 5)) return value(g)
  const item: Record<string, unknown> = {}
  if (!coin(g, 5)) {
    item.Order_id = coin(g, 60)
      ? pick(g, orderIds)
      : g(() => fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e308, '17', '0017', '9007199254740993', ' 5', '5 ', ''), hostileString, fc.jsonValue({ maxDepth: 1 })))
  }
  if (!coin(g, 5)) {
    item.Order_Status = coin(g, 80)
      ? pick(g, ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER'])
      : g(() => fc.oneof(fc.constantFrom('order_accepted', 'CANCELLED', 'DELIVERED', 'ORDER_PLACED', ' ORDER_ACCEPTED', ''), hostileString, fc.jsonValue({ maxDepth: 1 })))
  }
  if (coin(g, 60)) {
    item.reason = g(() => fc.oneof(fc.constantFrom('Out of stock', '', '   ', null), hostileString, codeUnits, fc.jsonValue({ maxDepth: 1 })))
  }
  if (coin(g, 10)) item[g(() => oddKey)] = value(g)
  return item
}

function statusBody (g: G, orderIds: number[]): { body: string, contentType: string } {
  const kind = g(fc.nat, 99)
  const json = (v: unknown) => ({ body: withOddKeys(g, JSON.stringify(v)), contentType: 'application/json' })
  if (kind < 70) {
    return json({
      order_status: Array.from({ length: g(fc.integer, { min: 0, max: 25 }) }, () => statusItem(g, orderIds))
    })
  }
  if (kind < 74) return json({ order_status: Array.from({ length: MAX_ITEMS + 1 + g(fc.nat, 20) }, () => ({ Order_id: 1, Order_Status: 'ORDER_ACCEPTED' })) })
  if (kind < 80) return json(g(() => fc.oneof(fc.jsonValue(), fc.record({ order_status: fc.jsonValue() }))))
  if (kind < 86) {
    const text = JSON.stringify({ order_status: [statusItem(g, orderIds), statusItem(g, orderIds)] })
    return { body: text.slice(0, g(fc.nat, text.length)), contentType: 'application/json' }
  }
  if (kind < 90) {
    const depth = g(fc.integer, { min: 100, max: 200_000 })
    return { body: `{"order_status": [${'['.repeat(depth)}${']'.repeat(coin(g, 50) ? depth : 0)}]}`, contentType: 'application/json' }
  }
  if (kind < 93) return { body: JSON.stringify({ order_status: [{ Order_id: 1, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'r'.repeat(1_100_000) }] }), contentType: 'application/json' }
  return { body: JSON.stringify({ order_status: [statusItem(g, orderIds)] }), contentType: pick(g, ['text/plain', 'application/xml', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', '']) }
}

function quantity (g: G): unknown {
  return coin(g, 60)
    ? g(() => fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constantFrom('10.500', '0', '1e3', '0.1000000000000000000001', '12345678901234567890',
      // At and beyond a Float's bounds: what the outstandingShipments read gives back (refused below 2.5e-324).
      '5e-324', '1.7976931348623157e308', '1e-400', '2e-324', `0.${'0'.repeat(90)}1e-300`, `0.${'0'.repeat(97)}1`)))
    : g(() => fc.oneof(fc.constantFrom(-1, '-1', '-0', '-0.000', 'NaN', 'Infinity', '1e1001', '1e-1001', '1'.repeat(150), '', ' 1', '0x10', '1,5', true), hostileString, fc.jsonValue({ maxDepth: 1 })))
}

function syncId (g: G): unknown {
  return coin(g, 75)
    ? pick(g, ['RET-1-00001', 'RET-1-00002', 'SHOP-1-00001', 'VAR-1-001', 'VAR-1-002', 'R-NEW']) + (coin(g, 30) ? String(g(fc.nat, 50)) : '')
    : g(() => fc.oneof(hostileString, codeUnits, fc.constantFrom('', 'x'.repeat(201), 'x'.repeat(200)), fc.jsonValue({ maxDepth: 1 })))
}

function syncRow (g: G): unknown {
  if (coin(g, 5)) return value(g)
  const row: Record<string, unknown> = {}
  if (!coin(g, 5)) row.retailerSyncId = syncId(g)
  if (coin(g, 70)) row.shopSyncId = coin(g, 40) ? null : syncId(g)
  if (!coin(g, 5)) row.offerSyncId = syncId(g)
  if (!coin(g, 5)) row.outstandingQuantity = quantity(g)
  if (coin(g, 10)) row[g(() => oddKey)] = value(g)
  return row
}

function syncBody (g: G): { body: string, contentType: string } {
  const kind = g(fc.nat, 99)
  const json = (v: unknown) => ({ body: JSON.stringify(v), contentType: 'application/json' })
  if (kind < 70) {
    const rows = Array.from({ length: g(fc.integer, { min: 0, max: 40 }) }, () => syncRow(g))
    let text = JSON.stringify(rows)
    // Numbers written as the client's source holds them, beyond what JSON.stringify would print.
    if (coin(g, 20)) text = text.replace(/"outstandingQuantity":"(\d+(?:\.\d+)?(?:e-?\d+)?)"/g, '"outstandingQuantity":$1')
    return { body: coin(g, 5) ? `\ufeff ${text} \n` : text, contentType: 'application/json' }
  }
  if (kind < 78) return json(g(() => fc.oneof(fc.jsonValue(), fc.record({ rows: fc.jsonValue() }), fc.constant([]))))
  if (kind < 86) {
    const text = JSON.stringify(Array.from({ length: 3 }, () => syncRow(g)))
    return { body: text.slice(0, g(fc.nat, text.length)) + (coin(g, 30) ? pick(g, [',', ']]', '}', ' x', '\u0000']) : ''), contentType: 'application/json' }
  }
  if (kind < 90) {
    const depth = g(fc.integer, { min: 100, max: 200_000 })
    return { body: `[${'{"a":['.repeat(depth)}${']}'.repeat(coin(g, 50) ? depth : 0)}]`, contentType: 'application/json' }
  }
  if (kind < 94) return { body: `[${'{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":1},'.repeat(1500)}1]`, contentType: 'application/json' }
  return { body: JSON.stringify([syncRow(g)]), contentType: pick(g, ['text/plain', 'application/octet-stream', 'application/json; charset=utf-16', '']) }
}

function authHeaders (g: G, header: 'authorization' | 'x-api-key', key: string): Record<string, string> {
  if (coin(g, 95)) return { [header]: header === 'authorization' ? `Bearer ${key}` : key }
  return coin(g, 50) ? {} : { [header]: g(() => hostileString).replace(/[^\x20-\x7e]/g, '').slice(0, 200) }
}

function checkEnvelope (body: any, status: number): string | null {
  if (typeof body !== 'object' || body === null) return 'not an object'
  for (const key of ENVELOPE_KEYS) if (!(key in body)) return `no ${key}`
  if (body.statusCode !== status) return `statusCode ${body.statusCode} on a ${status}`
  if (body.error !== (status !== 200) || body.status !== (status === 200)) return 'error/status flags do not match'
  return null
}

t.test('fuzzed status updates: the envelope, counts that add up, no storage failure, nothing logged as an error', async (t) => {
  const { app, database, logs } = await build(t, { BODY_LIMIT_BYTES: String(1024 * 1024) }, { captureLogs: true })
  const summary = await seedDemo(database, 200)
  const key = await credential(database, 1, 'api-key')
  const orderIds = (await database.sql`select id::int from orders where seller_id = 1 order by id`).map((r) => r.id as number)
  const base = await listen(app)
  const seen = new Map<string, number>()
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const { body, contentType } = statusBody(g, orderIds)
    const request: FuzzRequest = {
      method: coin(g, 97) ? 'POST' : pick(g, ['PUT', 'GET', 'DELETE'] as const),
      path: '/v2/accounting/orders/update-status',
      headers: { ...authHeaders(g, 'authorization', key), ...(contentType ? { 'content-type': contentType } : {}) },
      body: undefined
    }
    if (request.method !== 'GET') request.body = body
    const res = await send(base, request)
    const problem = responseProblem(res) ?? (REQUEST_STATUSES.has(res.status) ? null : `status ${res.status}`) ?? checkEnvelope(res.json, res.status)
    if (problem) throw new Error(`${problem}\n${request.method} ${body.slice(0, 400)}\n→ ${res.text.slice(0, 300)}`)
    const reply = res.json
    seen.set(`${res.status} ${reply.message.slice(0, 40)}`, (seen.get(`${res.status} ${reply.message.slice(0, 40)}`) ?? 0) + 1)
    if (reply.data) {
      const items = (JSON.parse(body) as { order_status: unknown[] }).order_status
      if (reply.data.successful + reply.data.failed !== items.length) throw new Error(`counts ${reply.data.successful} + ${reply.data.failed} ≠ ${items.length}`)
      for (const e of reply.data.errors) {
        const transition = e.code === 'TRANSITION_NOT_ALLOWED' && /^Cannot change order status from [A-Z_]+ to [A-Z_]+$/.test(e.error)
        if (!(PER_ORDER_ERRORS.has(`${e.code} ${e.error}`) || transition)) throw new Error(`unknown per-order error ${JSON.stringify(e)}`)
        if (e.code === OrderErrors.storageFailure.code) throw new Error(`bad input reached the database: ${body.slice(0, 400)}`)
        if (!Number.isSafeInteger(e.index) || e.index < 0 || e.index >= items.length) throw new Error(`index ${JSON.stringify(e.index)}`)
        if (!(e.orderId === null || Number.isSafeInteger(e.orderId))) throw new Error(`orderId ${JSON.stringify(e.orderId)}`)
      }
    }
  }), { seed: fuzzSeed(4242), numRuns: fuzzRuns(1500), endOnFailure: true })
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`)
  for (const status of ['200 Order statuses updated successfully', '400 Invalid order status', '400 Order status is required', '400 Invalid JSON format', '401 Unauthorized', '413 Request body is larger than the limit of ', '415 Content-Type must be application/json']) {
    t.ok([...seen.keys()].some((k) => k.startsWith(status.slice(0, 44))), `the fuzz reached ${status}`)
  }
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
  // The effects of everything applied still agree with each other.
  const [ledger] = await database.sql`select bool_and(s.points_balance = l.total) as balanced from sellers s
    join (select seller_id, sum(amount) as total from points_ledger group by seller_id) l on l.seller_id = s.id`
  t.equal(ledger.balanced, true, 'every seller\'s points balance equals its ledger')
  const [once] = await database.sql`select count(*)::int as n from (select order_id from points_ledger where kind = 'ORDER_ACCEPTANCE' group by order_id having count(*) > 1) x`
  t.equal(once.n, 0, 'no order charged twice')
  t.ok(summary.sellers.length > 0)
})

t.test('fuzzed shipment syncs: the envelope, counts that add up, exact quantities, nothing logged as an error', async (t) => {
  const { app, database, logs } = await build(t, { SYNC_BODY_LIMIT_BYTES: String(64 * 1024) }, { captureLogs: true })
  await seedDemo(database, 30)
  const key = await credential(database, 1, 'api-key')
  const base = await listen(app)
  const seen = new Map<string, number>()
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const { body, contentType } = syncBody(g)
    const request: FuzzRequest = {
      method: coin(g, 97) ? 'PUT' : pick(g, ['POST', 'PATCH'] as const),
      path: '/v2/shipments/outstanding/sync-data',
      headers: { ...authHeaders(g, 'x-api-key', key), ...(contentType ? { 'content-type': contentType } : {}) },
      body
    }
    const res = await send(base, request)
    const problem = responseProblem(res) ?? (REQUEST_STATUSES.has(res.status) ? null : `status ${res.status}`) ?? checkEnvelope(res.json, res.status)
    if (problem) throw new Error(`${problem}\n${request.method} ${body.slice(0, 400)}\n→ ${res.text.slice(0, 300)}`)
    const reply = res.json
    seen.set(`${res.status} ${reply.message.slice(0, 40)}`, (seen.get(`${res.status} ${reply.message.slice(0, 40)}`) ?? 0) + 1)
    if (res.status === 200) {
      const d = reply.data
      if (d.inserted + d.updated + d.unchanged + d.duplicates + d.failed !== d.received) throw new Error(`counts do not add up: ${JSON.stringify(d)}`)
      if (d.errors.length !== d.failed || d.errors.some((e: { index: number }) => e.index < 0 || e.index >= d.received)) throw new Error(`errors ${JSON.stringify(d.errors).slice(0, 300)}`)
    }
  }), { seed: fuzzSeed(7007), numRuns: fuzzRuns(1500), endOnFailure: true })
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`)
  for (const status of ['200 Outstanding shipments synced successfully', '400 Invalid JSON format', '400 Request body must be a non-empty JSON', '401 Unauthorized', '413 Request body is larger than the limit of ', '415 Content-Type must be application/json']) {
    t.ok([...seen.keys()].some((k) => k.startsWith(status.slice(0, 44))), `the fuzz reached ${status}`)
  }
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
  // Whatever was stored is a valid, exact, non-negative numeric under a storable key.
  const [bad] = await database.sql`select count(*)::int as n from outstanding_shipments
    where outstanding_quantity < 0 or retailer_sync_id = '' or offer_sync_id = '' or shop_sync_id = ''`
  t.equal(bad.n, 0, 'no invalid row was stored')
  // Whatever was stored reads back through GraphQL: no quantity the read's Float cannot show.
  const [unreadable] = await database.sql`select count(*)::int as n from outstanding_shipments
    where outstanding_quantity <> 0 and outstanding_quantity < 2.4703282292062328e-324::numeric`
  t.equal(unreadable.n, 0, 'no stored quantity other than 0 reads as 0')
  const token = await credential(database, 1, 'access-token')
  const [rows] = await database.sql`select count(*)::int as n from outstanding_shipments where seller_id = 1`
  t.ok(rows.n > 0, 'the fuzz stored rows')
  for (let page = 1; page <= Math.ceil(rows.n / 100); page++) {
    const read = await send(base, {
      method: 'POST',
      path: '/v2/graphql',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ outstandingShipments(input: { page: ${page}, limit: 100 }) { nodes { offerSyncId outstandingQuantity } } }` })
    })
    t.equal(read.status, 200, `outstandingShipments page ${page}: ${read.text.slice(0, 300)}`)
    t.notOk((read.json as { errors?: unknown }).errors, `page ${page} without errors`)
  }
})

t.test('deep bodies on both REST endpoints, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  await seedDemo(database, 30)
  const key = await credential(database, 1, 'api-key')
  const base = await listen(app)
  const seen = await assertDeepBodies(base, [
    { method: 'POST', path: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}` }, template: `{"order_status":[{"Order_id":1,"Order_Status":"ORDER_ACCEPTED","reason":${DEEP_SLOT}}]}` },
    { method: 'POST', path: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}` }, template: `{"order_status":${DEEP_SLOT}}` },
    { method: 'PUT', path: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key }, template: `[{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":${DEEP_SLOT}}]` },
    { method: 'PUT', path: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key }, template: DEEP_SLOT }
  ], fuzzSeed(6401))
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})
