import t from 'tap'
import type { InjectOptions } from 'fastify'
import { buildApp } from '../../src/app.js'
import { transaction } from '../../src/db/transaction.js'
import { idempotent, type IdempotencyRequest } from '../../src/idempotency/idempotency-key.js'
import { withIdempotency } from '../../src/plugins/idempotency.js'
import { restEndpoints } from '../../src/routes/rest-contract.js'
import { testConfig, testDatabase } from '../helpers/build.js'
import { createSeller, credential, platformKey } from '../helpers/fixtures.js'

/*
 * The idempotency wrapper: a route that says `config: { idempotent: true }` and answers through
 * withIdempotency gets claim, replay and mismatch without writing any of it, and every batch endpoint of
 * the REST contract is such a route (the webhook endpoint routes are not, on purpose: docs/api/webhooks.md, "Routes"
 * endpoints"). Test-only routes are added to the real app.
 */

async function appWithTestRoutes (t: Parameters<typeof testDatabase>[0]) {
  const database = await testDatabase(t)
  const app = await buildApp({ config: testConfig(database), database })
  t.teardown(() => app.close())
  const runs = { work: 0, counted: 0, failNext: false }
  await app.register(async (scope) => {
    const auth = scope.requireCredential('api-key', 'x-api-key')
    // A new mutating route: it says so, and its service runs the work through idempotent().
    const declared = { onRequest: auth, config: { idempotent: true } }
    const service = (idempotency: IdempotencyRequest | undefined, body: unknown) =>
      transaction(database.db, (tx) => idempotent(tx, idempotency, async () => {
        runs.work++
        if (runs.failNext) { runs.failNext = false; throw new Error('the work failed') }
        return { run: runs.work, body }
      }))
    scope.post('/test/mutate', declared, (request, reply) =>
      withIdempotency(request, reply, (idempotency) => service(idempotency, request.body), () => { runs.counted++ }))
    scope.post('/test/forgot-the-wrapper', declared, async () => ({ ok: true }))
    scope.post('/test/not-declared', { onRequest: auth }, (request, reply) =>
      withIdempotency(request, reply, async () => ({ ok: true }), () => {}))
    scope.post('/test/no-credential', { config: { idempotent: true } }, (request, reply) =>
      withIdempotency(request, reply, async () => ({ ok: true }), () => {}))
  })
  const { sellerId } = await createSeller(database)
  const key = await credential(database, sellerId, 'api-key')
  const send = (url: string, body: unknown, idempotencyKey?: string) => app.inject({
    method: 'POST',
    url,
    headers: {
      'x-api-key': key, 'content-type': 'application/json', ...(idempotencyKey && { 'idempotency-key': idempotencyKey })
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  return { app, database, runs, key, send, platform: await platformKey(database) }
}

t.test('a route that declares idempotency gets claim, replay and mismatch from the wrapper', async (t) => {
  const { database, runs, send } = await appWithTestRoutes(t)

  const first = await send('/test/mutate', { a: 1 }, 'k-1')
  t.equal(first.statusCode, 200)
  t.equal(first.headers['idempotent-replayed'], undefined)
  t.same(first.json(), { run: 1, body: { a: 1 } })
  const again = await send('/test/mutate', { a: 1 }, 'k-1')
  t.equal(again.body, first.body, 'the first answer, byte for byte')
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.same(runs, { work: 1, counted: 1, failNext: false }, 'the work ran once, and the replay was not counted')
  const spaced = await send('/test/mutate', '{ "a" : 1 }', 'k-1')
  t.equal(spaced.headers['idempotent-replayed'], 'true', 'a parsed body is compared as parsed')

  const reused = await send('/test/mutate', { a: 2 }, 'k-1')
  t.equal(reused.statusCode, 422)
  t.match(reused.json(), {
    code: 'IDEMPOTENCY_KEY_REUSED',
    message: 'This Idempotency-Key was already used with a different request: use a new key for a new request'
  })
  const malformed = await send('/test/mutate', { a: 1 }, 'naïve')
  t.equal(malformed.statusCode, 400)
  t.match(malformed.json(), {
    code: 'INVALID_IDEMPOTENCY_KEY', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters'
  })
  t.equal((await send('/test/mutate', { a: 1 })).json().run, 2, 'without a key the work runs again')

  runs.failNext = true
  t.equal((await send('/test/mutate', { a: 3 }, 'k-2')).statusCode, 500)
  const [stored] = await database.sql`select count(*)::int as n from idempotency_keys where key = 'k-2'`
  t.equal(stored!.n, 0, 'work that did not commit leaves no key')
  const retried = await send('/test/mutate', { a: 3 }, 'k-2')
  t.equal(retried.headers['idempotent-replayed'], undefined, 'so its retry does the work')
  t.equal(retried.json().run, 4)
})

t.test('a route cannot half-use the wrapper: each way is a 500, never an ignored key', async (t) => {
  const { send } = await appWithTestRoutes(t)
  const status = async (url: string, idempotencyKey?: string) => (await send(url, {}, idempotencyKey)).statusCode
  t.equal(await status('/test/forgot-the-wrapper', 'k'), 500, 'declared, answered without withIdempotency')
  t.equal(await status('/test/forgot-the-wrapper'), 500, 'with or without a key')
  t.equal(await status('/test/not-declared', 'k'), 500, 'withIdempotency on a route that does not say idempotent')
  t.equal(await status('/test/no-credential', 'k'), 500, 'keys are per credential')
})

type Sent = { headers: Record<string, string>, payload: unknown }

t.test('every endpoint of the REST contract that takes an Idempotency-Key replays; the others are named with why', async (t) => {
  const { app, key, platform } = await appWithTestRoutes(t)
  // A request each idempotent endpoint accepts, or why an endpoint takes no key: a new endpoint in the contract
  // needs a line here (a type error without).
  const noKey = (why: string) => ({ notIdempotent: why })
  const secret = noKey('a replayed answer would have to store the secret in the clear (docs/api/webhooks.md)')
  const requests = {
    statusUpdate: {
      headers: { authorization: `Bearer ${key}` },
      payload: { order_status: [{ Order_id: 999_999, Order_Status: 'ORDER_ACCEPTED' }] }
    },
    shipmentSync: {
      headers: { 'x-api-key': key },
      payload: [{ retailerSyncId: 'R1', offerSyncId: 'O1', outstandingQuantity: 1 }]
    },
    referencesSync: {
      headers: { 'x-api-key': key },
      payload: [{ type: 'ITEM', id: 999_999, syncId: 'I1' }]
    },
    platformSellers: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ companyId: 900, name: 'S', status: 'ACTIVE', takeRate: 0.02, autoRejectEnabled: false, stores: [] }]
    },
    platformPoints: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ companyId: 900, amount: 10, reference: 'R1' }]
    },
    platformOrders: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ orderId: '999999' }]
    },
    platformOrderStatus: {
      headers: { authorization: `Bearer ${platform}` },
      payload: { order_status: [{ Order_id: 999_999, Order_Status: 'CANCELLED' }] }
    },
    platformRetailers: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ id: 900, companyId: 900, name: 'R', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] }]
    },
    platformCatalogue: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ id: 1, companyId: 900, itemName: 'I', skus: [] }]
    },
    platformDeals: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ id: 1, companyId: 900, offerId: 1, dealDate: '2024-06-30', dealPrice: 1, maxQuantity: 1 }]
    },
    platformRefunds: noKey('a read'),
    platformPayouts: noKey('a read'),
    platformLedger: noKey('a read'),
    platformRefundsSettle: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ id: '999999', reference: 'UTR-1' }]
    },
    platformPayoutsSettle: {
      headers: { authorization: `Bearer ${platform}` },
      payload: [{ id: 999_999, reference: 'NEFT-1' }]
    },
    webhookEndpointCreate: secret,
    webhookEndpointList: noKey('a read'),
    webhookEndpointUpdate: noKey('a patch sent again sets the same values again'),
    webhookEndpointDelete: noKey('deleting again is a 404 and changes nothing'),
    webhookSecretRotate: secret,
    webhookTest: noKey('sent twice, two webhook.test events: harmless'),
    webhookAttemptList: noKey('a read'),
    webhookReplay: noKey('sent twice, the events are queued twice with their own webhook-id: a receiver that de-duplicates drops them')
  } satisfies Record<keyof typeof restEndpoints, Sent | { notIdempotent: string }>
  const idempotent = Object.entries(restEndpoints).flatMap(([name, endpoint]) => {
    const request = requests[name as keyof typeof restEndpoints]
    return 'payload' in request ? [{ name, endpoint, ...request }] : []
  })

  // The selection is the routes' own: the document says Idempotency-Key where a route declares idempotent.
  const document = (await app.inject({ url: '/v2/openapi.json' })).json()
  const takesKey = Object.values(restEndpoints).filter((endpoint) => {
    const operation = document.paths[endpoint.path][endpoint.method.toLowerCase()]
    return (operation.parameters ?? []).some((p: { in: string, name: string }) => p.in === 'header' && p.name === 'idempotency-key')
  })
  t.same(takesKey.map((e) => `${e.method} ${e.path}`), idempotent.map(({ endpoint: e }) => `${e.method} ${e.path}`),
    'the endpoints given a request here are exactly those whose route declares idempotent')
  t.ok(idempotent.length >= 10, 'the batch endpoints, at least')

  for (const { name, endpoint, headers, payload } of idempotent) {
    const inject = () => app.inject({
      method: endpoint.method as InjectOptions['method'],
      url: endpoint.path,
      headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': `declared-${name}` },
      payload: JSON.stringify(payload)
    })
    const first = await inject()
    t.equal(first.statusCode, 200, name)
    const again = await inject()
    t.equal(again.headers['idempotent-replayed'], 'true', `${name} replays`)
    t.equal(again.body, first.body, `${name} replays byte for byte`)
  }
})
