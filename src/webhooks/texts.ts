import { requestError } from '../errors.js'

/*
 * The webhook endpoints' texts and codes, each written once (docs/api/webhooks.md lists them).
 * Another seller's endpoint and an id that does not exist read the same: no leak.
 */

export const MAX_ENDPOINTS = 10
export const MAX_REPLAY_EVENTS = 10_000
export const MAX_REPLAY_IDS = 1_000
/**
 * At most this many deliveries pending per endpoint: a replay that would go past it is refused (a replay
 * `after` a sequence queues what fits and says where to continue), and dispatch queues no more new events
 * for the endpoint until its queue drains (dispatch.ts). A test event always goes.
 */
export const MAX_PENDING_DELIVERIES = 10_000

export const WebhookText = {
  created: 'Webhook endpoint created: keep the secret, it is shown only this once',
  listed: 'Webhook endpoints listed',
  updated: 'Webhook endpoint updated',
  deleted: 'Webhook endpoint deleted',
  rotated: 'Webhook secret rotated: the previous secret also signs for 24 hours',
  testQueued: 'Test event queued for delivery',
  attempts: 'Delivery attempts listed',
  replayQueued: 'Events queued for delivery again',
  notFound: 'Webhook endpoint not found',
  tooMany: `A seller may have at most ${MAX_ENDPOINTS} webhook endpoints: delete one first`,
  disabled: 'The webhook endpoint is disabled: enable it (PATCH status ENABLED) before sending to it',
  notConfigured: 'Webhook endpoints are not available: the operator has not set WEBHOOK_SECRETS_KEY',
  emptyPatch: 'Nothing to change: give at least one of url, types, description, status',
  replayOneOf: 'Give either after (an event sequence) or eventIds (event ids), not both and not neither',
  replayPending: 'A replay of this endpoint is still being delivered: wait until its events are delivered or given up ' +
    '(GET …/deliveries shows the attempts), then replay again',
  queueFull: (pending: number) => `The endpoint has ${pending} deliveries pending and may have at most ` +
    `${MAX_PENDING_DELIVERIES}: wait until they are delivered (fix the endpoint if it keeps failing), or replay fewer events`,
  eventNotFound: (id: string) => `Event ${JSON.stringify(id.slice(0, 80))} not found in this seller's event log (or no longer kept)`,
  control: (field: string) => `${field} must not contain control characters`
} as const

export const WebhookCode = {
  notFound: 'WEBHOOK_ENDPOINT_NOT_FOUND',
  tooMany: 'TOO_MANY_WEBHOOK_ENDPOINTS',
  disabled: 'WEBHOOK_ENDPOINT_DISABLED',
  notConfigured: 'WEBHOOKS_NOT_CONFIGURED',
  invalidUrl: 'INVALID_WEBHOOK_URL',
  invalidRequest: 'INVALID_WEBHOOK_REQUEST',
  eventNotFound: 'EVENT_NOT_FOUND',
  replayPending: 'WEBHOOK_REPLAY_PENDING',
  queueFull: 'WEBHOOK_QUEUE_FULL'
} as const

export const WebhookError = {
  notFound: () => requestError(404, WebhookCode.notFound, WebhookText.notFound),
  tooMany: () => requestError(409, WebhookCode.tooMany, WebhookText.tooMany),
  disabled: () => requestError(409, WebhookCode.disabled, WebhookText.disabled),
  notConfigured: () => requestError(503, WebhookCode.notConfigured, WebhookText.notConfigured),
  invalidUrl: (message: string) => requestError(400, WebhookCode.invalidUrl, message),
  invalid: (message: string) => requestError(400, WebhookCode.invalidRequest, message),
  eventNotFound: (id: string) => requestError(400, WebhookCode.eventNotFound, WebhookText.eventNotFound(id)),
  replayPending: () => requestError(409, WebhookCode.replayPending, WebhookText.replayPending),
  queueFull: (pending: number) => requestError(409, WebhookCode.queueFull, WebhookText.queueFull(pending))
} as const
