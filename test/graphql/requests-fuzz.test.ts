import fs from 'node:fs'
import t from 'tap'
import fc from 'fast-check'
import {
  buildSchema, getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType,
  type GraphQLArgument, type GraphQLInputType, type GraphQLObjectType
} from 'graphql'
import { build } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import {
  assertDeepBodies, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns, fuzzSeed,
  hostileString, listen, responseProblem, send, type FuzzRequest
} from '../helpers/fuzz.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'

/*
 * Thousands of hostile requests to /v2/graphql, over real HTTP, from a fixed seed: documents generated
 * from the schema (random fields, aliases, arguments of every type, fragments that spread each other,
 * directives, variables of wrong types), corrupted and random texts, JSON-encoded ASTs, deep and wide
 * documents, fragment bombs, huge strings, and bodies and headers of every wrong shape. Every answer
 * must be a client error or data, never a 5xx, never slow, never an internal leaking out; the process
 * must stay live and log no error.
 */

const schema = buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8'))
const query = schema.getQueryType()!

/** Codes a GraphQL client may see from this endpoint without a database outage. */
const CLIENT_CODES = new Set(['BAD_USER_INPUT', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_DEEP',
  'QUERY_TOO_COMPLEX', 'BAD_REQUEST', 'INVALID_JSON', 'JSON_TOO_DEEP', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'METHOD_NOT_ALLOWED', 'UNAUTHENTICATED', 'NOT_FOUND'])

type G = fc.GeneratorValue

const NAMES = ['a', 'b', 'x1', '_', 'orders', 'nodes', 'orderId', 'F0', 'F1', 'Q', 'input', '__typename', 'pageInfo', 'seller', 'total',
  'retailers', 'items', 'unmapped', 'shops', 'skus', 'events', 'after', 'types']
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

function literal (g: G, type: GraphQLInputType | null, depth: number, variables: string[]): string {
  if (variables.length > 0 && coin(g, 10)) return `$${pick(g, variables)}`
  const named = type ? getNamedType(type) : null
  if (depth > 3 || coin(g, 15)) {
    return pick(g, ['null', '1', '-1', '0', '2147483648', '99999999999999999999', '1.5', '-0.0', '1e400', 'true', 'false', 'ORDER_PLACED', '""', '"x"', '[]', '{}'])
  }
  if (type && isListType(isNonNullType(type) ? type.ofType : type) && coin(g, 70)) {
    const inner = (isNonNullType(type) ? type.ofType : type) as { ofType: GraphQLInputType }
    return `[${Array.from({ length: g(fc.nat, 3) }, () => literal(g, inner.ofType, depth + 1, variables)).join(', ')}]`
  }
  if (named && isInputObjectType(named) && coin(g, 80)) {
    const fields = Object.values(named.getFields())
    const chosen = Array.from(
      { length: g(fc.nat, fields.length + 1) }, () => coin(g, 90) ? pick(g, fields).name : pick(g, NAMES)
    )
    return `{ ${chosen.map((f) => `${f}: ${literal(g, named.getFields()[f]?.type ?? null, depth + 1, variables)}`).join(' ')} }`
  }
  if (named && isScalarType(named) && named.name === 'String' && coin(g, 80)) {
    const text = coin(g, 30) ? pick(g, ['2026-10-15', '2026-02-29', '2026-11-01T10:00:00Z', '0000-01-01', 'RET-1-00001', 'VAR-1-001']) : g(() => hostileString)
    return coin(g, 10) ? `"""${text.replace(/"""/g, '')}"""` : JSON.stringify(text)
  }
  if (named && isScalarType(named) && named.name === 'Int') return String(g(fc.integer, { min: -5, max: 200 }))
  if (named && isEnumType(named)) return pick(g, named.getValues()).name
  return pick(g, ['1', '"1"', 'true', 'null', '[1]', '{a: 1}', 'RED'])
}

function argumentsText (g: G, args: readonly GraphQLArgument[], variables: string[]): string {
  if (args.length === 0) return coin(g, 5) ? `(bogus: ${literal(g, null, 0, variables)})` : ''
  if (coin(g, 20)) return ''
  return `(${args.map((a) => `${a.name}: ${literal(g, a.type, 0, variables)}`).join(', ')})`
}

function directives (g: G, variables: string[]): string {
  if (!coin(g, 15)) return ''
  const name = pick(g, ['skip', 'include', 'skip', 'include', 'deprecated', 'unknown'])
  const value = variables.length > 0 && coin(g, 40) ? `$${pick(g, variables)}` : pick(g, ['true', 'false', '1', 'null'])
  return ` @${name}(if: ${value})`
}

interface DocContext {
  /** Valid documents only (the fields, arguments and fragments of the schema): they reach the resolvers. */
  clean: boolean
  /** Fragment name → its type condition. */
  fragments: Map<string, string>
  variables: string[]
  used: Set<string>
  maxDepth: number
}

function directiveClean (g: G, ctx: DocContext): string {
  if (!coin(g, 15)) return ''
  const useVariable = ctx.variables.includes('b') && coin(g, 50)
  if (useVariable) ctx.used.add('b')
  return ` @${pick(g, ['skip', 'include'])}(if: ${useVariable ? '$b' : pick(g, ['true', 'false'])})`
}

function ordersInput (g: G, ctx: DocContext): string {
  if (ctx.variables.includes('input') && coin(g, 60)) { ctx.used.add('input'); return '(input: $input)' }
  if (coin(g, 20)) return ''
  const fields: string[] = []
  if (coin(g, 50)) fields.push(`page: ${g(fc.integer, { min: -1, max: 4 })}`)
  if (coin(g, 60)) fields.push(`limit: ${pick(g, [1, 2, 5, 20, 100, 150, 0])}`)
  if (coin(g, 25)) fields.push(`fromDate: ${JSON.stringify(pick(g, ['2026-08-01', '2026-10-15', '2026-02-30', 'x']))}`)
  if (coin(g, 25)) fields.push(`toDate: ${JSON.stringify(pick(g, ['2026-10-15', '2026-12-31']))}`)
  if (coin(g, 10)) fields.push(`updatedSince: ${JSON.stringify(pick(g, ['2026-01-01T00:00:00Z', '2026-11-01T10:00:00.123456+05:30', 'soon']))}`)
  return `(input: { ${fields.join(' ')} })`
}

/** The input of the reference lists (retailers, items): paging as orders, and unmapped of every kind. */
function referencesInput (g: G): string {
  if (coin(g, 20)) return ''
  const fields: string[] = []
  if (coin(g, 50)) fields.push(`page: ${g(fc.integer, { min: -1, max: 4 })}`)
  if (coin(g, 60)) fields.push(`limit: ${pick(g, [1, 2, 5, 20, 100, 150, 0, -7])}`)
  if (coin(g, 60)) fields.push(`unmapped: ${pick(g, ['true', 'false', 'null'])}`)
  return `(input: { ${fields.join(' ')} })`
}

/** The input of the event feed: cursors good, stale, malformed; limits; type names known and not. */
function eventsInput (g: G): string {
  if (coin(g, 20)) return ''
  const fields: string[] = []
  if (coin(g, 60)) fields.push(`after: ${JSON.stringify(pick(g, ['0', '1', '2', '99', '007', '-1', 'x', '9223372036854775808']))}`)
  if (coin(g, 50)) fields.push(`limit: ${pick(g, [1, 2, 20, 100, 150, 0, -3])}`)
  if (coin(g, 40)) fields.push(`types: ${pick(g, ['["order.placed"]', '["order.accepted", "order.rejected"]', '[]', '["order.lost"]', '"order.cancelled"'])}`)
  return `(input: { ${fields.join(' ')} })`
}

function cleanArguments (g: G, name: string, ctx: DocContext): string {
  if (name === 'orders') return ordersInput(g, ctx)
  if (name === 'events') return eventsInput(g)
  if (name === 'retailers' || name === 'items') return referencesInput(g)
  return name === 'outstandingShipments' && coin(g, 50) ? `(input: { limit: ${g(fc.integer, { min: 1, max: 120 })} })` : ''
}

function selection (g: G, type: GraphQLObjectType, depth: number, ctx: DocContext): string {
  const fields = Object.values(type.getFields())
  const parts: string[] = []
  const count = g(fc.integer, { min: 1, max: 5 })
  const dir = (): string => ctx.clean ? directiveClean(g, ctx) : directives(g, ctx.variables)
  for (let i = 0; i < count; i++) {
    const kind = g(fc.nat, 19)
    const spreadable = [...ctx.fragments].filter(([, on]) => !ctx.clean || on === type.name).map(([name]) => name)
    if (kind === 0 && spreadable.length > 0) { parts.push(`...${pick(g, spreadable)}${dir()}`); continue }
    if (kind === 1 && depth < ctx.maxDepth) { parts.push(`... ${coin(g, 70) ? `on ${type.name} ` : ''}${dir()}{ ${selection(g, type, depth + 1, ctx)} }`); continue }
    if (kind === 2) {
      parts.push(ctx.clean ? '__typename' : pick(g, ['__typename', 'nope', '__schema { queryType { name } }', '__type(name: "Order") { name fields { name } }']))
      continue
    }
    const field = pick(g, fields)
    const alias = coin(g, 20) ? `${pick(g, ['a', 'b', 'x1', '_', 'copy', field.name])}: ` : ''
    const named = getNamedType(field.type)
    let sub = ''
    if (isObjectType(named)) {
      if (ctx.clean || (depth < ctx.maxDepth && !coin(g, 5))) sub = ` { ${depth < ctx.maxDepth ? selection(g, named, depth + 1, ctx) : '__typename'} }`
    } else if (!ctx.clean && coin(g, 3)) {
      sub = ' { x }'
    }
    const args = ctx.clean
      ? cleanArguments(g, field.name, ctx)
      : argumentsText(g, field.args, ctx.variables)
    // In a valid document one response name holds one field: aliases keep repeats apart.
    parts.push(`${ctx.clean && alias === '' && i > 0 ? `f${i}_${depth}: ` : alias}${field.name}${args}${dir()}${sub}`)
  }
  return parts.join(' ')
}

const VARIABLE_TYPES = ['OrderListInput', 'OrderListInput!', 'OutstandingShipmentListInput', 'RetailerListInput', 'ItemListInput', 'Int', 'String', 'Boolean!', 'Boolean', '[Int]', 'Unknown']

function variableValues (g: G, variables: string[]): Record<string, unknown> {
  return Object.fromEntries(variables.map((v) => [v, v === 'b' && coin(g, 80)
    ? coin(g, 50)
    : g(() => fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.record({
        page: fc.oneof(fc.integer({ min: -3, max: 5 }), fc.jsonValue()),
        limit: fc.oneof(fc.integer({ min: -3, max: 500 }), fc.jsonValue()),
        fromDate: fc.oneof(hostileString, fc.constant('2026-10-15')),
        toDate: fc.oneof(hostileString, fc.constant('2026-10-16')),
        updatedSince: hostileString
      }, { requiredKeys: [] }),
      fc.record({ page: fc.integer({ min: 1, max: 4 }), limit: fc.integer({ min: 1, max: 100 }) }, { requiredKeys: [] })
    ))]))
}

/** A valid document over the schema, with random fields, aliases, fragments, directives and inputs. */
function cleanDocument (g: G): { query: string, variables?: unknown, operationName?: unknown } {
  const ctx: DocContext = { clean: true, fragments: new Map(), variables: ['input', 'b'].filter(() => coin(g, 50)), used: new Set(), maxDepth: g(fc.integer, { min: 1, max: 7 }) }
  const fragmentTypes = Array.from({ length: g(fc.nat, 3) }, () => pick(g, ['Query', 'Order', 'OrderConnection', 'Retailer', 'Sku']))
  const fragments: string[] = []
  // Each fragment may spread the ones made before it: no cycles.
  fragmentTypes.forEach((on, i) => {
    fragments.push(`fragment F${i} on ${on} { ${selection(g, schema.getType(on) as GraphQLObjectType, 2, ctx)} }`)
    ctx.fragments.set(`F${i}`, on)
  })
  const body = selection(g, query, 1, ctx)
  const text = [body, ...fragments].join('\n')
  const spread = new Set([...text.matchAll(/\.\.\.(F\d+)/g)].map((m) => m[1]))
  const used = fragments.filter((_, i) => spread.has(`F${i}`))
  const declared = [...ctx.used].map((v) => v === 'input' ? '$input: OrderListInput' : '$b: Boolean!')
  const operation = `query Q${declared.length > 0 ? `(${declared.join(', ')})` : ''} { ${body} }`
  return { query: [operation, ...used].join('\n'), variables: variableValues(g, [...ctx.used]), operationName: coin(g, 50) ? 'Q' : undefined }
}

/** A document built from the schema, mostly valid, with the mistakes clients make and attackers try. */
function generatedDocument (g: G): { query: string, variables?: unknown, operationName?: unknown } {
  if (coin(g, 50)) return cleanDocument(g)
  const variableCount = g(fc.nat, 3)
  const variables = Array.from({ length: variableCount }, (_, i) => pick(g, ['input', 'v', 'b', 'input2']) + (i > 0 ? i : ''))
  const declared = variables.map((v) => `$${v}: ${pick(g, VARIABLE_TYPES)}${coin(g, 10) ? ` = ${literal(g, null, 0, [])}` : ''}`)
  const fragmentCount = g(fc.nat, 3)
  const ctx: DocContext = {
    clean: false, fragments: new Map(), variables, used: new Set(), maxDepth: g(fc.integer, { min: 1, max: 9 })
  }
  for (let i = 0; i < fragmentCount; i++) ctx.fragments.set(`F${i}`, '')
  const types = [query, schema.getType('Order'), schema.getType('OrderConnection'), schema.getType('Sku')] as GraphQLObjectType[]
  const fragments = [...ctx.fragments.keys()].map((name) => {
    const type = pick(g, types)
    return `fragment ${name} on ${type.name} { ${selection(g, type, 1, ctx)} }`
  })
  const operationName = coin(g, 50) ? 'Q' : null
  const operation = `${coin(g, 30) && !operationName && variables.length === 0 ? '' : `query ${operationName ?? ''}${declared.length > 0 ? `(${declared.join(', ')})` : ''} `}{ ${selection(g, query, 1, ctx)} }`
  let text = [operation, ...fragments, ...(coin(g, 5) ? ['query Other { __typename }'] : [])].join('\n')
  if (coin(g, 10)) {
    // Corrupt it: a character in, a slice out, or cut short.
    const at = g(fc.nat, text.length)
    const how = g(fc.nat, 2)
    text = how === 0
      ? text.slice(0, at) + pick(g, ['{', '}', '"', '(', '$', '@', '\u0000', '#', '...', '\\']) + text.slice(at)
      : how === 1 ? text.slice(0, at) + text.slice(at + g(fc.nat, 20)) : text.slice(0, at)
  }
  const operationNameSent = coin(g, 85) ? operationName ?? undefined : g(() => fc.oneof(fc.constant('Nope'), fc.constant(null), fc.constant(''), fc.jsonValue()))
  return {
    query: text,
    variables: coin(g, 90) ? variableValues(g, variables) : g(() => fc.jsonValue()),
    operationName: operationNameSent
  }
}

/** A JSON-encoded AST (what Mercurius used to accept as a query), hostile names and all. */
function astText (g: G): string {
  const name = (): object => ({ kind: 'Name', value: g(() => hostileString) })
  const field = (): object => ({ kind: 'Field', alias: coin(g, 50) ? name() : undefined, name: coin(g, 50) ? { kind: 'Name', value: '__typename' } : name() })
  const doc = {
    kind: pick(g, ['Document', 'Document', 'Field', 'x']),
    definitions: coin(g, 80)
      ? [{ kind: 'OperationDefinition', operation: 'query', selectionSet: { kind: 'SelectionSet', selections: Array.from({ length: g(fc.nat, 3) }, field) } }]
      : g(() => fc.jsonValue())
  }
  return JSON.stringify(doc)
}

/** fragment F0 { ...F1 ×b } … : b^levels paths through few fragments. */
function fragmentBomb (g: G): string {
  const levels = g(fc.integer, { min: 5, max: 80 })
  const branching = g(fc.integer, { min: 2, max: 4 })
  const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(branching)}}`)
  fragments.push(`fragment F${levels} on Query { ${pick(g, ['__typename', 'seller { name }', 'orders { pageInfo { total } }'])} }`)
  return `{ ...F0 }\n${fragments.join('\n')}`
}

function graphqlBody (g: G): { body: string, contentType: string } {
  const kind = g(fc.nat, 99)
  const json = (value: unknown): { body: string, contentType: string } => ({ body: JSON.stringify(value), contentType: 'application/json' })
  if (kind < 55) return json(generatedDocument(g))
  if (kind < 60) return json({ query: g(() => hostileString) })
  if (kind < 65) return json({ query: astText(g) })
  if (kind < 69) {
    const depth = g(fc.integer, { min: 10, max: 20_000 })
    const open = pick(g, ['{ a ', '{ orders { nodes ', '[', '{ x: '])
    return json({ query: `${open.repeat(depth)}${'}'.repeat(depth)}` })
  }
  if (kind < 73) return json({ query: fragmentBomb(g) })
  if (kind < 77) {
    const n = g(fc.integer, { min: 100, max: 7000 })
    return json({ query: `{ ${pick(g, ['__typename ', 'a: __typename ', 'seller { name } ', 'orders { pageInfo { total } } '] as const).repeat(n)}}` })
  }
  if (kind < 81) {
    const big = 'y'.repeat(g(fc.integer, { min: 10_000, max: 400_000 }))
    return coin(g, 50)
      ? json({ query: `{ orders(input: {fromDate: ${JSON.stringify(big)}}) { pageInfo { total } } }` })
      : json({ query: 'query Q($input: OrderListInput) { orders(input: $input) { pageInfo { total } } }', variables: { input: { fromDate: big, updatedSince: big } } })
  }
  if (kind < 86) {
    // The body itself of the wrong shape.
    return json(g(() => fc.oneof(
      fc.jsonValue(),
      fc.record({
        query: fc.jsonValue(),
        variables: fc.jsonValue(),
        extensions: fc.jsonValue(),
        operationName: fc.jsonValue()
      }, { requiredKeys: [] }),
      fc.record({ query: fc.constant('{ seller { name } }'), extensions: fc.constantFrom(null, [], 'x', {}), variables: fc.constantFrom(null, [], 'x', 1) })
    )))
  }
  if (kind < 90) {
    const text = JSON.stringify(generatedDocument(g))
    return { body: text.slice(0, g(fc.nat, text.length)), contentType: 'application/json' }
  }
  if (kind < 95) {
    return { body: coin(g, 50) ? generatedDocument(g).query : JSON.stringify(generatedDocument(g)), contentType: pick(g, ['application/graphql', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8', 'multipart/form-data', 'application/graphql-response+json']) }
  }
  return { body: `${'['.repeat(g(fc.integer, { min: 1, max: 100_000 }))}`, contentType: 'application/json' }
}

function graphqlRequest (g: G, token: string): FuzzRequest {
  const auth: Record<string, string> = coin(g, 97) ? { authorization: `Bearer ${token}` } : coin(g, 50) ? {} : { authorization: `Bearer ${g(() => hostileString).replace(/[^\x20-\x7e]/g, '')}` }
  if (coin(g, 8)) {
    const doc = generatedDocument(g)
    const params = new URLSearchParams({ query: doc.query })
    // eslint-disable-next-line no-control-regex -- a query string cannot carry NUL
    if (coin(g, 50)) params.set('variables', coin(g, 70) ? JSON.stringify(doc.variables) : g(() => hostileString).replace(/\u0000/g, ''))
    if (coin(g, 20)) params.set('extensions', pick(g, ['null', '{}', '[]', 'x', '{"a":1}']))
    return { method: 'GET', path: `/v2/graphql?${params}`, headers: auth }
  }
  const { body, contentType } = graphqlBody(g)
  return { method: coin(g, 98) ? 'POST' : pick(g, ['PUT', 'DELETE', 'PATCH'] as const), path: '/v2/graphql', headers: { ...auth, 'content-type': contentType }, body }
}

t.test('fuzzed GraphQL requests: never a 5xx, never slow, never an internal; the process stays live', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  await seedDemo(database, 60)
  // Outstanding shipments to read, with quantities at and beyond a Float's bounds: the sync refuses those a
  // Float cannot show now, but rows stored before it did are still in the table (float8 failed on them: 500).
  const quantities = ['12.5', '0', '5e-324', '1.7976931348623157e308', `0.${'0'.repeat(97)}1`, '0.1000000000000000000001',
    '1e-400', `0.${'0'.repeat(400)}1`, '1e-16000', `${'9'.repeat(400)}`, '123456789012345678901234567890.123']
  for (const [i, quantity] of quantities.entries()) {
    await database.sql`insert into outstanding_shipments (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity)
      values (1, ${`RET-1-0000${i % 3}`}, ${i % 2 === 0 ? null : 'SHOP-1-00001'}, ${`VAR-1-${String(i).padStart(3, '0')}`}, ${quantity}::numeric)`
  }
  const token = await credential(database, 1, 'access-token')
  const base = await listen(app)
  const seen = new Map<string, number>()
  let runs = 0
  let slowest = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const request = graphqlRequest(g, token)
    const res = await send(base, request)
    runs++
    slowest = Math.max(slowest, res.ms)
    const problem = responseProblem(res)
    if (problem) throw new Error(`${problem}\nrequest: ${request.method} ${request.path.slice(0, 200)} ${(request.body ?? '').slice(0, 500)}`)
    // Node's HTTP parser answers a request line and headers over 16 KB itself (431), before any route.
    if (res.status === 431) { seen.set('431', (seen.get('431') ?? 0) + 1); return }
    if (!request.path.startsWith('/v2/graphql') || !['POST', 'GET'].includes(request.method)) return
    const body = res.json as { data?: unknown, errors?: Array<{ message?: unknown, extensions?: { code?: unknown } }> }
    if (typeof body !== 'object' || body === null || !('data' in body || 'errors' in body)) throw new Error(`not a GraphQL response: ${res.text.slice(0, 200)}`)
    for (const error of body.errors ?? []) {
      const code = String(error.extensions?.code)
      if (typeof error.message !== 'string' || !CLIENT_CODES.has(code)) throw new Error(`unexpected error ${JSON.stringify(error).slice(0, 300)}`)
      seen.set(code, (seen.get(code) ?? 0) + 1)
    }
    if (body.data) seen.set(`${res.status} data`, (seen.get(`${res.status} data`) ?? 0) + 1)
    if (runs % 250 === 0) {
      const live = await send(base, { method: 'GET', path: '/health/live', headers: {} })
      if (live.status !== 200 || live.ms > 1000) throw new Error(`liveness: ${live.status} in ${live.ms} ms`)
    }
  }), { seed: fuzzSeed(9001), numRuns: fuzzRuns(3000), endOnFailure: true })
  t.comment(`${runs} requests, slowest ${Math.round(slowest)} ms; answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`)
  t.ok((seen.get('200 data') ?? 0) > runs / 10, 'a good share of the documents ran and returned data')
  for (const code of ['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'QUERY_TOO_DEEP', 'QUERY_TOO_COMPLEX', 'BAD_USER_INPUT', 'BAD_REQUEST',
    'JSON_TOO_DEEP']) {
    t.ok((seen.get(code) ?? 0) > 0, `the fuzz reached ${code}`)
  }
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged: nothing failed inside')
  t.notMatch(logs(), /INJECTED-42/, 'no injected code ran')
})

t.test('deep GraphQL bodies and variables, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  await seedDemo(database, 10)
  const headers = { authorization: `Bearer ${await credential(database, 1, 'access-token')}` }
  const base = await listen(app)
  const query = encodeURIComponent('query ($x: [[Int]]) { __typename }')
  const seen = await assertDeepBodies(base, [
    { method: 'POST', path: '/v2/graphql', headers, graphql: true, template: `{"query":"{ __typename }","variables":{"x":${DEEP_SLOT}}}` },
    { method: 'POST', path: '/v2/graphql', headers, graphql: true, template: `{"query":"{ __typename }","extensions":{"e":${DEEP_SLOT}}}` },
    { method: 'POST', path: '/v2/graphql', headers, graphql: true, template: `{"query":${DEEP_SLOT}}` },
    // The query string is bounded by the header limit (16 KiB): 400 levels of objects, URL-encoded, fit in it.
    { method: 'GET', path: '/v2/graphql', headers, graphql: true, query: true, maxDepth: 400, template: `query=${query}&variables=${DEEP_SLOT}` }
  ], fuzzSeed(6404))
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})
