import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { FormatRegistry, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import t from 'tap'
import { RequestFailureSchema, restEndpoints, type Endpoint } from '../../src/routes/rest-contract.js'
import { WebhookText } from '../../src/webhooks/texts.js'
import { build } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'

/*
 * GET /v2/openapi.json: a valid OpenAPI 3.1 document of the REST endpoints of the contract, exactly the
 * committed schema/openapi.json (generated from the routes), with every answer and examples that are what
 * the service sends. The explorers (/docs, /graphiql) follow config.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

// Fastify checks formats (ajv-formats); TypeBox's Value.Check knows only those registered.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (value) => UUID.test(value))

interface Operation {
  operationId: string
  tags: string[]
  security: Array<Record<string, unknown>>
  parameters?: Array<{ in: string, name: string, required: boolean }>
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
    '/v2/platform/payouts', '/v2/platform/payouts/settle',
    '/v2/platform/refunds', '/v2/platform/refunds/settle',
    '/v2/platform/retailers',
    '/v2/platform/sellers', '/v2/platform/sellers/points', '/v2/platform/sellers/{companyId}/ledger',
    '/v2/references/sync-data',
    '/v2/shipments/outstanding/sync-data',
    '/v2/webhooks/endpoints', '/v2/webhooks/endpoints/{id}',
    '/v2/webhooks/endpoints/{id}/deliveries', '/v2/webhooks/endpoints/{id}/replay',
    '/v2/webhooks/endpoints/{id}/rotate-secret', '/v2/webhooks/endpoints/{id}/test'
  ], 'the REST endpoints of the contract, nothing else')
  const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
  t.same(operations.sort(), Object.values(restEndpoints).map((e) => `${e.method} ${e.path}`).sort(),
    'each operation is one of the contract, each endpoint of the contract an operation (no HEAD)')
  t.same(document.tags.map((tag: { name: string }) => tag.name), ['Accounting', 'Shipments', 'References', 'Platform', 'Webhooks'])
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
  }, 'the request-level and per-order texts as the contract writes them')
  t.match(update.responses['401']!.content['application/json'].examples, { unauthorized: { value: { error: true, status: false, statusCode: 401, message: 'Unauthorized' } } })
  t.match(cases[1]!.operation.responses['200']!.content['application/json'].examples, {
    synced: { value: { data: { unmatched: { retailerSyncIds: { count: 1, examples: ['RET-NEW-0042'] } } } } }
  }, 'the sync 200 with unmatched')
})

t.test('the webhook endpoints: paths with {id}, methods, API key as Bearer, the Webhooks tag, no Idempotency-Key', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject({ url: '/v2/openapi.json' })).json()
  const webhooks = Object.entries(restEndpoints).filter(([, e]) => e.path.startsWith('/v2/webhooks/'))
  t.same(webhooks.map(([, e]) => `${e.method} ${e.path}`), [
    'POST /v2/webhooks/endpoints',
    'GET /v2/webhooks/endpoints',
    'PATCH /v2/webhooks/endpoints/{id}',
    'DELETE /v2/webhooks/endpoints/{id}',
    'POST /v2/webhooks/endpoints/{id}/rotate-secret',
    'POST /v2/webhooks/endpoints/{id}/test',
    'GET /v2/webhooks/endpoints/{id}/deliveries',
    'POST /v2/webhooks/endpoints/{id}/replay'
  ], 'the eight routes of docs/api/webhooks.md are in the contract')
  const operationIds = new Set<string>()
  for (const [name, endpoint] of webhooks as Array<[string, Endpoint]>) {
    const operation = document.paths[endpoint.path]?.[endpoint.method.toLowerCase()] as Operation | undefined
    if (operation === undefined) {
      t.fail(`${name}: ${endpoint.method} ${endpoint.path} is documented`)
      continue
    }
    const what = `${operation.operationId} (${endpoint.method} ${endpoint.path})`
    operationIds.add(operation.operationId)
    t.same(operation.tags, ['Webhooks'], `${what}: tag`)
    t.same(operation.security, [{ apiKeyBearer: [] }], `${what}: the API key as a Bearer token`)
    const parameters = (operation.parameters ?? []).map((p) => `${p.in} ${p.name}${p.required ? '' : '?'}`).sort()
    const expected = [
      ...(endpoint.path.includes('{id}') ? ['path id'] : []),
      ...(name === 'webhookAttemptList' ? ['query after?', 'query limit?', 'query status?'] : [])
    ].sort()
    t.same(parameters, expected, `${what}: its parameters, and no Idempotency-Key (these routes take none)`)
    t.equal(operation.requestBody !== undefined, endpoint.request !== undefined, `${what}: a body exactly when it reads one`)
    for (const [example, { value }] of Object.entries(operation.requestBody?.content['application/json'].examples ?? {})) {
      t.ok(Value.Check(endpoint.request!, value), `${what}: request example ${example} fits the request schema`)
    }
    const statuses = Object.keys(operation.responses)
    t.ok(statuses.every((s) => s in endpoint.responses), `${what}: every documented answer is one of the contract`)
    t.same(['401', '429', '500', '503'].filter((s) => !statuses.includes(s)), [], `${what}: at least 401, 429, 500, 503`)
    for (const [status, answer] of Object.entries(operation.responses)) {
      const schema: TSchema = (endpoint.responses as Record<string, TSchema>)[status]!
      const examples = Object.entries(answer.content['application/json'].examples)
      t.ok(examples.length > 0, `${what} ${status} has an example`)
      for (const [example, { value }] of examples) {
        t.ok(Value.Check(schema, value), `${what} ${status} example ${example} fits its schema`)
        t.equal((value as { statusCode: number }).statusCode, Number(status), `${what} ${status} ${example}: statusCode mirrors the status`)
      }
    }
    t.ok(operation.responses['503']!.headers?.['Retry-After'], `${what}: 503 says Retry-After`)
    if (endpoint.path.includes('{id}')) t.ok(operation.responses['404'], `${what}: another seller's endpoint is a 404`)
  }
  t.equal(operationIds.size, webhooks.length, 'an operationId each')
  const create = document.paths['/v2/webhooks/endpoints'].post as Operation
  t.match(create.requestBody.content['application/json'].examples, {
    erp: { value: { url: 'https://erp.example.com/hooks/orders', types: ['order.placed', 'order.cancelled'], description: 'ERP' } }
  }, 'the documented request')
  t.match(create.responses['201']!.content['application/json'].examples, {
    created: {
      value: {
        error: false,
        status: true,
        statusCode: 201,
        message: WebhookText.created,
        data: { url: 'https://erp.example.com/hooks/orders', status: 'ENABLED', disabledReason: null, secret: /^whsec_/ }
      }
    }
  }, 'and the documented answer')
  t.match(create.responses['409']!.content['application/json'].examples, { tooMany: { value: { code: 'TOO_MANY_WEBHOOK_ENDPOINTS' } } })
  t.match(create.responses['400']!.content['application/json'].examples, {
    notHttps: { value: { code: 'INVALID_WEBHOOK_URL', message: 'url must use https' } },
    privateHost: { value: { code: 'INVALID_WEBHOOK_URL', message: /private/ } }
  })
  t.match(create.responses['503']!.content['application/json'].examples, { notConfigured: { value: { code: 'WEBHOOKS_NOT_CONFIGURED' } } })
  const test = document.paths['/v2/webhooks/endpoints/{id}/test'].post as Operation
  t.match(test.responses['409']!.content['application/json'].examples, { disabled: { value: { code: 'WEBHOOK_ENDPOINT_DISABLED' } } })
  const replay = document.paths['/v2/webhooks/endpoints/{id}/replay'].post as Operation
  t.match(replay.responses['400']!.content['application/json'].examples, { eventNotFound: { value: { code: 'EVENT_NOT_FOUND' } } })
})

t.test('the documented examples are what the service answers', async (t) => {
  const { app, database } = await build(t)
  const document = (await app.inject({ url: '/v2/openapi.json' })).json()
  const examples = (document.paths['/v2/accounting/orders/update-status'].post as Operation).responses
  const key = 'oxs_test_ak_nope'
  const unauthorized = await app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}` }, payload: {} })
  t.same(unauthorized.json(), examples['401']!.content['application/json'].examples.unauthorized!.value)

  const seller = await credential(database, (await createSeller(database)).sellerId, 'api-key')
  const deleted = document.paths['/v2/webhooks/endpoints/{id}'].delete as Operation
  const missing = await app.inject({
    method: 'DELETE', url: '/v2/webhooks/endpoints/8d2b1e47-9c3a-4f6e-b5d0-1a7c9e3f2b85', headers: { authorization: `Bearer ${seller}` }
  })
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), deleted.responses['404']!.content['application/json'].examples.notFound!.value, 'a webhook endpoint\'s 404')
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
