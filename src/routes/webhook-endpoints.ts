import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Ajv } from 'ajv'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { webhookPrivateNetworksAllowed } from '../config.js'
import { created, success } from '../rest-envelope.js'
import { checkEndpointUrl } from '../outbound/address-policy.js'
import {
  createEndpoint, deleteEndpoint, listAttempts, listEndpoints, replayEvents, rotateSecret, sendTestEvent,
  updateEndpoint, type EndpointScope
} from '../webhooks/endpoints.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { WebhookError, WebhookText } from '../webhooks/texts.js'
import { restEndpoints, routePath, WEBHOOK_ENDPOINTS_PATH } from './rest-contract.js'

/*
 * The seller's webhook endpoints (docs/api/webhooks.md): thin handlers over webhooks/endpoints.ts,
 * with the API key as a Bearer token. Every route acts within the key's scope (its seller, and its stores when
 * the key is narrowed to some): an endpoint outside it (another seller's, or for a narrowed key one made by a
 * key of wider scope) is the same 404 as one that does not exist, and so is an id that is not a UUID. An
 * endpoint made by a narrowed key keeps its stores and is sent only their orders' events. Paths, requests and
 * answers are the REST contract's (rest-contract.ts). No Idempotency-Key (docs/api/idempotency.md): a
 * replayed creation would have to store the secret in the clear.
 */

export { WEBHOOK_ENDPOINTS_PATH }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const {
  webhookEndpointCreate: create, webhookEndpointList: list, webhookEndpointUpdate: update,
  webhookEndpointDelete: remove, webhookSecretRotate: rotate, webhookTest: test,
  webhookAttemptList: attempts, webhookReplay: replay
} = restEndpoints

/**
 * These routes refuse what they do not know. Fastify's default validator drops unknown properties
 * (removeAdditional), so `{"url": …, "secret": "mine"}` would be created with a secret of ours while the
 * caller believes its own is in use, and a replay given both `after` and `eventIds` would run the one it
 * kept. Here an unknown property is a 400 naming it. (Set in this plugin only: it is encapsulated, and
 * the older routes keep the contract they were published with.)
 */
const strict = new Ajv({
  coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false, strict: false
})

const webhookEndpointRoutes: FastifyPluginAsync = async (plain) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(({ schema }) => strict.compile(schema))
  const box = SecretBox.of(app.config)
  const allowPrivateNetworks = webhookPrivateNetworksAllowed(app.config)
  const requireHttps = !allowPrivateNetworks
  const common = {
    onRequest: app.requireCredential('api-key', 'authorization'),
    config: { rateLimit: { max: app.config.RATE_LIMIT_WEBHOOKS_PER_MINUTE, timeWindow: 60_000 } }
  }
  /** The routes that read no body: an empty one with Content-Type: application/json is none (plugins/json-body.ts). */
  const bodiless = { ...common, config: { ...common.config, noBody: true } }
  const db = app.database.db
  const scopeOf = (request: FastifyRequest): EndpointScope =>
    ({ sellerId: request.caller!.sellerId, storeIds: request.caller!.storeIds })
  const endpointId = (id: string): string => {
    if (!UUID.test(id)) throw WebhookError.notFound()
    return id.toLowerCase()
  }
  const checkedUrl = async (url: string): Promise<string> => {
    const problem = await checkEndpointUrl(url, { allowPrivateNetworks, requireHttps })
    if (problem !== null) throw WebhookError.invalidUrl(problem)
    return url
  }
  const openBox = (): SecretBox => {
    if (box === null) throw WebhookError.notConfigured()
    return box
  }

  app.post(routePath(create.path), {
    ...common,
    schema: { body: create.request, response: create.responses }
  }, async (request, reply) => {
    const sealer = openBox()
    const { url, types, description } = request.body
    const input = { url: await checkedUrl(url), types: types ?? null, description: description ?? '' }
    const endpoint = await db.transaction((tx) => createEndpoint(tx, scopeOf(request), input, sealer))
    // Never the secret: it is in the answer alone.
    request.log.info({ sellerId: request.caller!.sellerId, endpointId: endpoint.id }, 'webhook endpoint created')
    return reply.code(201).send(created(WebhookText.created, endpoint))
  })

  app.get(routePath(list.path), {
    ...common,
    schema: { response: list.responses }
  }, async (request) => success(WebhookText.listed, { endpoints: await listEndpoints(db, scopeOf(request)) }))

  app.patch(routePath(update.path), {
    ...common,
    schema: { params: update.params, body: update.request, response: update.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const patch = request.body
    if (Object.keys(patch).length === 0) throw WebhookError.invalid(WebhookText.emptyPatch)
    if (patch.url !== undefined) await checkedUrl(patch.url)
    const endpoint = await updateEndpoint(db, scopeOf(request), id, patch)
    return success(WebhookText.updated, endpoint)
  })

  app.delete(routePath(remove.path), {
    ...bodiless,
    schema: { params: remove.params, response: remove.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    await deleteEndpoint(db, scopeOf(request), id)
    return success(WebhookText.deleted, { id })
  })

  app.post(routePath(rotate.path), {
    ...bodiless,
    schema: { params: rotate.params, response: rotate.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sealer = openBox()
    const rotated = await rotateSecret(db, scopeOf(request), id, sealer)
    return success(WebhookText.rotated, rotated)
  })

  app.post(routePath(test.path), {
    ...bodiless,
    schema: { params: test.params, response: test.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sent = await db.transaction((tx) => sendTestEvent(tx, scopeOf(request), id))
    return success(WebhookText.testQueued, sent)
  })

  app.get(routePath(attempts.path), {
    ...common,
    schema: { params: attempts.params, querystring: attempts.query, response: attempts.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const { status, after, limit } = request.query
    const page = await listAttempts(db, scopeOf(request), id, { status: status ?? null, after: after ?? '0', limit: limit === undefined ? 50 : Number(limit) })
    return success(WebhookText.attempts, page)
  })

  app.post(routePath(replay.path), {
    ...common,
    schema: { params: replay.params, body: replay.request, response: replay.responses }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const replayed = await db.transaction((tx) => replayEvents(tx, scopeOf(request), id, request.body))
    return success(WebhookText.replayQueued, replayed)
  })
}

export default webhookEndpointRoutes
