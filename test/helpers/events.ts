// The event market: a marketplace on a real app, its three ways of changing orders, the feed, the log's invariants.
import type { Test } from 'tap'
import type postgres from 'postgres'
import type { FastifyInstance } from 'fastify'
import { print } from 'graphql'
import { build, type TestContext } from './build.js'
import { credential, platformKey } from './fixtures.js'
import { LINKS, PLACED_AT, SHOPS, offersOf, setupMarket, storesOf, type Caller } from './platform-market.js'
import { EventsDocument, OrdersDocument } from '../../src/graphql/generated/operations.js'
import { PLATFORM_ORDER_STATUS_PATH, PLATFORM_ORDERS_PATH, STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'
import { EVENT_STATUS } from '../../src/effects/jobs.js'
import { placementRow } from '../../src/platform/placement-row.js'

/*
 * A marketplace (platform-market.ts: sellers 1 to 4, their stores, retailers, catalogue and deals) on a
 * real app, with each seller's credentials, and the three ways orders change over HTTP: the platform's
 * placements and transitions, the seller's status update. The feed is read through POST /v2/graphql.
 */

export const EVENTS_QUERY = print(EventsDocument)
const ORDERS_QUERY = print(OrdersDocument)

export interface FeedEvent {
  id: string
  type: string
  sequence: string
  timestamp: string
  previousStatus: string | null
  reason: string | null
  order: Record<string, any> | null
}

export interface FeedPage { pageInfo: { hasNext: boolean, endCursor: string, limit: number }, nodes: FeedEvent[] }

export interface Followed { events: FeedEvent[], endCursor: string }

export interface FeedReply { status: number, data: FeedPage | null, errors?: any[], raw: string }

export interface EventMarket extends TestContext {
  platform: string
  /** POST/PUT with the platform key. */
  call: Caller
  token: (seller: number, options?: { storeIds?: number[] }) => Promise<string>
  apiKey: (seller: number) => Promise<string>
  /** Places orders (`{orderId, seller, …}` specs), expecting each inserted. */
  place: (orders: OrderSpec[]) => Promise<void>
  /** The seller's status update (its API key); returns the envelope. */
  sellerUpdate: (seller: number, items: unknown[]) => Promise<any>
  /** The platform's transitions; returns the envelope. */
  platformUpdate: (items: unknown[]) => Promise<any>
  /** One page of the feed; errors come back in `errors`. */
  feed: (token: string, input?: Record<string, unknown>, query?: string) => Promise<FeedReply>
  /** Every event after `after`, page by page. */
  follow: (token: string, after?: string, input?: Record<string, unknown>) => Promise<Followed>
}

export interface OrderSpec {
  orderId: number
  seller: number
  paymentMode?: 'ONLINE_PAID' | 'PREPAID' | 'CASH_ON_DELIVERY'
  storeIndex?: number
  lines?: number
}

/** A platform order row of seller `s`: its first linked retailer and that retailer's first shop, offer lines. */
export function orderRow (spec: OrderSpec): Record<string, unknown> {
  const s = spec.seller
  const retailerId = LINKS[s]![0]!
  const shopId = Number(Object.entries(SHOPS).find(([, r]) => r === retailerId)?.[0] ?? 0) || null
  return placementRow({
    orderId: String(spec.orderId),
    serviceOrderNumber: `S-${spec.orderId}`,
    companyId: s,
    storeId: storesOf(s)[spec.storeIndex ?? 0],
    retailerId,
    shopId,
    paymentMode: spec.paymentMode ?? 'CASH_ON_DELIVERY',
    orderTotal: '100.00',
    orderTotalFinal: '100.00',
    orderTaxAmount: 0,
    placedAt: PLACED_AT,
    orderItems: Array.from({ length: spec.lines ?? 1 }, (_, i) => ({
      id: String(spec.orderId * 10 + i), offerId: offersOf(s)[i % 2], quantity: i + 1
    }))
  })
}

async function inject (app: FastifyInstance, method: 'PUT' | 'POST', url: string, key: string, body: unknown) {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
  return { status: res.statusCode, json: res.json() }
}

export async function eventMarket (
  t: Test, env: Record<string, string> = {}, options: { onQuery?: (q: string) => void } = {}
): Promise<EventMarket> {
  const context = await build(t, env, options)
  const { app, database } = context
  const platform = await platformKey(database)
  const call: Caller = (method, path, body) => inject(app, method, path, platform, body)
  await setupMarket(call, database.sql)
  const keys = new Map<number, string>()
  const apiKey = async (seller: number): Promise<string> => {
    if (!keys.has(seller)) keys.set(seller, await credential(database, seller, 'api-key'))
    return keys.get(seller)!
  }
  const feed: EventMarket['feed'] = async (token, input = {}, query = EVENTS_QUERY) => {
    const res = await app.inject({
      method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables: { input } }
    })
    const body = res.json()
    return { status: res.statusCode, data: body.data?.events ?? null, errors: body.errors, raw: res.body }
  }
  return {
    ...context,
    platform,
    call,
    token: (seller, options = {}) => credential(database, seller, 'access-token', options),
    apiKey,
    async place (orders) {
      const res = await call('POST', PLATFORM_ORDERS_PATH, orders.map(orderRow))
      if (res.status !== 200 || res.json.data.inserted !== orders.length) throw new Error(`placement: ${JSON.stringify(res.json).slice(0, 500)}`)
    },
    async sellerUpdate (seller, items) {
      const res = await inject(app, 'POST', STATUS_UPDATE_PATH, await apiKey(seller), { order_status: items })
      return res.json
    },
    async platformUpdate (items) {
      return (await call('POST', PLATFORM_ORDER_STATUS_PATH, { order_status: items })).json
    },
    feed,
    async follow (token, after = '0', input = {}) {
      const events: FeedEvent[] = []
      let cursor = after
      for (;;) {
        const page = await feed(token, { ...input, after: cursor, limit: 100 })
        if (!page.data) throw new Error(`feed: ${JSON.stringify(page.errors)}`)
        events.push(...page.data.nodes)
        cursor = page.data.pageInfo.endCursor
        if (!page.data.pageInfo.hasNext) return { events, endCursor: cursor }
      }
    }
  }
}

/** The seller's orders as the orders read answers its full document, by orderId, each node's JSON text. */
export async function ordersRead (m: EventMarket, token: string): Promise<Map<string, string>> {
  const res = await m.app.inject({
    method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: ORDERS_QUERY, variables: { input: { limit: 100 } } }
  })
  const nodes = res.json().data.orders.nodes as Array<{ orderId: string }>
  return new Map(nodes.map((n) => [n.orderId, JSON.stringify(n)]))
}

/**
 * What must hold of the event log at any moment, whatever ran: every status change (placements included,
 * the seed's history excepted) has exactly one event and every event its change, each seller's sequences are
 * 1 … n with no gap or repeat and its counter is n, and each event has the status its type moved its order to
 * (an event of no order none).
 * Returns what is wrong (empty when all holds), in one round trip.
 */
export async function eventLogProblems (sql: postgres.Sql): Promise<string[]> {
  const statuses = Object.entries(EVENT_STATUS).map(([type, status]) => ({ type, status }))
  const [row] = await sql`with status_of as (
      select * from json_to_recordset(${JSON.stringify(statuses)}::json) as s(type text, status text)
    ), changes as (
      select order_id, from_status::text as from_status, to_status::text as to_status from order_status_history
      where source <> 'seed'
    ), events as (
      select e.order_id, e.previous_status::text as from_status, e.status::text as to_status
      from seller_events e where e.order_id is not null
    ) select
    (select coalesce(json_agg(x), '[]') from (select * from changes except all select * from events) x) as changes_without_event,
    (select coalesce(json_agg(x), '[]') from (select * from events except all select * from changes) x) as events_without_change,
    (select coalesce(json_agg(s.seller_id), '[]') from (
      select seller_id, count(*) as n, count(distinct sequence) as d, min(sequence) as lo, max(sequence) as hi
      from seller_events group by seller_id) s
      left join seller_event_counters c on c.seller_id = s.seller_id
      where s.n <> s.d or s.lo <> 1 or s.hi <> s.n or c.last_sequence is distinct from s.hi) as sequences,
    (select coalesce(json_agg(e.sequence), '[]') from seller_events e join status_of s on s.type = e.type::text
      where e.status::text is distinct from s.status) as event_statuses,
    (select coalesce(json_agg(e.sequence), '[]') from seller_events e
      where (e.order_id is null) <> (e.status is null)) as status_without_order,
    (select coalesce(json_agg(json_build_array(x.seller_id, x.sequence)), '[]') from (
      select seller_id, sequence, occurred_at < lag(occurred_at) over (partition by seller_id order by sequence) as back
      from seller_events) x where x.back) as time_goes_back`
  const problems: string[] = []
  for (const [name, found] of Object.entries(row)) {
    if ((found as unknown[]).length > 0) problems.push(`${name}: ${JSON.stringify(found).slice(0, 500)}`)
  }
  return problems
}
