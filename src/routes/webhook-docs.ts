import type { Config } from '../config.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { RequestError } from '../errors.js'
import { checkEndpointUrl } from '../outbound/address-policy.js'
import { created, success } from '../rest-envelope.js'
import type { CreateEndpoint, PatchEndpoint } from '../webhooks/schemas.js'
import { MAX_ENDPOINTS, MAX_PENDING_DELIVERIES, MAX_REPLAY_EVENTS, MAX_REPLAY_IDS, WebhookError, WebhookText } from '../webhooks/texts.js'
import type {
  WebhookAttemptPageResponse, WebhookEndpointCreatedResponse, WebhookEndpointDeletedResponse,
  WebhookEndpointListResponse, WebhookEndpointResponse, WebhookReplayResponse, WebhookSecretRotatedResponse,
  WebhookTestResponse
} from './rest-contract.js'
import { commonResponses, failureExample, type EndpointDoc, type ResponseDoc } from './rest-docs.js'

/*
 * What the OpenAPI document says about the seller's webhook endpoints (docs/api/webhooks.md) beyond
 * their schemas. The examples are the docs' (an ERP endpoint for order.placed and order.cancelled), built
 * from the feature's own texts (webhooks/texts.ts, the address policy's refusals) and typed against the
 * routes' answers. These routes take no Idempotency-Key: a replayed creation would have to store the secret.
 */

type WebhookDocs = Record<
  'webhookEndpointCreate' | 'webhookEndpointList' | 'webhookEndpointUpdate' | 'webhookEndpointDelete' |
  'webhookSecretRotate' | 'webhookTest' | 'webhookAttemptList' | 'webhookReplay', EndpointDoc
>

const ID = '3f0c6a8e-2b4d-4e1f-9a7c-5d2e8b1f0c64'
const OTHER_ID = '8d2b1e47-9c3a-4f6e-b5d0-1a7c9e3f2b85'
const SELLER = 101
const evt = (sequence: number): string => `evt_${SELLER}_${sequence}`

/** Fastify's schema refusal, as the root error handler renders it (plugins/error-handler.ts). */
const invalidRequest = (message: string) => new RequestError.BadRequest(`Invalid request: ${message}`)

export async function webhookDocs (config: Config): Promise<WebhookDocs> {
  const common = commonResponses(config.BODY_LIMIT_BYTES)
  const { 401: unauthorized, 413: tooLarge, 415: notJson, 429: rateLimited, 500: internal } = common
  const policy = { allowPrivateNetworks: false, requireHttps: true }
  const notHttps = await checkEndpointUrl('http://erp.example.com/hooks/orders', policy)
  const privateHost = await checkEndpointUrl('https://10.0.0.5/hooks', policy)
  if (notHttps === null || privateHost === null) throw new Error('the example URLs must be ones the service refuses')

  const erp: CreateEndpoint = {
    url: 'https://erp.example.com/hooks/orders', types: ['order.placed', 'order.cancelled'], description: 'ERP'
  }
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
      id: OTHER_ID,
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
  const rotated: WebhookSecretRotatedResponse = success(WebhookText.rotated, {
    secret: 'whsec_dGhlIG5ldyBvbmU7IHRoZSBvbGQgc2lnbnMgMjQgaC4='
  })
  const tested: WebhookTestResponse = success(WebhookText.testQueued, { eventId: evt(1208), sequence: '1208' })
  const attempts: WebhookAttemptPageResponse = success(WebhookText.attempts, {
    attempts: [
      {
        id: '98113',
        eventId: evt(1201),
        type: 'order.placed',
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
        eventId: evt(1201),
        type: 'order.placed',
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

  const notFound: ResponseDoc = {
    description: 'No endpoint of yours has this id: another seller\'s endpoint, an id that does not exist and one that is ' +
      'not a UUID are the same answer',
    examples: { notFound: failureExample(WebhookError.notFound(), 'Not one of your endpoints') }
  }
  /** Every route's 503; those that seal a secret also refuse when the operator has not set the key for it. */
  const unavailable = (sealsSecret: boolean): ResponseDoc => ({
    description: (sealsSecret ? 'Webhook endpoints are not available (the operator has not set WEBHOOK_SECRETS_KEY), or ' : '') +
      'the database cannot be reached or was too slow, or the process is shedding load: nothing was done (unless the ' +
      'connection was lost at commit: read before repeating a change)',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } } },
    examples: {
      ...(sealsSecret ? { notConfigured: failureExample(WebhookError.notConfigured(), 'WEBHOOK_SECRETS_KEY not set') } : {}),
      ...common[503]!.examples
    }
  })
  const badUrl = {
    notHttps: failureExample(WebhookError.invalidUrl(notHttps), 'Not https (production)'),
    privateHost: failureExample(WebhookError.invalidUrl(privateHost), 'A host that is (or resolves to) a private address')
  }
  const invalidJson = failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON')
  const tooDeep = failureExample(new RequestError.JsonTooDeep(MAX_JSON_DEPTH), `Arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`)
  const answers = (own: Record<number, ResponseDoc>, sealsSecret = false): Record<number, ResponseDoc> =>
    ({ 401: unauthorized!, 429: rateLimited!, 500: internal!, ...own, 503: unavailable(sealsSecret) })
  const withBody = { 413: tooLarge!, 415: notJson! }

  return {
    webhookEndpointCreate: {
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description: `Up to ${MAX_ENDPOINTS} endpoints per seller. Every event of your log recorded from now on whose type is in ` +
        '`types` (left out or null: every type) is POSTed to `url`, signed the Standard Webhooks way, at least once and per ' +
        'order in order. The answer carries the endpoint\'s `secret` (`whsec_…`), shown only here: verify the deliveries ' +
        'with it. In production the URL must be https and must not resolve to a loopback, private, link-local or other ' +
        'internal address. No Idempotency-Key: list your endpoints before creating one again.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {
        erp: { summary: 'An ERP that wants new and cancelled orders', value: erp },
        everything: { summary: 'Every event type', value: { url: 'https://ops.example.com/webhooks' } }
      },
      responses: answers({
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
            tooDeep
          }
        },
        409: {
          description: `You have ${MAX_ENDPOINTS} endpoints already: delete one first`,
          examples: { tooMany: failureExample(WebhookError.tooMany(), `The ${MAX_ENDPOINTS + 1}th endpoint`) }
        },
        ...withBody
      }, true)
    },
    webhookEndpointList: {
      operationId: 'listWebhookEndpoints',
      summary: 'List your webhook endpoints',
      description: 'Every endpoint of yours, oldest first, with its status (a DISABLED one says why in disabledReason). ' +
        'Never a secret.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {},
      responses: answers({
        200: {
          description: 'Your endpoints (an empty list when there are none)',
          examples: { listed: { summary: 'One enabled, one disabled after a 410', value: listed } }
        }
      })
    },
    webhookEndpointUpdate: {
      operationId: 'updateWebhookEndpoint',
      summary: 'Change, pause or enable a webhook endpoint',
      description: 'Give any of url, types, description, status (at least one). DISABLED pauses the endpoint: nothing is ' +
        'sent, and enabling it again sends what was recorded meanwhile, in order (as far as the log keeps it). ' +
        'Enabling also clears disabledReason and the count of failing days. A new URL is checked as at creation.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: patches,
      responses: answers({
        200: {
          description: 'The endpoint as it is now',
          examples: { paused: { summary: 'Paused by you', value: paused } }
        },
        400: {
          description: 'Nothing to change (INVALID_WEBHOOK_REQUEST), a body that does not fit the schema, or a refused URL',
          examples: {
            emptyPatch: failureExample(WebhookError.invalid(WebhookText.emptyPatch), 'An empty patch'),
            schema: failureExample(invalidRequest('body/status must be equal to constant, body/status must be equal to constant, ' +
              'body/status must match a schema in anyOf'), 'A status that is not ENABLED or DISABLED'),
            ...badUrl,
            invalidJson,
            tooDeep
          }
        },
        404: notFound,
        ...withBody
      })
    },
    webhookEndpointDelete: {
      operationId: 'deleteWebhookEndpoint',
      summary: 'Remove a webhook endpoint',
      description: 'Removes the endpoint with its queue and its attempt log: nothing more is sent to it.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {},
      responses: answers({
        200: { description: 'Removed', examples: { deleted: { summary: 'The ERP endpoint removed', value: removed } } },
        404: notFound
      })
    },
    webhookSecretRotate: {
      operationId: 'rotateWebhookSecret',
      summary: 'Rotate a webhook endpoint\'s secret',
      description: 'A new secret, shown only in this answer. The previous one keeps signing for 24 hours (two `v1,` ' +
        'entries in webhook-signature), so a receiver can switch without losing a delivery.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {},
      responses: answers({
        200: { description: 'The new secret', examples: { rotated: { summary: 'A new secret', value: rotated } } },
        404: notFound
      }, true)
    },
    webhookTest: {
      operationId: 'sendWebhookTest',
      summary: 'Send a test event to a webhook endpoint',
      description: 'Records a `webhook.test` event in your log (the feed shows it too) and sends it to this endpoint alone; ' +
        'follow it in the endpoint\'s deliveries.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {},
      responses: answers({
        200: { description: 'Recorded and queued', examples: { queued: { summary: 'The test event', value: tested } } },
        404: notFound,
        409: {
          description: 'The endpoint is disabled: enable it first',
          examples: { disabled: failureExample(WebhookError.disabled(), 'A disabled endpoint') }
        }
      })
    },
    webhookAttemptList: {
      operationId: 'listWebhookDeliveries',
      summary: 'Read a webhook endpoint\'s delivery attempts',
      description: 'The attempt log, oldest first: each attempt\'s event, HTTP status (null: no answer), error and the first ' +
        '1 KB of the answer. Page with after = pageInfo.endCursor while hasNext; status SUCCEEDED or FAILED filters; ' +
        'limit 1 to 100 (50). Attempts are kept as long as the events are.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {},
      responses: answers({
        200: {
          description: 'A page of attempts',
          examples: { page: { summary: 'A failed attempt and its successful retry', value: attempts } }
        },
        400: {
          description: 'A query parameter out of its range or pattern',
          examples: {
            limit: failureExample(invalidRequest('querystring/limit must match pattern "^([1-9][0-9]?|100)$"'), 'limit=0')
          }
        },
        404: notFound
      })
    },
    webhookReplay: {
      operationId: 'replayWebhookEvents',
      summary: 'Send events to a webhook endpoint again',
      description: `Either {"after": "<sequence>"}: the events of the endpoint's types after that sequence, up to ${MAX_REPLAY_EVENTS} ` +
        '(`through` is the last one queued: continue after it; fewer when its queue is nearly full), or {"eventIds": [...]}: up to ' +
        `${MAX_REPLAY_IDS} events by id, all of which must be in your log, else nothing is queued. Each is sent with ` +
        'its original webhook-id (a receiver that de-duplicates drops it) and behind the events of its order already queued.',
      tag: 'Webhooks',
      security: 'apiKeyBearer',
      requestExamples: {
        after: { summary: 'Everything after sequence 1204', value: { after: '1204' } },
        eventIds: { summary: 'Three events by id', value: { eventIds: [evt(1205), evt(1206), evt(1207)] } }
      },
      responses: answers({
        200: { description: 'Queued', examples: { queued: { summary: 'Three events queued', value: replayed } } },
        400: {
          description: 'An event id not in your log (EVENT_NOT_FOUND: nothing is queued), or a body that is not one of the ' +
            'two forms',
          examples: {
            eventNotFound: failureExample(WebhookError.eventNotFound(evt(999999)), 'An event that is not in the log'),
            schema: failureExample(invalidRequest('body must have required property \'after\', body must have required ' +
              'property \'eventIds\', body must match a schema in anyOf'), 'Neither after nor eventIds'),
            invalidJson,
            tooDeep
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
      })
    }
  }
}
