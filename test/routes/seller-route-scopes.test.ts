import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { credential } from '../helpers/fixtures.js'
import { LINKS, storesOf } from '../helpers/platform-market.js'
import { webhookMarket, type WebhookMarket } from '../helpers/webhooks.js'
import {
  REFERENCES_SYNC_PATH, STATUS_UPDATE_PATH, SYNC_PATH, WEBHOOK_ENDPOINTS_PATH
} from '../../src/routes/rest-contract.js'

/*
 * Every route that takes a seller's credential, against three credentials: the whole seller 1, seller 1
 * narrowed to its first store (11), and another seller (2). Each row says what each one sees or does on
 * that route. The table is checked against the routes the app registers: a new route that is in neither
 * the table nor the list of routes that take no seller credential fails here, so that whoever adds it has
 * to say what a narrowed key may do with it.
 *
 * The rule the webhook routes follow (src/webhooks/endpoints.ts withinScope): an endpoint keeps the scope
 * of the key that made it; a whole-seller key sees all of its seller's endpoints, a narrowed key only those
 * made within its stores; anything else is 404 WEBHOOK_ENDPOINT_NOT_FOUND. The other routes are encoded as
 * they already behave: the orders read and the feed show a narrowed credential its stores' orders only, the
 * status update answers ORDER_NOT_AUTHORIZED for another store's order, and the two syncs write the
 * seller's records, which belong to no store (sync IDs of retailers, shops, offers), for any of its keys.
 */

type Who = 'whole' | 'narrowed' | 'other'
const WHO: Who[] = ['whole', 'narrowed', 'other']
const STORE_A = storesOf(1)[0]
const HOOK_URL = 'http://127.0.0.1:9/hook'

interface Reply { status: number, json: any }

interface Scene {
  m: WebhookMarket
  apiKey: Record<Who, string>
  token: Record<Who, string>
  /** Endpoints made by seller 1's whole key (W) and by its narrowed key (N). */
  W: string
  N: string
}

async function send (
  app: FastifyInstance, method: string, url: string, headers: Record<string, string>, body?: unknown
): Promise<Reply> {
  const res = await app.inject({
    method: method as 'GET',
    url,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) })
  })
  return { status: res.statusCode, json: res.body === '' ? null : res.json() }
}

const hooks = (s: Scene, who: Who, method: string, path: string, body?: unknown): Promise<Reply> =>
  send(s.m.app, method, `${WEBHOOK_ENDPOINTS_PATH}${path}`, { authorization: `Bearer ${s.apiKey[who]}` }, body)

/** 200/201, or the status and the error code. */
const outcome = (r: Reply): number | string => r.status < 300 ? r.status : `${r.status} ${r.json?.code as string}`
const NF = '404 WEBHOOK_ENDPOINT_NOT_FOUND'

const ORDERS_QUERY = 'query { orders(input: {limit: 100}) { nodes { orderId } } }'
const EVENTS_QUERY = 'query { events(input: {after: "0", limit: 100}) { nodes { order { orderId } } } }'
const orderIds = (nodes: Array<{ orderId?: string, order?: { orderId: string } | null }>): string[] =>
  [...new Set(nodes.map((n) => n.orderId ?? n.order?.orderId).filter((id): id is string => id !== undefined))].sort()

type EndpointRow = { seller_id: number, store_ids: number[] | null, description: string }
async function endpointRow (s: Scene, id: string): Promise<EndpointRow | undefined> {
  const [row] = await s.m.database.sql<EndpointRow[]>`
    select seller_id, store_ids, description from subscriptions where id = ${id}::uuid`
  return row
}

interface Row {
  method: string
  path: string
  /** What `who` sees or does on the route, as a value compared with expect[who]. */
  observe: (s: Scene, who: Who) => Promise<unknown>
  expect: Record<Who, unknown>
}

/** Status-update orders per credential: one in store A (11), one in store B (12), both seller 1's. */
const UPDATE_ORDERS: Record<Who, [number, number]> = {
  whole: [8101, 8102], narrowed: [8201, 8202], other: [8301, 8302]
}

/** Seller 1's orders in store A (11) and in store B (12), seller 2's: placed before the table runs. */
const IN_STORE_A = ['8001', ...Object.values(UPDATE_ORDERS).map(([a]) => String(a))]
const IN_STORE_B = ['8002', ...Object.values(UPDATE_ORDERS).map(([, b]) => String(b))]
const SELLER_TWO = ['9001']
/** The orders the orders read and the feed show each credential. */
const SEEN: Record<Who, { orders: string[], events: string[] }> = {
  whole: { orders: [...IN_STORE_A, ...IN_STORE_B].sort(), events: [...IN_STORE_A, ...IN_STORE_B].sort() },
  narrowed: { orders: IN_STORE_A.sort(), events: IN_STORE_A.sort() },
  other: { orders: SELLER_TWO, events: SELLER_TWO }
}

const SELLER_ROUTES: Row[] = [
  {
    method: 'POST',
    path: '/v2/graphql',
    async observe (s, who) {
      const post = async (query: string) =>
        (await send(s.m.app, 'POST', '/v2/graphql', { authorization: `Bearer ${s.token[who]}` }, { query })).json.data
      return {
        orders: orderIds((await post(ORDERS_QUERY)).orders.nodes),
        events: orderIds((await post(EVENTS_QUERY)).events.nodes)
      }
    },
    expect: { whole: SEEN.whole, narrowed: SEEN.narrowed, other: SEEN.other }
  },
  {
    method: 'GET',
    path: '/v2/graphql',
    async observe (s, who) {
      const get = async (query: string) => (await send(s.m.app, 'GET', `/v2/graphql?query=${encodeURIComponent(query)}`,
        { authorization: `Bearer ${s.token[who]}` })).json.data
      return {
        orders: orderIds((await get(ORDERS_QUERY)).orders.nodes),
        events: orderIds((await get(EVENTS_QUERY)).events.nodes)
      }
    },
    expect: { whole: SEEN.whole, narrowed: SEEN.narrowed, other: SEEN.other }
  },
  {
    method: 'POST',
    path: STATUS_UPDATE_PATH,
    async observe (s, who) {
      const [a, b] = UPDATE_ORDERS[who]
      const r = await send(s.m.app, 'POST', STATUS_UPDATE_PATH, { authorization: `Bearer ${s.apiKey[who]}` },
        { order_status: [{ Order_id: a, Order_Status: 'ORDER_ACCEPTED' }, { Order_id: b, Order_Status: 'ORDER_ACCEPTED' }] })
      const statuses = await s.m.database.sql<Array<{ status: string }>>`
        select status::text as status from orders where id = any(${[a, b]}::bigint[]) order by id`
      return {
        status: r.status,
        successful: r.json.data.successful,
        errors: r.json.data.errors.map((e: { orderId: number, code: string }) => [e.orderId, e.code]),
        orders: statuses.map((o) => o.status)
      }
    },
    expect: {
      whole: { status: 200, successful: 2, errors: [], orders: ['ORDER_ACCEPTED', 'ORDER_ACCEPTED'] },
      narrowed: {
        status: 200, successful: 1, errors: [[8202, 'ORDER_NOT_AUTHORIZED']], orders: ['ORDER_ACCEPTED', 'ORDER_PLACED']
      },
      other: {
        status: 200,
        successful: 0,
        errors: [[8301, 'ORDER_NOT_FOUND'], [8302, 'ORDER_NOT_FOUND']],
        orders: ['ORDER_PLACED', 'ORDER_PLACED']
      }
    }
  },
  {
    // Outstanding shipments are keyed by the seller's sync IDs (retailer, shop, offer), not by store: any
    // key of the seller writes the seller's rows.
    method: 'PUT',
    path: SYNC_PATH,
    async observe (s, who) {
      const offer = `OFF-${who}`
      const r = await send(s.m.app, 'PUT', SYNC_PATH, { 'x-api-key': s.apiKey[who] },
        [{ retailerSyncId: 'RET-1', shopSyncId: null, offerSyncId: offer, outstandingQuantity: 3 }])
      const rows = await s.m.database.sql`select seller_id from outstanding_shipments where offer_sync_id = ${offer}`
      return { status: r.status, inserted: r.json.data.inserted, sellers: rows.map((row) => row.seller_id) }
    },
    expect: {
      whole: { status: 200, inserted: 1, sellers: [1] },
      narrowed: { status: 200, inserted: 1, sellers: [1] },
      other: { status: 200, inserted: 1, sellers: [2] }
    }
  },
  {
    // Sync IDs are the seller's, of records of no store: any key of the seller sets its own; another
    // seller's retailer is not its to name.
    method: 'PUT',
    path: REFERENCES_SYNC_PATH,
    async observe (s, who) {
      // Linked to seller 1, not to seller 2.
      const retailer = LINKS[1]!.find((r) => !LINKS[2]!.includes(r))!
      const r = await send(s.m.app, 'PUT', REFERENCES_SYNC_PATH, { 'x-api-key': s.apiKey[who] },
        [{ type: 'RETAILER', id: retailer, syncId: `CUST-${who}` }])
      const [row] = await s.m.database.sql`select sync_id from seller_retailers where seller_id = 1 and retailer_id = ${retailer}`
      return { status: r.status, failed: r.json.data.failed, sellerOnesSyncId: row.sync_id }
    },
    expect: {
      whole: { status: 200, failed: 0, sellerOnesSyncId: 'CUST-whole' },
      narrowed: { status: 200, failed: 0, sellerOnesSyncId: 'CUST-narrowed' },
      other: { status: 200, failed: 1, sellerOnesSyncId: 'CUST-narrowed' }
    }
  },
  {
    method: 'POST',
    path: WEBHOOK_ENDPOINTS_PATH,
    async observe (s, who) {
      const r = await hooks(s, who, 'POST', '', { url: HOOK_URL, description: `made by ${who}` })
      const row = await endpointRow(s, r.json.data.id)
      return { status: outcome(r), seller: row?.seller_id, stores: row?.store_ids }
    },
    expect: {
      whole: { status: 201, seller: 1, stores: null },
      narrowed: { status: 201, seller: 1, stores: [STORE_A] },
      other: { status: 201, seller: 2, stores: null }
    }
  },
  {
    method: 'GET',
    path: WEBHOOK_ENDPOINTS_PATH,
    async observe (s, who) {
      const r = await hooks(s, who, 'GET', '')
      const listed: string[] = r.json.data.endpoints.map((e: { id: string }) => e.id)
      const scopes = await Promise.all(listed.map(async (id) => (await endpointRow(s, id))!))
      return {
        status: outcome(r),
        W: listed.includes(s.W),
        N: listed.includes(s.N),
        scopes: [...new Set(scopes.map((e) => `${e.seller_id}:${e.store_ids?.join(',') ?? 'all'}`))].sort()
      }
    },
    expect: {
      whole: { status: 200, W: true, N: true, scopes: ['1:11', '1:all'] },
      narrowed: { status: 200, W: false, N: true, scopes: ['1:11'] },
      other: { status: 200, W: false, N: false, scopes: ['2:all'] }
    }
  },
  {
    method: 'PATCH',
    path: `${WEBHOOK_ENDPOINTS_PATH}/:id`,
    async observe (s, who) {
      const result: Record<string, unknown> = {}
      for (const [name, id] of [['W', s.W], ['N', s.N]] as const) {
        const r = await hooks(s, who, 'PATCH', `/${id}`, { description: `patched by ${who}`, url: `${HOOK_URL}/${who}` })
        result[name] = [outcome(r), (await endpointRow(s, id))!.description === `patched by ${who}`]
      }
      return result
    },
    expect: {
      whole: { W: [200, true], N: [200, true] },
      narrowed: { W: [NF, false], N: [200, true] },
      other: { W: [NF, false], N: [NF, false] }
    }
  },
  {
    method: 'DELETE',
    path: `${WEBHOOK_ENDPOINTS_PATH}/:id`,
    async observe (s, who) {
      // Fresh endpoints of seller 1 (one per scope), so that each credential deletes its own.
      const made = async (by: Who) => (await hooks(s, by, 'POST', '', { url: HOOK_URL })).json.data.id as string
      const result: Record<string, unknown> = {}
      for (const [name, id] of [['W', await made('whole')], ['N', await made('narrowed')]] as const) {
        const r = await hooks(s, who, 'DELETE', `/${id}`)
        result[name] = [outcome(r), (await endpointRow(s, id)) === undefined ? 'gone' : 'kept']
      }
      return result
    },
    expect: {
      whole: { W: [200, 'gone'], N: [200, 'gone'] },
      narrowed: { W: [NF, 'kept'], N: [200, 'gone'] },
      other: { W: [NF, 'kept'], N: [NF, 'kept'] }
    }
  },
  ...([
    ['POST', '/rotate-secret', undefined],
    ['POST', '/test', undefined],
    ['GET', '/deliveries', undefined],
    ['POST', '/replay', { after: '0' }]
  ] as Array<[string, string, unknown]>).map(([method, tail, body]): Row => ({
    method,
    path: `${WEBHOOK_ENDPOINTS_PATH}/:id${tail}`,
    async observe (s, who) {
      // One replay of an endpoint is pending at a time: the last one is taken as delivered first.
      const call = async (id: string) => {
        await s.m.database.sql`update deliveries set status = 'DELIVERED' where replay and status = 'PENDING'`
        return outcome(await hooks(s, who, method, `/${id}${tail}`, body))
      }
      return { W: await call(s.W), N: await call(s.N) }
    },
    expect: { whole: { W: 200, N: 200 }, narrowed: { W: NF, N: 200 }, other: { W: NF, N: NF } }
  }))
]

/** Routes that take no seller credential: probes, metrics (METRICS_TOKEN), docs, the explorer, the platform's. */
const NOT_SELLER_ROUTES = new Set([
  'GET /health/live', 'GET /health/ready', 'GET /metrics',
  'GET /v2/openapi.json', 'GET /docs', 'GET /docs/', 'GET /docs/static/index.html', 'GET /docs/static/swagger-initializer.js',
  'GET /docs/*', 'GET /docs/json', 'GET /docs/yaml',
  'GET /graphiql', 'GET /graphiql/assets/:name',
  'PUT /v2/platform/sellers', 'POST /v2/platform/sellers/points', 'PUT /v2/platform/retailers',
  'POST /v2/platform/orders', 'POST /v2/platform/orders/update-status', 'PUT /v2/platform/catalogue', 'PUT /v2/platform/deals',
  'GET /v2/platform/refunds', 'POST /v2/platform/refunds/settle', 'GET /v2/platform/payouts', 'POST /v2/platform/payouts/settle',
  'GET /v2/platform/sellers/:companyId/ledger',
  // CORS preflight, answered before any route.
  'OPTIONS *'
])

/**
 * Every method and path the app registers, from Fastify's route tree (printRoutes without a common prefix:
 * one node per line, four characters of indentation per level, its methods in parentheses). HEAD is the
 * GET's own (exposeHeadRoutes), so left out.
 */
function registeredRoutes (app: FastifyInstance): string[] {
  const stack: string[] = []
  const routes: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (m === null) continue
    const depth = m[1].length / 4
    const path = (depth === 0 ? '' : stack[depth - 1]) + m[2]
    stack[depth] = path
    stack.length = depth + 1
    for (const method of (m[3] ?? '').split(', ').filter((x) => x !== '' && x !== 'HEAD')) routes.push(`${method} ${path}`)
  }
  return routes
}

t.test('every seller route, for the whole seller, a key narrowed to one store, another seller', async (t: Test) => {
  const m = await webhookMarket(t, {
    METRICS_TOKEN: 'metrics-token-of-the-test', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true'
  })
  await m.place([
    { orderId: 8001, seller: 1, storeIndex: 0 }, { orderId: 8002, seller: 1, storeIndex: 1 },
    { orderId: 9001, seller: 2 },
    ...Object.values(UPDATE_ORDERS).flatMap(([a, b]) =>
      [{ orderId: a, seller: 1, storeIndex: 0 }, { orderId: b, seller: 1, storeIndex: 1 }])
  ])
  const apiKey: Record<Who, string> = {
    whole: await m.apiKey(1),
    narrowed: await credential(m.database, 1, 'api-key', { storeIds: [STORE_A] }),
    other: await m.apiKey(2)
  }
  const token: Record<Who, string> = {
    whole: await m.token(1), narrowed: await m.token(1, { storeIds: [STORE_A] }), other: await m.token(2)
  }
  const scene0 = { m, apiKey, token, W: '', N: '' }
  const W = (await hooks(scene0, 'whole', 'POST', '', { url: HOOK_URL, description: 'W' })).json.data.id
  const N = (await hooks(scene0, 'narrowed', 'POST', '', { url: HOOK_URL, description: 'N' })).json.data.id
  const scene: Scene = { m, apiKey, token, W, N }
  t.ok(W !== undefined && N !== undefined, 'both endpoints made')
  t.same(await endpointRow(scene, W).then((r) => r?.store_ids), null)
  t.same(await endpointRow(scene, N).then((r) => r?.store_ids), [STORE_A])

  for (const row of SELLER_ROUTES) {
    for (const who of WHO) {
      t.same(await row.observe(scene, who), row.expect[who], `${row.method} ${row.path} as ${who}`)
    }
  }

  const registered = registeredRoutes(m.app)
  t.ok(registered.includes(`POST ${STATUS_UPDATE_PATH}`) && registered.length > 25, 'the route tree was read')
  const tabled = new Set(SELLER_ROUTES.map((r) => `${r.method} ${r.path}`))
  const untabled = registered.filter((r) => !tabled.has(r) && !NOT_SELLER_ROUTES.has(r))
  t.same(untabled, [], 'every registered route is in the table of seller routes or listed as taking no seller credential')
  t.same([...tabled].filter((r) => !registered.includes(r)), [], 'every tabled route exists')
})
