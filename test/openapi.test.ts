import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { RequestFailureSchema, restEndpoints } from '../src/routes/rest-contract.js'
import { build } from './helpers/build.js'

/*
 * GET /v2/openapi.json: a valid OpenAPI 3.1 document of both REST endpoints, exactly the committed
 * schema/openapi.json (generated from the routes), with every answer and examples that are what the
 * service sends. The explorers (/docs, /graphiql) follow config.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

interface Operation {
  operationId: string
  security: Array<Record<string, unknown>>
  requestBody: { required: boolean, content: { 'application/json': { schema: unknown, examples: Record<string, { value: unknown }> } } }
  responses: Record<string, { description: string, headers?: Record<string, unknown>, content: { 'application/json': { schema: unknown, examples: Record<string, { value: unknown }> } } }>
}

t.test('the document validates as OpenAPI 3.1 and is the committed schema/openapi.json', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/v2/openapi.json' })
  t.equal(res.statusCode, 200, 'public: no credential needed')
  const document = res.json()
  const validator = new Validator()
  const result = await validator.validate(document)
  t.ok(result.valid, JSON.stringify(result.errors))
  t.equal(validator.version, '3.1')
  t.same(document, JSON.parse(readFileSync(path.join(ROOT, 'schema/openapi.json'), 'utf8')), 'what is served is what is committed (npm run generate)')
  t.same(Object.keys(document.paths).sort(), [
    '/v2/accounting/orders/update-status',
    '/v2/platform/catalogue', '/v2/platform/deals',
    '/v2/platform/orders', '/v2/platform/orders/update-status',
    '/v2/platform/retailers',
    '/v2/platform/sellers', '/v2/platform/sellers/points',
    '/v2/references/sync-data',
    '/v2/shipments/outstanding/sync-data'
  ], 'the REST endpoints of the contract, nothing else')
  t.same(Object.keys(document.components.securitySchemes).sort(), ['apiKeyBearer', 'apiKeyHeader', 'platformKeyBearer'])
  t.match(document.components.securitySchemes, { apiKeyBearer: { type: 'http', scheme: 'bearer' }, apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' } })
})

t.test('each endpoint: its security, request, every answer, and examples the schemas accept', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject({ url: '/v2/openapi.json' })).json()
  const cases = [
    { operation: document.paths['/v2/accounting/orders/update-status'].post as Operation, endpoint: restEndpoints.statusUpdate, security: 'apiKeyBearer', maxItems: 1000 },
    { operation: document.paths['/v2/shipments/outstanding/sync-data'].put as Operation, endpoint: restEndpoints.shipmentSync, security: 'apiKeyHeader', maxItems: 100_000 },
    { operation: document.paths['/v2/platform/retailers'].put as Operation, endpoint: restEndpoints.platformRetailers, security: 'platformKeyBearer', maxItems: 1000 }
  ]
  for (const { operation, endpoint, security, maxItems } of cases) {
    t.same(operation.security, [{ [security]: [] }], `${operation.operationId}: ${security}`)
    t.same(Object.keys(operation.responses).sort(), ['200', '400', '401', '409', '413', '415', '422', '429', '500', '503'], `${operation.operationId}: every answer`)
    t.match(JSON.stringify(operation.requestBody.content['application/json'].schema), `"maxItems":${maxItems}`, 'the item limit is in the schema')
    for (const [name, example] of Object.entries(operation.requestBody.content['application/json'].examples)) {
      t.ok(Value.Check(endpoint.request, example.value), `${operation.operationId} request example ${name} fits the request schema`)
    }
    for (const [status, answer] of Object.entries(operation.responses)) {
      const schema: TSchema = (endpoint.responses as Record<string, TSchema>)[status] ?? RequestFailureSchema
      const examples = Object.entries(answer.content['application/json'].examples)
      t.ok(examples.length > 0, `${operation.operationId} ${status} has an example`)
      for (const [name, example] of examples) {
        t.ok(Value.Check(schema, example.value), `${operation.operationId} ${status} example ${name} fits its schema`)
        t.equal((example.value as { statusCode: number }).statusCode, Number(status), `${status} ${name}: statusCode mirrors the status`)
      }
    }
    t.ok(operation.responses['503']!.headers?.['Retry-After'], '503 says Retry-After')
  }
  const update = cases[0]!.operation
  t.match(update.responses['400']!.content['application/json'].examples, {
    invalidStatus: { value: { error: true, status: false, statusCode: 400, message: 'Invalid order status', data: { errors: [{ error: 'Invalid order status' }] } } },
    statusRequired: { value: { message: 'Order status is required' } },
    invalidJson: { value: { message: 'Invalid JSON format' } }
  }, 'spec 7.1 and 7.2 as the contract writes them')
  t.match(update.responses['401']!.content['application/json'].examples, { unauthorized: { value: { error: true, status: false, statusCode: 401, message: 'Unauthorized' } } })
  t.match(cases[1]!.operation.responses['200']!.content['application/json'].examples, {
    synced: { value: { data: { unmatched: { retailerSyncIds: { count: 1, examples: ['RET-NEW-0042'] } } } } }
  }, 'the sync 200 with unmatched')
})

t.test('the documented examples are what the service answers', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject({ url: '/v2/openapi.json' })).json()
  const examples = (document.paths['/v2/accounting/orders/update-status'].post as Operation).responses
  const key = 'oxs_test_ak_nope'
  const unauthorized = await app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}` }, payload: {} })
  t.same(unauthorized.json(), examples['401']!.content['application/json'].examples.unauthorized!.value)
})

t.test('the explorers: on in testing, off in production unless EXPLORER_ENABLED', async (t) => {
  const testing = await build(t)
  for (const url of ['/docs', '/docs/', '/graphiql', '/graphiql/assets/graphiql.min.js', '/graphiql/assets/react.production.min.js']) {
    t.equal((await testing.app.inject({ url })).statusCode < 400, true, `testing: ${url}`)
  }
  const graphiql = await testing.app.inject({ url: '/graphiql' })
  t.match(graphiql.headers['content-type'], /text\/html/)
  t.match(graphiql.body, /query Orders\(\$input: OrderListInput\)/, 'the contract\'s orders query is the default tab')
  t.notMatch(graphiql.body, /unpkg|cdn\.|jsdelivr/, 'no CDN: every asset is served here')
  t.equal((await testing.app.inject({ url: '/graphiql/assets/__proto__' })).statusCode, 404)
  t.equal((await testing.app.inject({ url: '/graphiql/assets/..%2Fpackage.json' })).statusCode, 404)

  const production = await build(t, { ORDER_EXCHANGE_ENV: 'production' })
  for (const url of ['/docs', '/graphiql']) t.equal((await production.app.inject({ url })).statusCode, 404, `production: ${url} off`)
  t.equal((await production.app.inject({ url: '/v2/openapi.json' })).statusCode, 200, 'the document itself is always served')
  const switched = await build(t, { ORDER_EXCHANGE_ENV: 'production', EXPLORER_ENABLED: 'true' })
  for (const url of ['/docs/', '/graphiql']) t.equal((await switched.app.inject({ url })).statusCode, 200, `production with EXPLORER_ENABLED: ${url}`)
})
