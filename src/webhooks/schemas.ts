import { Type, type Static } from '@sinclair/typebox'
import { EVENT_TYPES } from '../events/event-types.js'
import { MAX_REPLAY_IDS } from './texts.js'

/*
 * The webhook endpoints' requests and answers (REST /v2/webhooks/endpoints). Fastify validates the
 * requests with these before a handler runs; the URL is further checked where it resolves (address-policy.ts).
 */

export const EventTypeSchema = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)), {
  title: 'WebhookEventType', description: 'An event type'
})

/** Printable text: no control characters (a description ends up in logs and UIs). */
// (A lone UTF-16 surrogate is refused too: it cannot be stored as UTF-8, and would come back as U+FFFD.)
const PRINTABLE = '^[^\\u0000-\\u001f\\u007f\\ud800-\\udfff]*$'

const Url = Type.String({ minLength: 1, maxLength: 2000, pattern: PRINTABLE, description: 'https:// URL the events are POSTed to' })
const Types = Type.Union([
  Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true }),
  Type.Null()
], {
  description: 'The event types sent; null or left out: every type'
})
const Description = Type.String({ maxLength: 500, pattern: PRINTABLE })
const Status = Type.Union([Type.Literal('ENABLED'), Type.Literal('DISABLED')])

export const CreateEndpointSchema = Type.Object({
  url: Url,
  types: Type.Optional(Types),
  description: Type.Optional(Description)
}, { additionalProperties: false, title: 'WebhookEndpointCreate' })
export type CreateEndpoint = Static<typeof CreateEndpointSchema>

export const PatchEndpointSchema = Type.Object({
  url: Type.Optional(Url),
  types: Type.Optional(Types),
  description: Type.Optional(Description),
  status: Type.Optional(Status)
}, { additionalProperties: false, title: 'WebhookEndpointPatch' })
export type PatchEndpoint = Static<typeof PatchEndpointSchema>

export const EndpointSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  types: Type.Union([Type.Array(EventTypeSchema), Type.Null()]),
  description: Type.String(),
  status: Status,
  disabledReason: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String()
}, { title: 'WebhookEndpoint' })

export const CreatedEndpointSchema = Type.Composite([EndpointSchema, Type.Object({
  secret: Type.String({ description: 'whsec_… : shown only in this answer; verify deliveries with it' })
})], { title: 'WebhookEndpointCreated' })

export const EndpointParamsSchema = Type.Object({
  id: Type.String({ maxLength: 100, description: 'The endpoint\'s id (a UUID, as created)' })
}, { title: 'WebhookEndpointParams' })

export const AttemptQuerySchema = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('SUCCEEDED'), Type.Literal('FAILED')])),
  after: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,17})$', description: 'An attempt id (endCursor)' })),
  // A query string is text and the app does not coerce types: the digits are checked here, the route makes the number.
  limit: Type.Optional(Type.String({ pattern: '^([1-9][0-9]?|100)$', description: '1 to 100 (default 50)' }))
}, { additionalProperties: false, title: 'WebhookAttemptQuery' })

export const AttemptSchema = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  type: EventTypeSchema,
  attempt: Type.Integer(),
  attemptedAt: Type.String(),
  succeeded: Type.Boolean(),
  httpStatus: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  durationMs: Type.Integer(),
  answer: Type.String({ description: 'The first 1 KB of the answer' })
}, { title: 'WebhookAttempt' })

export const AttemptPageSchema = Type.Object({
  attempts: Type.Array(AttemptSchema),
  pageInfo: Type.Object({ hasNext: Type.Boolean(), endCursor: Type.String() })
}, { title: 'WebhookAttemptPage' })

export const ReplaySchema = Type.Union([
  Type.Object({
    after: Type.String({ pattern: '^(0|[1-9][0-9]{0,17})$', description: 'An event sequence: the events after it' })
  }, { additionalProperties: false, title: 'WebhookReplayAfter' }),
  Type.Object({
    eventIds: Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: MAX_REPLAY_IDS, uniqueItems: true })
  }, { additionalProperties: false, title: 'WebhookReplayEventIds' })
], { title: 'WebhookReplay' })

export const ReplayResultSchema = Type.Object({
  queued: Type.Integer(),
  through: Type.Union([Type.String(), Type.Null()], { description: 'The last sequence queued: continue after it' })
}, { title: 'WebhookReplayResult' })

export const TestResultSchema = Type.Object({ eventId: Type.String(), sequence: Type.String() }, { title: 'WebhookTestResult' })

export const EndpointListSchema = Type.Object({ endpoints: Type.Array(EndpointSchema) }, { title: 'WebhookEndpointList' })

export const DeletedEndpointSchema = Type.Object({ id: Type.String() }, { title: 'WebhookEndpointDeleted' })

export const RotatedSecretSchema = Type.Object({
  secret: Type.String({ description: 'whsec_… : the new secret; the previous one also signs for 24 hours' })
}, { title: 'WebhookSecretRotated' })
