import t from 'tap'
import { auditServer } from 'graphql-http'
import { serve } from '../helpers/client.js'

/*
 * GraphQL over HTTP (the graphql-http audit suite against the running service, with a token): every MUST
 * passes; the SHOULDs not met are the ones this service answers differently on purpose, and are listed.
 */

/**
 * SHOULDs we do not follow, and why (docs/api/orders.md): the contract's application/json answers keep their 400s.
 */
const DELIBERATE = new Set([
  '572B', // SHOULD use 200 on a parse failure under application/json: we answer 400 GRAPHQL_PARSE_FAILED
  'FDE2', // SHOULD use 200 on a validation failure under application/json: 400 GRAPHQL_VALIDATION_FAILED
  '7B9B' // SHOULD use 200 on a variable coercion failure under application/json: 400 BAD_USER_INPUT
])

t.test('the graphql-http audit: every MUST passes', async (t) => {
  const served = await serve(t, { orders: 20 })
  const fetchFn = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> =>
    fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${served.accessToken}` } })
  const results = await auditServer({ url: `${served.baseUrl}/v2/graphql`, fetchFn })
  const failed = results.filter((r) => r.status === 'error')
  const warned = results.filter((r) => r.status === 'warn')
  const passed = results.filter((r) => r.status === 'ok')
  t.same(failed.map((r) => `${r.id} ${r.name}: ${'reason' in r ? r.reason : ''}`), [], 'no MUST fails')
  t.same(warned.filter((r) => !DELIBERATE.has(r.id)).map((r) => `${r.id} ${r.name}`), [], 'the only SHOULDs not met are the deliberate ones')
  t.comment(`graphql-http audit: ${passed.length} of ${results.length} passed; MUSTs failed: ${failed.length}; SHOULDs not met: ${warned.length} (${warned.map((r) => r.id).join(', ')})`)
  t.ok(results.length > 50, `${results.length} audits ran`)
})

t.test('application/graphql-response+json: its content type, the same status codes, no data entry on request errors', async (t) => {
  const served = await serve(t, { orders: 10 })
  const post = (body: unknown, accept?: string, token = served.accessToken) => fetch(`${served.baseUrl}/v2/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
    body: JSON.stringify(body)
  })
  const gql = 'application/graphql-response+json'
  const ok = await post({ query: '{ seller { name } }' }, gql)
  t.equal(ok.status, 200)
  t.match(ok.headers.get('content-type'), /^application\/graphql-response\+json/)
  t.same(await ok.json(), { data: { seller: { name: 'Sharma Distributors Pvt Ltd' } } })

  for (const [query, code] of [['{ seller { name }', 'GRAPHQL_PARSE_FAILED'], ['{ nope }', 'GRAPHQL_VALIDATION_FAILED']] as const) {
    const json = await post({ query })
    const graphql = await post({ query }, `${gql}, application/json;q=0.9`)
    t.equal(json.status, 400)
    t.equal(graphql.status, 400)
    t.match(json.headers.get('content-type'), /^application\/json/)
    t.match(graphql.headers.get('content-type'), /^application\/graphql-response\+json/)
    const [jsonBody, graphqlBody] = [
      await json.json() as { data?: unknown },
      await graphql.json() as { data?: unknown, errors: Array<{ extensions: { code: string } }> }
    ]
    t.equal(jsonBody.data, null, `${code}: application/json keeps data: null`)
    t.notOk('data' in graphqlBody, `${code}: no data entry under ${gql}`)
    t.equal(graphqlBody.errors[0].extensions.code, code)
  }
  const variables = await post({ query: 'query ($input: OrderListInput) { orders(input: $input) { pageInfo { page } } }', variables: { input: { limit: 'ten' } } }, gql)
  t.equal(variables.status, 400)
  t.notOk('data' in (await variables.json() as object), 'bad variables: the document never ran')
  const badInput = await post({ query: '{ orders(input: {page: 0}) { pageInfo { page } } }' }, gql)
  t.equal(badInput.status, 200, 'a bad input value is an execution error: 200 with data')
  t.same((await badInput.json() as { data: unknown }).data, { orders: null })

  const unauthorized = await post({ query: '{ seller { name } }' }, gql, 'oxs_test_at_nope')
  t.equal(unauthorized.status, 401)
  t.same(await unauthorized.json(), { data: null, errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] }, 'the contract\'s 401 body under either type')
  const preferJson = await post({ query: '{ seller { name } }' }, `application/json, ${gql};q=0.5`)
  t.match(preferJson.headers.get('content-type'), /^application\/json/, 'the client\'s preference decides')
  const nulls = await post({ query: '{ seller { name } }', variables: null, operationName: null, extensions: null })
  t.equal(nulls.status, 200, 'unset optional parameters may be sent as null (extensions: null was refused)')
  const none = await post({ query: '{ seller { name } }' })
  t.match(none.headers.get('content-type'), /^application\/json/, 'no Accept: application/json, as today')
})
