import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { webhookPrivateNetworksAllowed } from '../config.js'
import { CreatedEnvelope, created, success, SuccessEnvelope } from '../rest-envelope.js'
import { checkEndpointUrl } from '../outbound/address-policy.js'
import {
  createEndpoint, deleteEndpoint, listAttempts, listEndpoints, replayEvents, rotateSecret, sendTestEvent, updateEndpoint
} from '../webhooks/endpoints.js'
import {
  AttemptPageSchema, AttemptQuerySchema, CreatedEndpointSchema, CreateEndpointSchema, EndpointParamsSchema,
  EndpointSchema, PatchEndpointSchema, ReplayResultSchema, ReplaySchema, TestResultSchema
} from '../webhooks/schemas.js'
import { SecretBox } from '../webhooks/secret-box.js'
import { WebhookError, WebhookText } from '../webhooks/texts.js'

/*
 * The seller's webhook endpoints (README "Webhook endpoints"): thin handlers over webhooks/endpoints.ts,
 * with the API key as a Bearer token. Every route is the caller's seller's alone: another seller's endpoint
 * id is the same 404 as one that does not exist, and so is an id that is not a UUID.
 */

export const WEBHOOK_ENDPOINTS_PATH = '/v2/webhooks/endpoints'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const webhookEndpointRoutes: FastifyPluginAsync = async (plain) => {
  const app = plain.withTypeProvider<TypeBoxTypeProvider>()
  const box = SecretBox.of(app.config)
  const allowPrivateNetworks = webhookPrivateNetworksAllowed(app.config)
  const requireHttps = !allowPrivateNetworks
  const common = {
    onRequest: app.requireCredential('api-key', 'authorization'),
    config: { rateLimit: { max: app.config.RATE_LIMIT_WEBHOOKS_PER_MINUTE, timeWindow: 60_000 } }
  }
  const db = app.database.db
  const sellerOf = (request: FastifyRequest): number => request.caller!.sellerId
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

  app.post(WEBHOOK_ENDPOINTS_PATH, {
    ...common,
    schema: { body: CreateEndpointSchema, response: { 201: CreatedEnvelope(CreatedEndpointSchema) } }
  }, async (request, reply) => {
    const sealer = openBox()
    const { url, types, description } = request.body
    const input = { url: await checkedUrl(url), types: types ?? null, description: description ?? '' }
    const endpoint = await db.transaction((tx) => createEndpoint(tx, sellerOf(request), input, sealer))
    // Never the secret: it is in the answer alone.
    request.log.info({ sellerId: sellerOf(request), endpointId: endpoint.id }, 'webhook endpoint created')
    return reply.code(201).send(created(WebhookText.created, endpoint))
  })

  app.get(WEBHOOK_ENDPOINTS_PATH, {
    ...common,
    schema: { response: { 200: SuccessEnvelope(Type.Object({ endpoints: Type.Array(EndpointSchema) })) } }
  }, async (request) => success(WebhookText.listed, { endpoints: await listEndpoints(db, sellerOf(request)) }))

  app.patch(`${WEBHOOK_ENDPOINTS_PATH}/:id`, {
    ...common,
    schema: {
      params: EndpointParamsSchema, body: PatchEndpointSchema, response: { 200: SuccessEnvelope(EndpointSchema) }
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const patch = request.body
    if (Object.keys(patch).length === 0) throw WebhookError.invalid(WebhookText.emptyPatch)
    if (patch.url !== undefined) await checkedUrl(patch.url)
    const endpoint = await updateEndpoint(db, sellerOf(request), id, patch)
    return success(WebhookText.updated, endpoint)
  })

  app.delete(`${WEBHOOK_ENDPOINTS_PATH}/:id`, {
    ...common,
    schema: { params: EndpointParamsSchema, response: { 200: SuccessEnvelope(Type.Object({ id: Type.String() })) } }
  }, async (request) => {
    const id = endpointId(request.params.id)
    await deleteEndpoint(db, sellerOf(request), id)
    return success(WebhookText.deleted, { id })
  })

  app.post(`${WEBHOOK_ENDPOINTS_PATH}/:id/rotate-secret`, {
    ...common,
    schema: { params: EndpointParamsSchema, response: { 200: SuccessEnvelope(Type.Object({ secret: Type.String() })) } }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sealer = openBox()
    const rotated = await rotateSecret(db, sellerOf(request), id, sealer)
    return success(WebhookText.rotated, rotated)
  })

  app.post(`${WEBHOOK_ENDPOINTS_PATH}/:id/test`, {
    ...common,
    schema: { params: EndpointParamsSchema, response: { 200: SuccessEnvelope(TestResultSchema) } }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sent = await db.transaction((tx) => sendTestEvent(tx, sellerOf(request), id))
    return success(WebhookText.testQueued, sent)
  })

  app.get(`${WEBHOOK_ENDPOINTS_PATH}/:id/deliveries`, {
    ...common,
    schema: {
      params: EndpointParamsSchema,
      querystring: AttemptQuerySchema,
      response: { 200: SuccessEnvelope(AttemptPageSchema) }
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const { status, after, limit } = request.query
    const page = await listAttempts(db, sellerOf(request), id, { status: status ?? null, after: after ?? '0', limit: limit === undefined ? 50 : Number(limit) })
    return success(WebhookText.attempts, page)
  })

  app.post(`${WEBHOOK_ENDPOINTS_PATH}/:id/replay`, {
    ...common,
    schema: { params: EndpointParamsSchema, body: ReplaySchema, response: { 200: SuccessEnvelope(ReplayResultSchema) } }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const replayed = await db.transaction((tx) => replayEvents(tx, sellerOf(request), id, request.body))
    return success(WebhookText.replayQueued, replayed)
  })
}

export default webhookEndpointRoutes
