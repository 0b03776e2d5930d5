import t from 'tap'
import { print } from 'graphql'
import { build } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { OrderIdsDocument } from '../../src/graphql/generated/operations.js'
import { MAX_NESTING, MAX_TOKENS } from '../../src/graphql/document-gate.js'
import { QUERY_DEPTH_LIMIT } from '../../src/graphql/limits.js'

/*
 * Regression tests for what an ordinary seller's access token could do to /v2/graphql (issue "Safe to
 * expose"): run code in the process, freeze it, or get a 500 for its own mistake.
 */

async function setup (t: Parameters<typeof build>[0]) {
  const ctx = await build(t, {}, { captureLogs: true })
  await seedDemo(ctx.database, 30)
  const token = await credential(ctx.database, 1, 'access-token')
  const post = (body: unknown, contentType = 'application/json') => ctx.app.inject({
    method: 'POST',
    url: '/v2/graphql',
    headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  return { ...ctx, token, post }
}

/** A Document whose only field is __typename under an alias that breaks out of generated code. */
function injectedAst (marker: string): object {
  return {
    kind: 'Document',
    definitions: [{
      kind: 'OperationDefinition',
      operation: 'query',
      selectionSet: {
        kind: 'SelectionSet',
        selections: [{
          kind: 'Field',
          alias: { kind: 'Name', value: `x": (() => { throw new Error("${marker}-" + (6*7)) })(), "y` },
          name: { kind: 'Name', value: '__typename' }
        }]
      }
    }]
  }
}

t.test('a JSON-encoded document AST is refused: never parsed as a document, never compiled', async (t) => {
  const { post, logs } = await setup(t)
  for (const run of [1, 2, 3]) {
    const res = await post({ query: JSON.stringify(injectedAst('INJECTED')) })
    t.equal(res.statusCode, 400, `run ${run}: a client error`)
    t.equal(res.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED', `run ${run}`)
    t.match(res.json().errors[0].message, /^Syntax Error/)
  }
  t.notMatch(logs(), /INJECTED-42/, 'the injected code never ran')
})

t.test('a literal string argument is data, never code (graphql-jit would splice a "magic date" into its code)', async (t) => {
  const { post, logs } = await setup(t)
  const magic = '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(()=>{throw new Error(\'INJECTED-\'+(6*7))})()'
  const query = `{ orders(input: {fromDate: ${JSON.stringify(magic)}}) { pageInfo { page } } }`
  for (const run of [1, 2, 3]) {
    const res = await post({ query })
    t.equal(res.statusCode, 200, `run ${run}`)
    t.equal(res.json().errors[0].extensions.code, 'BAD_USER_INPUT', `run ${run}: fromDate is just a bad date`)
  }
  t.notMatch(logs(), /INJECTED-42/, 'the injected code never ran')
})

t.test('bodies whose query is not GraphQL text are 400 GRAPHQL_PARSE_FAILED, never 500', async (t) => {
  const { post } = await setup(t)
  for (const query of ['1', 'null', '{}', '[1]', 'true', '"x"', '{"kind":"Document","definitions":[]}', '\u0000', '# only a comment']) {
    const res = await post({ query })
    t.equal(res.statusCode, 400, JSON.stringify(query))
    t.equal(res.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED', JSON.stringify(query))
  }
  const jsonAsGraphql = await post(JSON.stringify({ query: '{ seller { name } }' }), 'application/graphql')
  t.equal(jsonAsGraphql.statusCode, 400, 'a JSON body sent as application/graphql')
  t.equal(jsonAsGraphql.json().errors[0].extensions.code, 'GRAPHQL_PARSE_FAILED')
  const text = await post('{ seller { name } }', 'application/graphql')
  t.equal(text.statusCode, 200, 'application/graphql carries the query text itself')
  t.equal(text.json().data.seller.name, 'Sharma Distributors Pvt Ltd')
  for (const query of ['', '   ']) {
    const res = await post({ query })
    t.equal(res.statusCode, 400)
    t.same(res.json().errors[0].extensions, { code: 'BAD_REQUEST' }, `query ${JSON.stringify(query)}`)
  }
})

t.test('wrong variables after a good first use are still 400 BAD_USER_INPUT', async (t) => {
  const { post } = await setup(t)
  const query = print(OrderIdsDocument)
  const good = await post({ query, variables: { input: { limit: 2 } } })
  t.equal(good.statusCode, 200)
  t.equal(good.json().data.orders.nodes.length, 2)
  for (const run of [1, 2, 3]) {
    const bad = await post({ query, variables: { input: { limit: 'ten' } } })
    t.equal(bad.statusCode, 400, `run ${run}`)
    t.equal(bad.json().errors[0].extensions.code, 'BAD_USER_INPUT', `run ${run}`)
    t.equal(bad.json().errors[0].extensions.field, 'limit')
  }
  const again = await post({ query, variables: { input: { limit: 3 } } })
  t.equal(again.json().data.orders.nodes.length, 3, 'the document still works')
})

/** fragment F0 on Query { ...F1 ...F1 } … fragment Fn on Query { seller { name } }: 2^n paths, n+1 fragments. */
function doublingFragments (levels: number): string {
  const fragments = []
  for (let i = 0; i < levels; i++) fragments.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`)
  fragments.push(`fragment F${levels} on Query { seller { name } }`)
  return `query Bomb { ...F0 }\n${fragments.join('\n')}`
}

t.test('fragments spreading fragments twice are measured once each: no freeze, cost refused', async (t) => {
  const { app, post } = await setup(t)
  for (const levels of [26, 30, 60]) {
    const query = doublingFragments(levels)
    const started = Date.now()
    const bomb = post({ query })
    // The process answers other requests meanwhile.
    const live = await app.inject({ url: '/health/live' })
    t.equal(live.statusCode, 200)
    const res = await bomb
    const elapsed = Date.now() - started
    t.equal(res.statusCode, 400, `${levels} levels`)
    t.equal(res.json().errors[0].extensions.code, 'QUERY_TOO_COMPLEX', `${levels} levels: cost refused`)
    t.ok(elapsed < 2000, `${levels} levels answered in ${elapsed} ms (it took 18 s at 26 levels before)`)
  }
  // The same shape with a small fan-out is fine: memoised fragments still count every path.
  const small = await post({ query: doublingFragments(5) })
  t.equal(small.statusCode, 200)
  t.same(small.json().data, { seller: { name: 'Sharma Distributors Pvt Ltd' } })
})

t.test('deep nesting is refused by depth before anything recurses, naming the limit', async (t) => {
  const { post } = await setup(t)
  for (const levels of [MAX_NESTING + 1, 5000, 100_000]) {
    const query = `${'{ a '.repeat(levels)}${'}'.repeat(levels)}`
    const res = await post({ query })
    t.equal(res.statusCode, 400, `${levels} levels`)
    const [error] = res.json().errors
    t.equal(error.extensions.code, 'QUERY_TOO_DEEP', `${levels} levels`)
    t.match(error.message, new RegExp(`more than ${MAX_NESTING} levels deep; queries may be at most ${QUERY_DEPTH_LIMIT} levels deep`))
    t.notMatch(res.body, /call stack/i, 'no JavaScript internals')
  }
  const deepList = `{ orders(input: {fromDate: ${'['.repeat(5000)}${']'.repeat(5000)}}) { pageInfo { page } } }`
  t.equal((await post({ query: deepList })).json().errors[0].extensions.code, 'QUERY_TOO_DEEP', 'nested list values too')
  const deepVariables = await post({ query: print(OrderIdsDocument), variables: { input: JSON.parse(`${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}`) } })
  t.ok(deepVariables.statusCode < 500, 'deeply nested variables are a client error')
  t.notMatch(deepVariables.body, /call stack/i)
})

t.test('a document of too many tokens is refused before validation', async (t) => {
  const { post } = await setup(t)
  const wide = `{ ${'__typename '.repeat(MAX_TOKENS + 1)} }`
  const res = await post({ query: wide })
  t.equal(res.statusCode, 400)
  t.equal(res.json().errors[0].extensions.code, 'QUERY_TOO_COMPLEX')
  t.match(res.json().errors[0].message, new RegExp(`more than ${MAX_TOKENS} tokens`))
  // Just under the bound, the worst shape for graphql's pairwise field comparison (one response name,
  // fields that cannot merge) stops at graphql's own work budget, quickly and with a clear code.
  const fields = Math.floor((MAX_TOKENS - 2) / 6)
  const conflicting = `{ ${Array.from({ length: fields }, (_, i) => i % 2 ? 'a: __typename' : 'a: __schema { description }').join(' ')} }`
  const started = Date.now()
  const same = await post({ query: conflicting })
  const elapsed = Date.now() - started
  t.equal(same.statusCode, 400, same.body.slice(0, 300))
  const errors = same.json().errors as Array<{ message: string, extensions: { code: string } }>
  t.ok(errors.every((e) => e.extensions.code === 'QUERY_TOO_COMPLEX'), 'cost and the validation budget both refuse it')
  t.ok(errors.some((e) => /^The document is too complex to validate/.test(e.message)), 'graphql stopped comparing fields')
  t.ok(elapsed < 2000, `${fields} conflicting fields refused in ${elapsed} ms`)
})
