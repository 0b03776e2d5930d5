import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/build.js'
import { levelsAround } from '../helpers/fuzz.js'
import { createSeller, credential, platformKey } from '../helpers/fixtures.js'
import {
  PLATFORM_CATALOGUE_PATH, PLATFORM_DEALS_PATH, PLATFORM_ORDER_STATUS_PATH, PLATFORM_ORDERS_PATH, PLATFORM_POINTS_PATH,
  PLATFORM_RETAILERS_PATH, PLATFORM_SELLERS_PATH, REFERENCES_SYNC_PATH,
  STATUS_UPDATE_PATH, SYNC_PATH, WEBHOOK_ENDPOINTS_PATH
} from '../../src/routes/rest-contract.js'

/*
 * Regression tests of three findings on request bodies (issue "Safe to expose", findings 3, 4 and 8):
 * a body nested past 64 levels is refused (400 JSON_TOO_DEEP) on every route that reads JSON, before it is
 * parsed, with or without an Idempotency-Key (whose fingerprint used to overflow the stack: a 500); the
 * platform routes refuse a number a double cannot hold exactly (400 INEXACT_NUMBER naming its path) instead
 * of storing it rounded; and blank names and references are per-row errors. The literals (64, the texts)
 * are the contract's, written out here on purpose.
 */

const DEPTH_BOUND = 64
const TOO_DEEP = { message: `JSON body is nested more than ${DEPTH_BOUND} levels deep`, code: 'JSON_TOO_DEEP' }
const DEEP = '__DEEP__'
/** What no answer may carry: a stack, a source position, an internal error name. */
const INTERNALS = /at [\w.<>]+ \(|\.(ts|js):\d+:\d+|Maximum call stack|RangeError|TypeError/

const nested = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels)

/** Levels open at the placeholder in a body template. */
const levelsAt = (template: string): number => levelsAround(template, DEEP)

interface BodyRoute {
  name: string
  method: 'POST' | 'PUT' | 'PATCH'
  url: string
  auth: 'seller' | 'sync' | 'token' | 'platform'
  /** The body, DEEP standing for the nested value. */
  template: string
  graphql?: boolean
}

const ENDPOINT_ID = '3f0c6f0e-8d1b-4c1e-9f59-2b7a9a0f1c11'
const ROUTES: BodyRoute[] = [
  { name: 'status update', method: 'POST', url: STATUS_UPDATE_PATH, auth: 'seller', template: `{"order_status":[{"Order_id":1,"Order_Status":"ORDER_REJECTED_BY_SELLER","reason":${DEEP}}]}` },
  { name: 'shipment sync', method: 'PUT', url: SYNC_PATH, auth: 'sync', template: `[{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":${DEEP}}]` },
  { name: 'shipment sync, not an array', method: 'PUT', url: SYNC_PATH, auth: 'sync', template: `{"rows":${DEEP}}` },
  { name: 'references sync', method: 'PUT', url: REFERENCES_SYNC_PATH, auth: 'sync', template: `[{"type":"retailer","id":1,"syncId":${DEEP}}]` },
  { name: 'references sync, not an array', method: 'PUT', url: REFERENCES_SYNC_PATH, auth: 'sync', template: `{"rows":${DEEP}}` },
  { name: 'platform sellers', method: 'PUT', url: PLATFORM_SELLERS_PATH, auth: 'platform', template: `[{"companyId":1,"name":${DEEP}}]` },
  { name: 'platform points', method: 'POST', url: PLATFORM_POINTS_PATH, auth: 'platform', template: `[{"companyId":1,"amount":1,"reference":${DEEP}}]` },
  { name: 'platform retailers', method: 'PUT', url: PLATFORM_RETAILERS_PATH, auth: 'platform', template: `[{"id":1,"companyId":1,"shops":${DEEP}}]` },
  { name: 'platform catalogue', method: 'PUT', url: PLATFORM_CATALOGUE_PATH, auth: 'platform', template: `[{"id":1,"companyId":1,"skus":${DEEP}}]` },
  { name: 'platform deals', method: 'PUT', url: PLATFORM_DEALS_PATH, auth: 'platform', template: `[{"id":1,"companyId":1,"offerId":${DEEP}}]` },
  { name: 'platform orders', method: 'POST', url: PLATFORM_ORDERS_PATH, auth: 'platform', template: `[{"orderId":"1","orderItems":${DEEP}}]` },
  { name: 'platform update-status', method: 'POST', url: PLATFORM_ORDER_STATUS_PATH, auth: 'platform', template: `{"order_status":[{"Order_id":1,"Order_Status":"CANCELLED","reason":${DEEP}}]}` },
  { name: 'webhook endpoint create', method: 'POST', url: WEBHOOK_ENDPOINTS_PATH, auth: 'seller', template: `{"url":"https://93.184.216.34/hook","types":${DEEP}}` },
  { name: 'webhook endpoint update', method: 'PATCH', url: `${WEBHOOK_ENDPOINTS_PATH}/${ENDPOINT_ID}`, auth: 'seller', template: `{"events":${DEEP}}` },
  { name: 'webhook endpoint replay', method: 'POST', url: `${WEBHOOK_ENDPOINTS_PATH}/${ENDPOINT_ID}/replay`, auth: 'seller', template: `{"from":${DEEP}}` },
  { name: 'graphql variables', method: 'POST', url: '/v2/graphql', auth: 'token', graphql: true, template: `{"query":"{ __typename }","variables":{"x":${DEEP}}}` },
  { name: 'graphql extensions', method: 'POST', url: '/v2/graphql', auth: 'token', graphql: true, template: `{"query":"{ __typename }","extensions":${DEEP}}` }
]

async function setup (t: Parameters<typeof build>[0]) {
  const ctx = await build(t, {}, { captureLogs: true })
  const { sellerId: seller } = await createSeller(ctx.database)
  const keys = {
    seller: await credential(ctx.database, seller, 'api-key'),
    token: await credential(ctx.database, seller, 'access-token'),
    platform: await platformKey(ctx.database)
  }
  let key = 0
  const send = (route: BodyRoute, body: string, idempotent: boolean) => ctx.app.inject({
    method: route.method,
    url: route.url,
    headers: {
      ...(route.auth === 'sync' ? { 'x-api-key': keys.seller } : { authorization: `Bearer ${keys[route.auth]}` }),
      'content-type': 'application/json',
      ...(idempotent ? { 'idempotency-key': `deep-${++key}` } : {})
    },
    payload: body
  })
  return { ...ctx, keys, send }
}

const answer = (res: LightMyRequestResponse) => ({ status: res.statusCode, body: res.json() as unknown })

t.test('a body nested past 64 levels is a 400 JSON_TOO_DEEP on every JSON route, with or without Idempotency-Key', async (t) => {
  const { send, logs } = await setup(t)
  for (const route of ROUTES) {
    const around = levelsAt(route.template)
    const expected = route.graphql
      ? { data: null, errors: [{ message: TOO_DEEP.message, extensions: { code: TOO_DEEP.code } }] }
      : { error: true, status: false, statusCode: 400, ...TOO_DEEP }
    for (const total of [DEPTH_BOUND + 1, 1000, 400_000]) {
      for (const idempotent of [false, true]) {
        const body = route.template.replace(DEEP, nested(total - around))
        const res = await send(route, body, idempotent)
        const what = `${route.name}, ${total} levels${idempotent ? ', Idempotency-Key' : ''}`
        t.same(answer(res), { status: 400, body: expected }, what)
        t.notMatch(res.body, INTERNALS, `${what}: nothing internal in the answer`)
      }
    }
  }
  t.notMatch(logs(), /"level":(50|60)/, 'nothing was logged as an error')
})

t.test('a body exactly 64 levels deep is read as before: never JSON_TOO_DEEP, never a 5xx', async (t) => {
  const { send } = await setup(t)
  for (const route of ROUTES) {
    for (const idempotent of [false, true]) {
      const body = route.template.replace(DEEP, nested(DEPTH_BOUND - levelsAt(route.template)))
      const res = await send(route, body, idempotent)
      const what = `${route.name}${idempotent ? ', Idempotency-Key' : ''}`
      t.ok(res.statusCode < 500, `${what}: ${res.statusCode}`)
      t.notMatch(res.body, /JSON_TOO_DEEP/, what)
      t.notMatch(res.body, INTERNALS, what)
    }
  }
})

t.test('brackets inside strings do not count, and a GET /v2/graphql variables parameter is bounded too', async (t) => {
  const { send, app, keys } = await setup(t)
  const inString = JSON.stringify({ order_status: [{ Order_id: 1, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: '['.repeat(10_000) + '\\"{' }] })
  const res = await send(ROUTES[0], inString, false)
  t.equal(res.statusCode, 200, 'a reason full of brackets is text, not nesting')
  t.notMatch(res.body, /JSON_TOO_DEEP/)
  const get = await app.inject({
    method: 'GET',
    url: `/v2/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${encodeURIComponent(`{"x":${nested(5000)}}`)}`,
    headers: { authorization: `Bearer ${keys.token}` }
  })
  t.equal(get.statusCode, 400)
  t.same(get.json(), { data: null, errors: [{ message: `Invalid request: variables: ${TOO_DEEP.message}`, extensions: { code: TOO_DEEP.code } }] })
})

const INEXACT = (path: string, number: string, read: string) => ({
  error: true,
  status: false,
  statusCode: 400,
  message: `${path}: the number ${number} cannot be stored exactly (as a JSON number it reads as ${read}); ` +
    'send it as a numeric string or with at most 15 significant digits',
  code: 'INEXACT_NUMBER'
})

t.test('the platform routes refuse a number a double cannot hold exactly, naming its path; exact spellings pass', async (t) => {
  const { app, keys, database } = await setup(t)
  const call = (method: 'PUT' | 'POST', url: string, body: string, headers: Record<string, string> = {}) => app.inject({
    method, url, headers: { authorization: `Bearer ${keys.platform}`, 'content-type': 'application/json', ...headers }, payload: body
  })
  const seller = (takeRate: string, companyId = '7') =>
    `[{"companyId":${companyId},"name":"Seven","status":"ACTIVE","takeRate":${takeRate},"autoRejectEnabled":false,"stores":[{"id":71,"name":"Main"}]}]`
  const refused: Array<[string, string, string, ReturnType<typeof INEXACT>]> = [
    [PLATFORM_SELLERS_PATH, 'PUT', seller('0.1000000000000000000001'), INEXACT('rows[0].takeRate', '0.1000000000000000000001', '0.1')],
    [PLATFORM_SELLERS_PATH, 'PUT', seller('0', '12345678901234567890'), INEXACT('rows[0].companyId', '12345678901234567890', '12345678901234567000')],
    [PLATFORM_SELLERS_PATH, 'PUT', seller('0', '1e400'), INEXACT('rows[0].companyId', '1e400', 'Infinity')],
    [PLATFORM_POINTS_PATH, 'POST', '[{"companyId":7,"amount":1,"reference":"a"},{"companyId":7,"amount":10.000000000000000001,"reference":"b"}]',
      INEXACT('rows[1].amount', '10.000000000000000001', '10')],
    [PLATFORM_CATALOGUE_PATH, 'PUT',
      '[{"id":1,"companyId":7,"itemName":"I","skus":[{"id":2,"skuNickName":"S","images":[],"tags":[],"itemSellingUnits":[],' +
      '"offers":[{"id":3,"purchasePrice":1,"mrpPriceAmount":1,"finalPriceWithTax":1,"currency":"INR","priceRange":[{"minQuantity":1,"maxQuantity":null,"price":99.999999999999999999}]}]}]}]',
      INEXACT('rows[0].skus[0].offers[0].priceRange[0].price', '99.999999999999999999', '100')],
    [PLATFORM_DEALS_PATH, 'PUT', '[{"id":1,"companyId":7,"offerId":3,"dealDate":"2026-11-25","dealPrice":5,"maxQuantity":1.00000000000000000001}]',
      INEXACT('rows[0].maxQuantity', '1.00000000000000000001', '1')]
  ]
  for (const [url, method, body, expected] of refused) {
    for (const headers of [{}, { 'idempotency-key': `inexact-${url}-${expected.message.length}` }] as Array<Record<string, string>>) {
      const res = await call(method as 'PUT' | 'POST', url, body, headers)
      t.same(answer(res), { status: 400, body: expected }, `${url}: ${expected.message.slice(0, 60)}`)
    }
  }
  const [none] = await database.sql`select count(*)::int as n from sellers where id = 7`
  t.equal(none.n, 0, 'nothing of a refused body was stored')
  const invalid = await call('PUT', PLATFORM_SELLERS_PATH, seller('0.1000000000000000000001').slice(0, -3))
  t.equal(invalid.json().code, 'INVALID_JSON', 'a body that is not JSON is that, whatever its numbers')

  // Exact values in any spelling: 0.10, 1.0, 1e2, -0, 17 significant digits that a double holds.
  const exact = await call('PUT', PLATFORM_SELLERS_PATH, seller('0.10'))
  t.equal(exact.statusCode, 200)
  t.same(exact.json().data.errors, [])
  const [stored] = await database.sql`select take_rate::text as rate from sellers where id = 7`
  t.equal(stored.rate, '0.1000')
  const points = await call('POST', PLATFORM_POINTS_PATH,
    '[{"companyId":7,"amount":1e2,"reference":"e"},{"companyId":7,"amount":1.0,"reference":"f"},{"companyId":7.0,"amount":2.50,"reference":"g"}]')
  t.equal(points.statusCode, 200)
  t.same(points.json().data.errors, [])
  t.equal(points.json().data.inserted, 3)
})

t.test('the status update keeps its contract: an Order_id that is not a safe integer is that order\'s error', async (t) => {
  const { app, keys } = await setup(t)
  for (const url of [STATUS_UPDATE_PATH, PLATFORM_ORDER_STATUS_PATH]) {
    const key = url === STATUS_UPDATE_PATH ? keys.seller : keys.platform
    const status = url === STATUS_UPDATE_PATH ? 'ORDER_ACCEPTED' : 'CANCELLED'
    const res = await app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: `{"order_status":[{"Order_id":12345678901234567890,"Order_Status":"${status}"}]}`
    })
    t.equal(res.statusCode, 200, url)
    t.equal(res.json().data.failed, 1)
    t.equal(res.json().data.errors[0].error, 'Order_id must be a positive integer')
  }
})

t.test('blank names and references on the platform routes are per-row errors; the other rows are applied', async (t) => {
  const { app, keys, database } = await setup(t)
  const put = async (method: 'PUT' | 'POST', url: string, rows: unknown[]) => {
    const res = await app.inject({
      method, url, headers: { authorization: `Bearer ${keys.platform}`, 'content-type': 'application/json' }, payload: JSON.stringify(rows)
    })
    t.equal(res.statusCode, 200, url)
    return res.json().data
  }
  const blank = (field: string) => `${field} must not be blank: it has no character other than whitespace`
  const error = (index: number, id: unknown, field: string) => ({ index, id, error: blank(field), code: 'BLANK_TEXT' })
  const seller = (companyId: number, name: string, storeName = 'Main') =>
    ({ companyId, name, status: 'ACTIVE', takeRate: 0, autoRejectEnabled: false, stores: [{ id: companyId * 10, name: storeName }] })

  const sellers = await put('PUT', PLATFORM_SELLERS_PATH, [seller(8, ' '), seller(9, 'Nine', '\t\n'), seller(11, '\u00a0'), seller(12, 'Twelve')])
  t.same(sellers.errors, [error(0, 8, 'name'), error(1, 9, 'stores[0].name'), error(2, 11, 'name')])
  t.equal(sellers.inserted, 1)
  const [count] = await database.sql`select count(*)::int as n from sellers where id in (8, 9, 11)`
  t.equal(count.n, 0, 'no blank-named seller was stored')

  const points = await put('POST', PLATFORM_POINTS_PATH, [{ companyId: 12, amount: 5, reference: '   ' }, { companyId: 12, amount: 5, reference: 'top-up 1' }])
  t.same(points.errors, [error(0, '   ', 'reference')])
  t.equal(points.inserted, 1)

  const retailer = (id: number, extra: Record<string, unknown>) =>
    ({ id, companyId: 12, name: `R${id}`, firstName: null, lastName: null, phone: null, whatsapp: null, shops: [], ...extra })
  const retailers = await put('PUT', PLATFORM_RETAILERS_PATH, [
    retailer(801, { name: '  ' }), retailer(802, { firstName: ' ' }), retailer(803, { shops: [{ id: 8031, shopName: '\r\n' }] }), retailer(804, {})
  ])
  t.same(retailers.errors, [error(0, 801, 'name'), error(1, 802, 'firstName'), error(2, 803, 'shops[0].shopName')])
  t.equal(retailers.inserted, 1)

  const item = (id: number, itemName: string, unitName = 'Piece') => ({
    id,
    companyId: 12,
    itemName,
    skus: [{ id: id * 10, skuNickName: 'S', images: [], tags: [], itemSellingUnits: [{ id: id * 100, name: unitName, multiplier: 1, isBaseUnit: true }], offers: [] }]
  })
  const catalogue = await put('PUT', PLATFORM_CATALOGUE_PATH, [item(1, ' '), item(2, 'Tea', '  '), item(3, 'Coffee')])
  t.same(catalogue.errors, [error(0, 1, 'itemName'), error(1, 2, 'skus[0].itemSellingUnits[0].name')])
  t.equal(catalogue.inserted, 1)
})
