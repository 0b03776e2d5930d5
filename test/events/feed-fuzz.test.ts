import t from 'tap'
import fc from 'fast-check'
import { EVENT_TYPES } from '../../src/events/event-types.js'
import { EventFeedText } from '../../src/events/texts.js'
import { pruneEvents } from '../../src/events/prune-events.js'
import { EVENTS_QUERY, eventMarket } from '../helpers/events.js'
import { fuzzRuns, fuzzSeed, hostileString, listen, responseProblem, send } from '../helpers/fuzz.js'

/*
 * The feed's input (GraphQL `events(input: {after, limit, types})`) fuzzed over real HTTP from a fixed seed,
 * as graphql/requests-fuzz.test.ts fuzzes orders': values of every JSON type and hostile text, in variables and in
 * the document, against a known log whose oldest events were removed by retention. Each answer is checked
 * against the rules restated here, independently of the service's code: a value GraphQL cannot coerce is
 * a 400 BAD_USER_INPUT; a value against the feed's rules is BAD_USER_INPUT naming its field, with its text;
 * anything else is exactly the page the rules select from the log (every sequence, type and cursor).
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]!
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const MAX = 9223372036854775807n
const INT32 = 2 ** 31

/** The log's events as the test knows them, and the oldest kept (retention removed 1 … oldest - 1). */
interface Log { events: Array<{ sequence: number, type: string }>, oldest: number }

type Expected =
  | { kind: 'coercion' }
  | { kind: 'refused', field: 'after' | 'limit' | 'types', message: string }
  | { kind: 'page', sequences: number[], hasNext: boolean, endCursor: string, limit: number }

/** What the rules say of one input (as sent in variables). */
function expected (input: unknown, log: Log): Expected {
  if (input !== undefined && input !== null) {
    if (typeof input !== 'object' || Array.isArray(input)) return { kind: 'coercion' }
    const fields = input as Record<string, unknown>
    if (Object.keys(fields).some((k) => !['after', 'limit', 'types'].includes(k))) return { kind: 'coercion' }
    const { after, limit, types } = fields
    if (after !== undefined && after !== null && typeof after !== 'string') return { kind: 'coercion' }
    if (limit !== undefined && limit !== null && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= -INT32 && limit < INT32)) return { kind: 'coercion' }
    if (types !== undefined && types !== null && typeof types !== 'string' &&
      !(Array.isArray(types) && types.every((x) => typeof x === 'string'))) return { kind: 'coercion' }
  }
  const fields = (input ?? {}) as { after?: string | null, limit?: number | null, types?: string | string[] | null }
  const after = fields.after ?? '0'
  // A sequence: digits, no sign or leading zero, a PostgreSQL bigint.
  if (!/^(0|[1-9][0-9]*)$/.test(after) || after.length > 19 || BigInt(after) > MAX) {
    return { kind: 'refused', field: 'after', message: EventFeedText.after(after) }
  }
  const limit = fields.limit ?? 20
  if (limit < 1) return { kind: 'refused', field: 'limit', message: `limit must be at least 1, got ${limit}` }
  // GraphQL makes a single value of a list type a list of one.
  const given = fields.types
  const types = given === undefined || given === null ? null : Array.isArray(given) ? given : [given]
  if (types !== null && types.length === 0) return { kind: 'refused', field: 'types', message: EventFeedText.typesEmpty }
  const unknown = types?.find((x) => !(EVENT_TYPES as readonly string[]).includes(x))
  if (unknown !== undefined) return { kind: 'refused', field: 'types', message: EventFeedText.unknownType(unknown) }
  if (BigInt(after) > 0n && BigInt(after) < BigInt(log.oldest - 1)) {
    return { kind: 'refused', field: 'after', message: EventFeedText.expired(after, String(log.oldest)) }
  }
  const matching = log.events
    .filter((e) => BigInt(e.sequence) > BigInt(after) && (types === null || types.includes(e.type)))
  const size = Math.min(limit, 100)
  const page = matching.slice(0, size).map((e) => e.sequence)
  return { kind: 'page', sequences: page, hasNext: matching.length > size, endCursor: page.length > 0 ? String(page.at(-1)) : after, limit: size }
}

function afterValue (g: G): unknown {
  if (coin(g, 55)) {
    return pick(g, ['0', '1', '8', '9', '10', '11', '12', '30', '62', '63', '64', '1000', '9223372036854775807',
      '9223372036854775808', '99999999999999999999', '00', '007', '-1', '+1', ' 1', '1 ', '1e3', '0x10', '１２', '', '1.0', '1_000'])
  }
  return g(() => fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
    fc.jsonValue({ maxDepth: 1 }),
    fc.bigInt({ min: 0n, max: MAX * 2n }).map(String)))
}

function limitValue (g: G): unknown {
  if (coin(g, 70)) {
    return pick(g, [1, 2, 3, 7, 20, 50, 99, 100, 101, 150, 0, -1, -5, 2147483647, 2147483648, -2147483649, null])
  }
  return g(() => fc.oneof(fc.integer({ min: -10, max: 300 }), fc.double(), hostileString, fc.boolean(), fc.constant('10'), fc.jsonValue({ maxDepth: 1 })))
}

function typesValue (g: G): unknown {
  const known = () => pick(g, EVENT_TYPES)
  const odd = () => g(() => fc.oneof(fc.constantFrom('order.lost', 'ORDER.PLACED', 'order.placed ', 'order', '*', ''), hostileString))
  switch (g(fc.nat, 7)) {
    case 0: return []
    case 1: return known()
    case 2: return Array.from({ length: g(fc.integer, { min: 1, max: 4 }) }, known)
    case 3: return [...Array.from({ length: g(fc.nat, 3) }, known), odd(), known()]
    case 4: return [known(), null]
    case 5: return g(() => fc.oneof(fc.integer(), fc.boolean(), fc.jsonValue({ maxDepth: 2 })))
    default: return Array.from({ length: g(fc.integer, { min: 1, max: 3 }) }, known)
  }
}

function inputValue (g: G): unknown {
  if (coin(g, 4)) return g(() => fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 2 }), hostileString))
  const input: Record<string, unknown> = {}
  if (coin(g, 75)) input.after = afterValue(g)
  if (coin(g, 60)) input.limit = limitValue(g)
  if (coin(g, 40)) input.types = typesValue(g)
  if (coin(g, 3)) input[pick(g, ['page', 'before', '__proto__', 'Limit'])] = 1
  return input
}

t.test('fuzzed feed inputs: every answer is what the rules say, never a 5xx', async (t) => {
  const m = await eventMarket(t)
  // A log of seller 1: 30 placements, then changes; its first 10 events past retention.
  await m.place(Array.from({ length: 30 }, (_, i) => ({ orderId: 1001 + i, seller: 1 })))
  await m.sellerUpdate(1, Array.from({ length: 15 }, (_, i) => ({ Order_id: 1001 + i, Order_Status: 'ORDER_ACCEPTED' })))
  await m.sellerUpdate(1, Array.from({ length: 5 }, (_, i) => ({ Order_id: 1016 + i, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'x' })))
  await m.sellerUpdate(1, Array.from({ length: 5 }, (_, i) => ({ Order_id: 1001 + i, Order_Status: 'ORDER_COMPLETED_BY_SELLER' })))
  await m.platformUpdate(Array.from({ length: 8 }, (_, i) => ({ Order_id: 1006 + i, Order_Status: i < 6 ? 'CANCELLED' : 'DELIVERED' })))
  await m.place([{ orderId: 2001, seller: 2 }])
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days' where seller_id = 1 and sequence <= 10`
  await pruneEvents(m.database.db, 30)
  const rows = await m.database.sql`select sequence::int, type::text from seller_events where seller_id = 1 order by seller_events.sequence`
  const log: Log = { events: rows.map((r) => ({ sequence: r.sequence, type: r.type })), oldest: 11 }
  t.equal(log.events.length, 63 - 10)
  t.equal(log.events[0]!.sequence, 11)
  const token = await m.token(1)
  const base = await listen(m.app)
  const seen = new Map<string, number>()
  const small = 'query E($input: EventListInput) { events(input: $input) { pageInfo { endCursor hasNext limit } nodes { sequence type } } }'

  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const input = inputValue(g)
    // The full document (the pass-through) or a small one (the standard execution); input in variables, or
    // now and then absent altogether.
    const query = coin(g, 50) ? EVENTS_QUERY : small
    const absent = coin(g, 3)
    const body = JSON.stringify(absent ? { query } : { query, variables: { input } })
    const res = await send(base, { method: 'POST', path: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body })
    const problem = responseProblem(res)
    if (problem) throw new Error(`${problem}\n${body.slice(0, 300)}`)
    const want = expected(absent ? undefined : JSON.parse(JSON.stringify({ input })).input, log)
    const fail = (why: string) => { throw new Error(`${why}\ninput ${JSON.stringify(input)?.slice(0, 300)}\nexpected ${JSON.stringify(want)}\ngot ${res.status} ${res.text.slice(0, 400)}`) }
    type GraphqlError = { message: string, extensions: { code: string, field?: string } }
    const errors = res.json?.errors as GraphqlError[] | undefined
    seen.set(want.kind === 'refused' ? `refused ${want.field}` : want.kind, (seen.get(want.kind === 'refused' ? `refused ${want.field}` : want.kind) ?? 0) + 1)
    if (want.kind === 'coercion') {
      if (res.status !== 400 || errors?.[0]?.extensions.code !== 'BAD_USER_INPUT') fail('a value GraphQL cannot coerce: 400 BAD_USER_INPUT')
      return
    }
    if (want.kind === 'refused') {
      if (res.status !== 200 || res.json.data?.events !== null) fail('refused: 200 with data.events null')
      const error = errors?.[0]
      if (errors?.length !== 1 || error?.extensions.code !== 'BAD_USER_INPUT' || error.extensions.field !== want.field || error.message !== want.message) fail('the refusal')
      return
    }
    if (res.status !== 200 || errors !== undefined) fail('a page')
    const page = res.json.data.events
    const sequences = page.nodes.map((n: { sequence: string }) => Number(n.sequence))
    if (JSON.stringify(sequences) !== JSON.stringify(want.sequences)) fail('the page\'s events')
    if (page.pageInfo.hasNext !== want.hasNext || page.pageInfo.endCursor !== want.endCursor || page.pageInfo.limit !== want.limit) fail('pageInfo')
    if (query === EVENTS_QUERY && page.nodes.some((n: { order: { companyId: number } }) => n.order.companyId !== 1)) fail('another seller\'s event')
  }), { seed: fuzzSeed(2424), numRuns: fuzzRuns(2500), endOnFailure: true })
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`)
  for (const kind of ['coercion', 'page', 'refused after', 'refused limit', 'refused types']) t.ok((seen.get(kind) ?? 0) > 20, `the fuzz reached ${kind}`)
  const live = await send(base, { method: 'GET', path: '/health/live', headers: {} })
  t.equal(live.status, 200)
})

t.test('fuzzed literal inputs in the document: a client error or a page, never a 5xx', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1 }, { orderId: 1002, seller: 1 }])
  const token = await m.token(1)
  const base = await listen(m.app)
  const codes = new Map<string, number>()
  const literal = (value: unknown): string => value === undefined
    ? ''
    : typeof value === 'string'
      ? JSON.stringify(value)
      : Array.isArray(value) ? `[${value.map(literal).join(', ')}]` : value === null ? 'null' : typeof value === 'object' ? `{${Object.entries(value as object).map(([k, v]) => `${/^[_A-Za-z]\w*$/.test(k) ? k : 'bad'}: ${literal(v)}`).join(' ')}}` : String(value)
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const input = inputValue(g)
    const query = `{ events${coin(g, 10) ? '' : `(input: ${literal(input) || '{}'})`} { pageInfo { endCursor } nodes { sequence } } }`
    const res = await send(base, { method: 'POST', path: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
    const problem = responseProblem(res)
    if (problem) throw new Error(`${problem}\n${query.slice(0, 300)}`)
    const code = res.json?.errors?.[0]?.extensions?.code ?? 'data'
    if (!['data', 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_PARSE_FAILED'].includes(code)) throw new Error(`${code}: ${res.text.slice(0, 300)}`)
    if (code === 'data' && res.status !== 200) throw new Error(`data with ${res.status}`)
    codes.set(code, (codes.get(code) ?? 0) + 1)
  }), { seed: fuzzSeed(2425), numRuns: fuzzRuns(1000), endOnFailure: true })
  t.comment(`answers: ${JSON.stringify(Object.fromEntries(codes))}`)
  t.ok((codes.get('data') ?? 0) > 50 && (codes.get('BAD_USER_INPUT') ?? 0) > 50 && (codes.get('GRAPHQL_VALIDATION_FAILED') ?? 0) > 50)
})
