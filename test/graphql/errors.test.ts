import t from 'tap'
import { GraphQLError, getIntrospectionQuery, print } from 'graphql'
import type { FastifyBaseLogger } from 'fastify'
import { build } from '../helpers/build.js'
import { credential, createSeller, seedDemo } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { OrderIdsDocument, OrdersDocument, SellerDocument } from '../../src/graphql/generated/operations.js'
import { revokeCredential, issueCredential } from '../../src/credentials/service.js'
import { generateSecret } from '../../src/credentials/secret.js'
import { MAX_QUERY_COST } from '../../src/graphql/limits.js'
import { QUERY_DEPTH_LIMIT } from '../../src/graphql/limits.js'
import { formatExecutionErrors } from '../../src/graphql/errors.js'

const UNAUTHORIZED = { data: null, errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] }

t.test('401 with the same body for every missing or bad token', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const good = await credential(database, sellerId, 'access-token')
  const apiKey = await credential(database, sellerId, 'api-key')
  const production = await credential(database, sellerId, 'access-token', { environment: 'production' })
  const revoked = await issueCredential(database.db, { sellerId, kind: 'access-token', environment: 'testing' })
  await revokeCredential(database.db, revoked.id)
  const query = JSON.stringify({ query: print(SellerDocument) })

  const cases: Array<[string, Record<string, string>, string?]> = [
    ['no Authorization header', {}],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: `Basic ${good}` }],
    ['the token without a scheme', { authorization: good }],
    ['malformed token', { authorization: 'Bearer not-a-token' }],
    ['unknown token', { authorization: `Bearer ${generateSecret('access-token', 'testing').secret}` }],
    ['tampered token', { authorization: `Bearer ${good.slice(0, -2)}xx` }],
    ['revoked token', { authorization: `Bearer ${revoked.secret}` }],
    ['an API key (wrong kind)', { authorization: `Bearer ${apiKey}` }],
    ['a production token on the testing deployment', { authorization: `Bearer ${production}` }],
    ['the token in x-api-key', { 'x-api-key': good }],
    ['no token and a body that is not JSON', {}, '{not json']
  ]
  for (const [name, headers, body] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { 'content-type': 'application/json', ...headers }, payload: body ?? query })
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), UNAUTHORIZED, name)
  }
  const get = await app.inject({ method: 'GET', url: `/v2/graphql?query=${encodeURIComponent('{ seller { name } }')}` })
  t.equal(get.statusCode, 401, 'GET is authenticated too')
  t.same(get.json(), UNAUTHORIZED)
  const getOk = await app.inject({ method: 'GET', url: `/v2/graphql?query=${encodeURIComponent('{ seller { name } }')}`, headers: { authorization: `Bearer ${good}` } })
  t.same(getOk.json(), { data: { seller: { name: 'Test Seller' } } })

  const ok = await graphql(app, good, SellerDocument, {})
  t.equal(ok.statusCode, 200, 'the good token works')
  t.equal(ok.body.data!.seller.companyId, sellerId)
})

t.test('a testing token on the production deployment is 401', async (t) => {
  const { app, database } = await build(t, { ORDER_EXCHANGE_ENV: 'production' })
  const { sellerId } = await createSeller(database)
  const testing = await credential(database, sellerId, 'access-token')
  const res = await graphql(app, testing, SellerDocument, {})
  t.equal(res.statusCode, 401)
  t.same(res.body, UNAUTHORIZED)
  const live = await graphql(app, await credential(database, sellerId, 'access-token', { environment: 'production' }), SellerDocument, {})
  t.equal(live.statusCode, 200)
})

t.test('every bad input is BAD_USER_INPUT naming the field', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const token = await credential(database, sellerId, 'access-token')
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ page: 0 }, 'page', /^page must be at least 1, got 0$/],
    [{ page: -3 }, 'page', /^page must be at least 1/],
    [{ limit: 0 }, 'limit', /^limit must be at least 1, got 0$/],
    [{ limit: -1 }, 'limit', /^limit must be at least 1/],
    [{ fromDate: 'yesterday' }, 'fromDate', /^fromDate must be a calendar date in the form YYYY-MM-DD, got "yesterday"$/],
    [{ fromDate: '2026-02-29' }, 'fromDate', /^fromDate must be a calendar date/], // 2026 is not a leap year
    [{ fromDate: '2026-13-01' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ fromDate: '2026-04-31' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ fromDate: '0000-01-01' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ fromDate: '20260101' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ fromDate: '2026-1-1' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ fromDate: '2026-01-01T00:00:00Z' }, 'fromDate', /^fromDate must be a calendar date/],
    [{ toDate: '2026-02-30' }, 'toDate', /^toDate must be a calendar date/],
    [{ toDate: '' }, 'toDate', /^toDate must be a calendar date/],
    [{ fromDate: '2026-03-02', toDate: '2026-03-01' }, 'fromDate', /^fromDate \(2026-03-02\) must not be after toDate \(2026-03-01\)$/],
    [{ updatedSince: 'yesterday' }, 'updatedSince', /^updatedSince must be an ISO-8601 timestamp with a time zone/],
    [{ updatedSince: '2026-11-01T10:00:00' }, 'updatedSince', /^updatedSince must be an ISO-8601 timestamp with a time zone/],
    [{ updatedSince: '2026-11-01' }, 'updatedSince', /^updatedSince must be/],
    [{ updatedSince: '2026-02-30T10:00:00Z' }, 'updatedSince', /^updatedSince must be/],
    [{ updatedSince: '2026-11-01T24:00:00Z' }, 'updatedSince', /^updatedSince must be/],
    [{ updatedSince: '2026-11-01T10:00:00+25:00' }, 'updatedSince', /^updatedSince must be/],
    // Wrong JSON types are caught by GraphQL's own coercion, whose message names the field too.
    [{ limit: 'ten' }, 'limit', /^Variable "\$input" got invalid value "ten" at "input.limit"; Int cannot represent non-integer value/],
    [{ page: 1.5 }, 'page', /at "input.page"; Int cannot represent non-integer value: 1.5/],
    [{ page: 2 ** 31 }, 'page', /at "input.page"; Int cannot represent non 32-bit signed integer value/],
    [{ fromDate: 20260101 }, 'fromDate', /at "input.fromDate"; String cannot represent a non string value/],
    [{ sinceWhen: 'x' }, 'sinceWhen', /Field "sinceWhen" is not defined by type "OrderListInput"/]
  ]
  for (const [input, field, message] of cases) {
    // Each case twice: the second run is served from the validated-document cache.
    for (const run of [1, 2]) {
      const res = await graphql(app, token, OrderIdsDocument, { input })
      const [error] = res.body.errors ?? []
      t.match(error?.message, message, `${JSON.stringify(input)} (run ${run})`)
      t.equal(error?.extensions?.code, 'BAD_USER_INPUT', `${JSON.stringify(input)} code`)
      if (error?.extensions?.field !== undefined || field !== 'sinceWhen') t.equal(error?.extensions?.field, field)
      t.equal(res.body.errors!.length, 1)
      t.notOk(res.body.data?.orders, 'no orders')
      t.ok([200, 400].includes(res.statusCode), 'a client error, never 500')
    }
  }
  const resolverError = await graphql(app, token, OrderIdsDocument, { input: { limit: 0 } })
  t.equal(resolverError.statusCode, 200, 'a field error: 200 with data.orders null')
  t.same(resolverError.body.data, { orders: null })
  t.same(resolverError.body.errors![0].path, ['orders'])
  const inline = await graphql(app, token, '{ orders(input: {page: 0}) { pageInfo { page } } }')
  t.equal(inline.body.errors![0].extensions!.field, 'page', 'literal input checked the same way')
})

t.test('documents that cannot run: syntax, unknown fields, depth, cost, bad bodies', async (t) => {
  const { app, database } = await build(t)
  await seedDemo(database, 30)
  const token = await credential(database, 1, 'access-token')
  const post = (payload: string, contentType = 'application/json') => app.inject({
    method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, payload
  })
  const expectError = async (payload: string, statusCode: number, code: string, message: RegExp, name: string) => {
    const res = await post(payload)
    t.equal(res.statusCode, statusCode, name)
    const body = res.json()
    t.equal(body.data, null, name)
    t.equal(body.errors[0].extensions.code, code, name)
    t.match(body.errors[0].message, message, name)
    t.notMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace')
  }
  await expectError(JSON.stringify({ query: '{ orders { nodes { orderId } ' }), 400, 'GRAPHQL_PARSE_FAILED', /^Syntax Error/, 'syntax')
  await expectError(JSON.stringify({ query: '{ orders { nodes { price } } }' }), 400, 'GRAPHQL_VALIDATION_FAILED', /Cannot query field "price" on type "Order"/, 'unknown field')
  await expectError(JSON.stringify({ query: 'mutation { x }' }), 400, 'GRAPHQL_VALIDATION_FAILED', /Schema is not configured to execute mutation/, 'no mutations')
  await expectError(JSON.stringify({ query: 'query Q($input: OrderListInput) { orders(input: $input) { pageInfo { page } } }', variables: { input: 'x' } }),
    400, 'BAD_USER_INPUT', /Variable "\$input" got invalid value "x"; Expected type "OrderListInput" to be an object/, 'input not an object')
  await expectError(JSON.stringify({}), 400, 'BAD_REQUEST', /^The request body must contain a query$/, 'no query')
  await expectError(JSON.stringify({ query: 5 }), 400, 'BAD_REQUEST', /^Invalid request: body\/query must be string$/, 'query not a string')
  await expectError(JSON.stringify([{ query: '{ seller { name } }' }]), 400, 'BAD_REQUEST', /^Invalid request: body must be object$/, 'batches are not accepted')
  await expectError('{"query": ', 400, 'INVALID_JSON', /^Invalid JSON format$/, 'invalid JSON')
  await expectError(JSON.stringify({ query: 'query Q($input: OrderListInput!) { orders(input: $input) { pageInfo { page } } }' }),
    400, 'BAD_USER_INPUT', /^Variable "\$input" of required type "OrderListInput!" was not provided/, 'missing required variable')
  const text = await post('{ seller { name } }', 'text/plain')
  t.equal(text.statusCode, 400, 'a text body is not a GraphQL request')
  t.same(text.json().errors[0].extensions, { code: 'BAD_REQUEST' })

  // Depth: the standard introspection query (what GraphiQL and codegen send) is exactly at the limit.
  const introspection = await post(JSON.stringify({
    query: getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true
    })
  }))
  t.equal(introspection.statusCode, 200, 'introspection works for an authenticated caller')
  t.ok(introspection.json().data.__schema.types.some((ty: { name: string }) => ty.name === 'OrderListInput'))
  const tooDeep = `{ __schema { types { fields { type ${'{ ofType '.repeat(QUERY_DEPTH_LIMIT - 4)}{ name }${' }'.repeat(QUERY_DEPTH_LIMIT - 4)} } } } }`
  await expectError(JSON.stringify({ query: tooDeep }), 400, 'QUERY_TOO_DEEP', new RegExp(`query depth \\(${QUERY_DEPTH_LIMIT + 1}\\) exceeds the query depth limit of ${QUERY_DEPTH_LIMIT}$`), 'too deep')

  // Cost: one full page of 100 fits; two in one document (aliases) do not; nor does nested introspection.
  const full = print(OrdersDocument)
  const one = await post(JSON.stringify({ query: full, variables: { input: { limit: 100 } } }))
  t.equal(one.statusCode, 200)
  const twice = full.replace('orders(input: $input) {', 'a: orders(input: $input) {').replace(/(query Orders\(\$input: OrderListInput\) \{)/, '$1 b: orders(input: $input) { nodes { ...OrderFull } }')
  await expectError(JSON.stringify({ query: twice }), 400, 'QUERY_TOO_COMPLEX', new RegExp(`^Query cost \\d+ exceeds the limit of ${MAX_QUERY_COST}`), 'two full pages')
  const small = full.replace('orders(input: $input) {', 'a: orders(input: {limit: 10}) {')
    .replace('query Orders($input: OrderListInput) {', 'query TwoSmallPages { b: orders(input: {limit: 10}) { nodes { ...OrderFull } }')
  const smallRes = await post(JSON.stringify({ query: small }))
  t.equal(smallRes.statusCode, 200, 'two small pages fit: the literal limit is used')
  t.equal(smallRes.json().data.a.nodes.length, 10)
  const fanOut = '{ __schema { types { fields { type { fields { type { fields { type { name } } } } } } } } }'
  await expectError(JSON.stringify({ query: fanOut }), 400, 'QUERY_TOO_COMPLEX', /^Query cost/, 'nested introspection')
})

t.test('a failure inside is logged, not shown', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const token = await credential(database, sellerId, 'access-token')
  await database.sql`alter table order_items rename to order_items_moved`
  const res = await graphql(app, token, OrdersDocument, {})
  t.same(res.body.errors!.map((e) => [e.message, e.extensions!.code]), [['Internal server error', 'INTERNAL_SERVER_ERROR']])
  t.notMatch(res.raw, /order_items|relation|does not exist/, 'no SQL detail leaks')
  t.same(res.body.data, { orders: null })
  const seller = await graphql(app, token, '{ seller { name } orders { pageInfo { total } } }')
  t.same(seller.body.data, { seller: { name: 'Test Seller' }, orders: { pageInfo: { total: 0 } } }, 'other fields still answer')
  await database.sql`alter table sellers rename to sellers_moved`
  const down = await graphql(app, token, SellerDocument, {})
  t.equal(down.statusCode, 500, 'no data at all: 500')
  t.same(down.body.errors!.map((e) => e.message), ['Internal server error'])
})

t.test('the formatter codes any error and logs the cause of internal ones', async (t) => {
  const logged: unknown[] = []
  const log = { error: (obj: unknown) => { logged.push(obj) } } as unknown as FastifyBaseLogger
  const cause = new Error('connection reset')
  const wrapped = new GraphQLError('connection reset', { path: ['orders'], originalError: cause })
  const plain = new Error('something odd')
  const coded = new GraphQLError('limit must be at least 1', { originalError: Object.assign(new Error('x'), { extensions: { code: 'BAD_USER_INPUT' } }) })
  const out = formatExecutionErrors([wrapped, plain, coded], { orders: null }, log)
  t.equal(out.statusCode, 200)
  t.same(out.response.errors!.map((e) => [e.message, e.extensions!.code]), [
    ['Internal server error', 'INTERNAL_SERVER_ERROR'], ['Internal server error', 'INTERNAL_SERVER_ERROR'], ['limit must be at least 1', 'BAD_USER_INPUT']
  ])
  t.same(out.response.errors![0].path, ['orders'])
  t.equal((logged[0] as { err: Error }).err, cause, 'the log gets the real cause')
  t.equal((logged[1] as { err: Error }).err, plain)
  t.equal(formatExecutionErrors([wrapped], undefined, log).statusCode, 500, 'no data and an internal error: 500')
})
