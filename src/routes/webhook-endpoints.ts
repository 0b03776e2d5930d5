import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Ajv } from 'ajv'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { webhookPrivateNetworksAllowed } from '../config.js'
import { RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { created, success } from '../rest-envelope.js'
import { checkEndpointUrl } from '../outbound/address-policy.js'
import {
  createEndpoint, deleteEndpoint, listAttempts, listEndpoints, replayEvents, rotateSecret, sendTestEvent,
  updateEndpoint, type EndpointScope
} from '../webhooks/endpoints.js'
import type { CreateEndpoint, PatchEndpoint } from '../webhooks/schemas.js'
import { SecretBox } from '../webhooks/secret-box.js'
import {
  MAX_ENDPOINTS, MAX_PENDING_DELIVERIES, MAX_REPLAY_EVENTS, MAX_REPLAY_IDS, WebhookError, WebhookText
} from '../webhooks/texts.js'
import { commonAnswers, documentedAnswers, documentedBody, failureExample, invalidJson, tooDeep, type Answer } from './documented.js'
import {
  restEndpoints, routePath, WEBHOOK_ENDPOINTS_PATH, type WebhookAttemptPageResponse,
  type WebhookEndpointCreatedResponse, type WebhookEndpointDeletedResponse, type WebhookEndpointListResponse,
  type WebhookEndpointResponse, type WebhookReplayResponse, type WebhookSecretRotatedResponse, type WebhookTestResponse
} from './rest-contract.js'

/*
 * The seller's webhook endpoints (docs/api/webhooks.md): thin handlers over webhooks/endpoints.ts,
 * with the API key as a Bearer token. Every route acts within the key's scope (its seller, and its stores when
 * the key is narrowed to some): an endpoint outside it (another seller's, or for a narrowed key one made by a
 * key of wider scope) is the same 404 as one that does not exist, and so is an id that is not a UUID. An
 * endpoint made by a narrowed key keeps its stores and is sent only their orders' events. Paths, requests and
 * answers are the REST contract's (rest-contract.ts). No Idempotency-Key (docs/api/idempotency.md): a
 * replayed creation would have to store the secret in the clear. The examples are the docs' (an ERP endpoint
 * for order.placed and order.cancelled), built from the feature's texts (webhooks/texts.ts, the address
 * policy's refusals) and typed against the routes' answers.
 */

export { WEBHOOK_ENDPOINTS_PATH }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const {
  webhookEndpointCreate: create, webhookEndpointList: list, webhookEndpointUpdate: update,
  webhookEndpointDelete: remove, webhookSecretRotate: rotate, webhookTest: test,
  webhookAttemptList: attempts, webhookReplay: replay
} = restEndpoints

const ID = '3f0c6a8e-2b4d-4e1f-9a7c-5d2e8b1f0c64'
const evt = (sequence: number): string => `evt_101_${sequence}`
const erp: CreateEndpoint = { url: 'https://erp.example.com/hooks/orders', types: ['order.placed', 'order.cancelled'], description: 'ERP' }
const endpoint = {
  id: ID,
  url: erp.url,
  types: ['order.placed' as const, 'order.cancelled' as const],
  description: 'ERP',
  status: 'ENABLED' as const,
  disabledReason: null,
  createdAt: '2024-06-30T09:15:02.481223Z',
  updatedAt: '2024-06-30T09:15:02.481223Z'
}
const madeOne: WebhookEndpointCreatedResponse = created(WebhookText.created, {
  ...endpoint, secret: 'whsec_c2hvd24gb25seSBoZXJlOiBrZWVwIGl0IHNlY3JldCE='
})
const listed: WebhookEndpointListResponse = success(WebhookText.listed, {
  endpoints: [endpoint, {
    id: '8d2b1e47-9c3a-4f6e-b5d0-1a7c9e3f2b85',
    url: 'https://ops.example.com/webhooks',
    types: null,
    description: 'Ops dashboard',
    status: 'DISABLED',
    disabledReason: 'the endpoint answered 410 Gone',
    createdAt: '2024-06-28T14:02:11.070514Z',
    updatedAt: '2024-07-01T03:40:56.902117Z'
  }]
})
const patches: Record<string, { summary: string, value: PatchEndpoint }> = {
  pause: { summary: 'Pause: nothing is sent until it is enabled again', value: { status: 'DISABLED' } },
  resume: { summary: 'Enable again: what was recorded meanwhile is sent, in order', value: { status: 'ENABLED' } },
  retarget: {
    summary: 'Another URL, every event type',
    value: { url: 'https://erp.example.com/hooks/v2/orders', types: null, description: 'ERP (v2 receiver)' }
  }
}
const paused: WebhookEndpointResponse = success(WebhookText.updated, {
  ...endpoint, status: 'DISABLED', disabledReason: 'disabled by the seller', updatedAt: '2024-07-02T08:00:41.337190Z'
})
const removed: WebhookEndpointDeletedResponse = success(WebhookText.deleted, { id: ID })
const rotated: WebhookSecretRotatedResponse = success(WebhookText.rotated, { secret: 'whsec_dGhlIG5ldyBvbmU7IHRoZSBvbGQgc2lnbnMgMjQgaC4=' })
const tested: WebhookTestResponse = success(WebhookText.testQueued, { eventId: evt(1208), sequence: '1208' })
const ofEvent = { eventId: evt(1201), type: 'order.placed' as const }
const attemptPage: WebhookAttemptPageResponse = success(WebhookText.attempts, {
  attempts: [
    {
      id: '98113',
      ...ofEvent,
      attempt: 1,
      attemptedAt: '2024-06-30T09:20:14.118032Z',
      succeeded: false,
      httpStatus: 503,
      error: 'HTTP 503',
      durationMs: 241,
      answer: '{"error":"maintenance"}'
    },
    {
      id: '98120',
      ...ofEvent,
      attempt: 2,
      attemptedAt: '2024-06-30T09:20:19.530877Z',
      succeeded: true,
      httpStatus: 204,
      error: null,
      durationMs: 87,
      answer: ''
    }
  ],
  pageInfo: { hasNext: true, endCursor: '98120' }
})
const replayed: WebhookReplayResponse = success(WebhookText.replayQueued, { queued: 3, through: '1207' })

/** Fastify's schema refusal, as the root error handler renders it (plugins/error-handler.ts). */
const invalidRequest = (message: string) => new RequestError.BadRequest(`Invalid request: ${message}`)
const notFound: Answer = {
  description: 'No endpoint of yours has this id: another seller\'s endpoint, an id that does not exist and one that is ' +
    'not a UUID are the same answer',
  examples: { notFound: failureExample(WebhookError.notFound(), 'Not one of your endpoints') }
}

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

  // The document's answers: the shared ones, the 503 of the routes that seal a secret, the refused URLs.
  const { 401: unauthorized, 413: tooLarge, 415: notJson, 429: rateLimited, 500: internal, 503: down } =
    commonAnswers(app.config.BODY_LIMIT_BYTES)
  const unavailable = (sealsSecret: boolean): Answer => ({
    description: (sealsSecret ? 'Webhook endpoints are not available (the operator has not set WEBHOOK_SECRETS_KEY), or ' : '') +
      'the database cannot be reached or was too slow, or the process is shedding load: nothing was done (unless the ' +
      'connection was lost at commit: read before repeating a change)',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
    examples: {
      ...(sealsSecret ? { notConfigured: failureExample(WebhookError.notConfigured(), 'WEBHOOK_SECRETS_KEY not set') } : {}),
      ...down!.examples
    }
  })
  const answers = (own: Record<number, Answer>, sealsSecret = false): Record<number, Answer> =>
    ({ 401: unauthorized!, 429: rateLimited!, 500: internal!, ...own, 503: unavailable(sealsSecret) })
  const withBody = { 413: tooLarge!, 415: notJson! }
  const production = { allowPrivateNetworks: false, requireHttps: true }
  const notHttps = await checkEndpointUrl('http://erp.example.com/hooks/orders', production)
  const privateHost = await checkEndpointUrl('https://10.0.0.5/hooks', production)
  if (notHttps === null || privateHost === null) throw new Error('the example URLs must be ones the service refuses')
  const badUrl = {
    notHttps: failureExample(WebhookError.invalidUrl(notHttps), 'Not https (production)'),
    privateHost: failureExample(WebhookError.invalidUrl(privateHost), 'A host that is (or resolves to) a private address')
  }
  const documented = { tags: ['Webhooks'], security: [{ apiKeyBearer: [] }] }

  app.post(routePath(create.path), {
    ...common,
    schema: {
      ...documented,
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description: `Up to ${MAX_ENDPOINTS} endpoints per seller. Every event of your log recorded from now on whose type is in ` +
        '`types` (left out or null: every type) is POSTed to `url`, signed the Standard Webhooks way, at least once and per ' +
        'order in order. The answer carries the endpoint\'s `secret` (`whsec_…`), shown only here: verify the deliveries ' +
        'with it. In production the URL must be https and must not resolve to a loopback, private, link-local or other ' +
        'internal address. No Idempotency-Key: list your endpoints before creating one again.',
      body: documentedBody(create.request, {
        erp: { summary: 'An ERP that wants new and cancelled orders', value: erp },
        everything: { summary: 'Every event type', value: { url: 'https://ops.example.com/webhooks' } }
      }),
      response: documentedAnswers(create, answers({
        201: {
          description: 'Created, enabled; the secret is in this answer alone',
          examples: { created: { summary: 'The ERP endpoint and its secret', value: madeOne } }
        },
        400: {
          description: 'The body does not fit the schema (url missing, an unknown event type, a control character…), or ' +
            'the URL is refused (INVALID_WEBHOOK_URL: not http(s), not https in production, credentials in it, a host ' +
            'that resolves to a private address); nothing is created',
          examples: {
            ...badUrl,
            schema: failureExample(invalidRequest('body must have required property \'url\''), 'No url'),
            invalidJson,
            tooDeep: tooDeep(MAX_JSON_DEPTH)
          }
        },
        409: {
          description: `You have ${MAX_ENDPOINTS} endpoints already: delete one first`,
          examples: { tooMany: failureExample(WebhookError.tooMany(), `The ${MAX_ENDPOINTS + 1}th endpoint`) }
        },
        ...withBody
      }, true))
    }
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
    schema: {
      ...documented,
      operationId: 'listWebhookEndpoints',
      summary: 'List your webhook endpoints',
      description: 'Every endpoint of yours, oldest first, with its status (a DISABLED one says why in disabledReason). ' +
        'Never a secret.',
      response: documentedAnswers(list, answers({
        200: {
          description: 'Your endpoints (an empty list when there are none)',
          examples: { listed: { summary: 'One enabled, one disabled after a 410', value: listed } }
        }
      }))
    }
  }, async (request) => success(WebhookText.listed, { endpoints: await listEndpoints(db, scopeOf(request)) }))

  app.patch(routePath(update.path), {
    ...common,
    schema: {
      ...documented,
      operationId: 'updateWebhookEndpoint',
      summary: 'Change, pause or enable a webhook endpoint',
      description: 'Give any of url, types, description, status (at least one). DISABLED pauses the endpoint: nothing is ' +
        'sent, and enabling it again sends what was recorded meanwhile, in order (as far as the log keeps it). ' +
        'Enabling also clears disabledReason and the count of failing days. A new URL is checked as at creation.',
      params: update.params,
      body: documentedBody(update.request, patches),
      response: documentedAnswers(update, answers({
        200: { description: 'The endpoint as it is now', examples: { paused: { summary: 'Paused by you', value: paused } } },
        400: {
          description: 'Nothing to change (INVALID_WEBHOOK_REQUEST), a body that does not fit the schema, or a refused URL',
          examples: {
            emptyPatch: failureExample(WebhookError.invalid(WebhookText.emptyPatch), 'An empty patch'),
            schema: failureExample(invalidRequest('body/status must be equal to constant, body/status must be equal to constant, ' +
              'body/status must match a schema in anyOf'), 'A status that is not ENABLED or DISABLED'),
            ...badUrl,
            invalidJson,
            tooDeep: tooDeep(MAX_JSON_DEPTH)
          }
        },
        404: notFound,
        ...withBody
      }))
    }
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
    schema: {
      ...documented,
      operationId: 'deleteWebhookEndpoint',
      summary: 'Remove a webhook endpoint',
      description: 'Removes the endpoint with its queue and its attempt log: nothing more is sent to it.',
      params: remove.params,
      response: documentedAnswers(remove, answers({
        200: { description: 'Removed', examples: { deleted: { summary: 'The ERP endpoint removed', value: removed } } },
        404: notFound
      }))
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    await deleteEndpoint(db, scopeOf(request), id)
    return success(WebhookText.deleted, { id })
  })

  app.post(routePath(rotate.path), {
    ...bodiless,
    schema: {
      ...documented,
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate a webhook endpoint\'s secret',
      description: 'A new secret, shown only in this answer. The previous one keeps signing for 24 hours (two `v1,` ' +
        'entries in webhook-signature), so a receiver can switch without losing a delivery.',
      params: rotate.params,
      response: documentedAnswers(rotate, answers({
        200: { description: 'The new secret', examples: { rotated: { summary: 'A new secret', value: rotated } } },
        404: notFound
      }, true))
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sealer = openBox()
    const rotated = await rotateSecret(db, scopeOf(request), id, sealer)
    return success(WebhookText.rotated, rotated)
  })

  app.post(routePath(test.path), {
    ...bodiless,
    schema: {
      ...documented,
      operationId: 'sendWebhookTest',
      summary: 'Send a test event to a webhook endpoint',
      description: 'Records a `webhook.test` event in your log (the feed shows it too) and sends it to this endpoint alone; ' +
        'follow it in the endpoint\'s deliveries.',
      params: test.params,
      response: documentedAnswers(test, answers({
        200: { description: 'Recorded and queued', examples: { queued: { summary: 'The test event', value: tested } } },
        404: notFound,
        409: {
          description: 'The endpoint is disabled: enable it first',
          examples: { disabled: failureExample(WebhookError.disabled(), 'A disabled endpoint') }
        }
      }))
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const sent = await db.transaction((tx) => sendTestEvent(tx, scopeOf(request), id))
    return success(WebhookText.testQueued, sent)
  })

  app.get(routePath(attempts.path), {
    ...common,
    schema: {
      ...documented,
      operationId: 'listWebhookDeliveries',
      summary: 'Read a webhook endpoint\'s delivery attempts',
      description: 'The attempt log, oldest first: each attempt\'s event, HTTP status (null: no answer), error and the first ' +
        '1 KB of the answer. Page with after = pageInfo.endCursor while hasNext; status SUCCEEDED or FAILED filters; ' +
        'limit 1 to 100 (50). Attempts are kept as long as the events are.',
      params: attempts.params,
      querystring: attempts.query,
      response: documentedAnswers(attempts, answers({
        200: {
          description: 'A page of attempts',
          examples: { page: { summary: 'A failed attempt and its successful retry', value: attemptPage } }
        },
        400: {
          description: 'A query parameter out of its range or pattern',
          examples: {
            limit: failureExample(invalidRequest('querystring/limit must match pattern "^([1-9][0-9]?|100)$"'), 'limit=0')
          }
        },
        404: notFound
      }))
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const { status, after, limit } = request.query
    const page = await listAttempts(db, scopeOf(request), id, { status: status ?? null, after: after ?? '0', limit: limit === undefined ? 50 : Number(limit) })
    return success(WebhookText.attempts, page)
  })

  app.post(routePath(replay.path), {
    ...common,
    schema: {
      ...documented,
      operationId: 'replayWebhookEvents',
      summary: 'Send events to a webhook endpoint again',
      description: `Either {"after": "<sequence>"}: the events of the endpoint's types after that sequence, up to ${MAX_REPLAY_EVENTS} ` +
        '(`through` is the last one queued: continue after it; fewer when its queue is nearly full), or {"eventIds": [...]}: up to ' +
        `${MAX_REPLAY_IDS} events by id, all of which must be in your log, else nothing is queued. Each is sent with ` +
        'its original webhook-id (a receiver that de-duplicates drops it) and behind the events of its order already queued.',
      params: replay.params,
      body: documentedBody(replay.request, {
        after: { summary: 'Everything after sequence 1204', value: { after: '1204' } },
        eventIds: { summary: 'Three events by id', value: { eventIds: [evt(1205), evt(1206), evt(1207)] } }
      }),
      response: documentedAnswers(replay, answers({
        200: { description: 'Queued', examples: { queued: { summary: 'Three events queued', value: replayed } } },
        400: {
          description: 'An event id not in your log (EVENT_NOT_FOUND: nothing is queued), or a body that is not one of the ' +
            'two forms',
          examples: {
            eventNotFound: failureExample(WebhookError.eventNotFound(evt(999999)), 'An event that is not in the log'),
            schema: failureExample(invalidRequest('body must have required property \'after\', body must have required ' +
              'property \'eventIds\', body must match a schema in anyOf'), 'Neither after nor eventIds'),
            invalidJson,
            tooDeep: tooDeep(MAX_JSON_DEPTH)
          }
        },
        404: notFound,
        409: {
          description: 'A replay of this endpoint is still pending (WEBHOOK_REPLAY_PENDING: one at a time), or it would take ' +
            `the endpoint past ${MAX_PENDING_DELIVERIES} deliveries pending (WEBHOOK_QUEUE_FULL; a replay after a sequence ` +
            'queues what fits instead, and is refused only when nothing does); nothing is queued',
          examples: {
            replayPending: failureExample(WebhookError.replayPending(), 'The previous replay still being delivered'),
            queueFull: failureExample(WebhookError.queueFull(MAX_PENDING_DELIVERIES), 'A full queue')
          }
        },
        ...withBody
      }))
    }
  }, async (request) => {
    const id = endpointId(request.params.id)
    const replayed = await db.transaction((tx) => replayEvents(tx, scopeOf(request), id, request.body))
    return success(WebhookText.replayQueued, replayed)
  })
}

export default webhookEndpointRoutes
