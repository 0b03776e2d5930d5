import { Type, type Static, type TSchema } from '@sinclair/typebox'
import {
  PlatformBatchDataSchema, PlatformCatalogueRequestSchema, PlatformDealsRequestSchema, PlatformPointsRequestSchema,
  PlatformRetailersRequestSchema, PlatformSellersRequestSchema
} from '../platform/schemas.js'
import { PlatformOrdersRequestSchema } from '../platform/order-schemas.js'
import {
  LedgerListQuerySchema, LedgerPageSchema, LedgerParamsSchema, PayoutListQuerySchema, PayoutPageSchema,
  RefundListQuerySchema, RefundPageSchema, SettleRequestSchema
} from '../money/schemas.js'
import { MAX_SYNC_ROWS, SyncDataSchema, SyncRequestSchema } from '../shipments/schemas.js'
import { MAX_REFERENCE_ROWS, ReferencesDataSchema, ReferencesRequestSchema } from '../references/schemas.js'
import {
  BatchDataSchema, MAX_ITEMS, PlatformStatusUpdateItemSchema, StatusUpdateItemSchema
} from '../status-update/schemas.js'
import {
  AttemptPageSchema, AttemptQuerySchema, CreatedEndpointSchema, CreateEndpointSchema, DeletedEndpointSchema,
  EndpointListSchema, EndpointParamsSchema, EndpointSchema, PatchEndpointSchema, ReplayResultSchema, ReplaySchema,
  RotatedSecretSchema, TestResultSchema
} from '../webhooks/schemas.js'
import { CreatedEnvelope, FailureEnvelope, FailureEnvelopeWithData, SuccessEnvelope } from '../rest-envelope.js'

/*
 * The REST contract in one place: each endpoint's method, path (with its parameters), query string, request
 * body and answers as TypeBox schemas.
 * The routes take their paths and response schemas from here; `npm run generate` writes them to
 * schema/rest.json (the working REST schema the schema gate compares with schema/published/) and to the
 * client package's types (packages/client/src/generated/rest.ts). Static<> types for TypeScript callers
 * in this repository (tests, bench) are exported beside them.
 */

export const STATUS_UPDATE_PATH = '/v2/accounting/orders/update-status'
export const SYNC_PATH = '/v2/shipments/outstanding/sync-data'
export const REFERENCES_SYNC_PATH = '/v2/references/sync-data'
export const PLATFORM_SELLERS_PATH = '/v2/platform/sellers'
export const PLATFORM_POINTS_PATH = '/v2/platform/sellers/points'
export const PLATFORM_ORDERS_PATH = '/v2/platform/orders'
export const PLATFORM_ORDER_STATUS_PATH = '/v2/platform/orders/update-status'
export const PLATFORM_RETAILERS_PATH = '/v2/platform/retailers'
export const PLATFORM_CATALOGUE_PATH = '/v2/platform/catalogue'
export const PLATFORM_DEALS_PATH = '/v2/platform/deals'
export const PLATFORM_REFUNDS_PATH = '/v2/platform/refunds'
export const PLATFORM_REFUNDS_SETTLE_PATH = '/v2/platform/refunds/settle'
export const PLATFORM_PAYOUTS_PATH = '/v2/platform/payouts'
export const PLATFORM_PAYOUTS_SETTLE_PATH = '/v2/platform/payouts/settle'
/** One seller's points ledger: a path parameter, written as OpenAPI writes it (routePath() for Fastify). */
export const PLATFORM_LEDGER_PATH = '/v2/platform/sellers/{companyId}/ledger'
export const WEBHOOK_ENDPOINTS_PATH = '/v2/webhooks/endpoints'
/** One of the seller's webhook endpoints: a path parameter, written as OpenAPI writes it (routePath() for Fastify). */
export const WEBHOOK_ENDPOINT_PATH = `${WEBHOOK_ENDPOINTS_PATH}/{id}`

export const StatusUpdateRequestSchema = Type.Object({
  order_status: Type.Array(StatusUpdateItemSchema, { minItems: 1, maxItems: MAX_ITEMS })
}, { title: 'StatusUpdateRequest', description: `A batch of 1 to ${MAX_ITEMS} status changes, each order independent` })
export type StatusUpdateRequest = Static<typeof StatusUpdateRequestSchema>

export const PlatformStatusUpdateRequestSchema = Type.Object({
  order_status: Type.Array(PlatformStatusUpdateItemSchema, { minItems: 1, maxItems: MAX_ITEMS })
}, {
  title: 'PlatformStatusUpdateRequest',
  description: `1 to ${MAX_ITEMS} orders of any seller moved to CANCELLED or DELIVERED, each independent`
})
export type PlatformStatusUpdateRequest = Static<typeof PlatformStatusUpdateRequestSchema>

export const StatusUpdateResponseSchema = Type.Composite([SuccessEnvelope(BatchDataSchema)], {
  title: 'StatusUpdateResponse', description: 'The batch was processed; per-order failures are in data.errors'
})
export type StatusUpdateResponse = Static<typeof StatusUpdateResponseSchema>

export const StatusUpdateInvalidStatusResponseSchema = Type.Composite([FailureEnvelopeWithData(BatchDataSchema)], {
  title: 'StatusUpdateInvalidStatusResponse',
  description: 'An item asked for a status that is not one of the three: a 400 that still reports every item'
})

export const RequestFailureSchema = Type.Composite([FailureEnvelope], {
  title: 'RequestFailure', description: 'A request-level failure: no data; message says what was wrong'
})
export type RequestFailure = Static<typeof RequestFailureSchema>

export const SyncResponseSchema = Type.Composite([SuccessEnvelope(SyncDataSchema)], {
  title: 'SyncResponse', description: 'Every row was processed; bad rows are in data.errors by index'
})
export type SyncResponse = Static<typeof SyncResponseSchema>

export const ReferencesResponseSchema = Type.Composite([SuccessEnvelope(ReferencesDataSchema)], {
  title: 'ReferencesResponse', description: 'Every row was processed; refused rows are in data.errors by index'
})
export type ReferencesResponse = Static<typeof ReferencesResponseSchema>

export const PlatformBatchResponseSchema = Type.Composite([SuccessEnvelope(PlatformBatchDataSchema)], {
  title: 'PlatformBatchResponse',
  description: 'Every row was processed: inserted, updated or unchanged, or refused and listed in data.errors by index'
})
export type PlatformBatchResponse = Static<typeof PlatformBatchResponseSchema>

export const RefundPageResponseSchema = Type.Composite([SuccessEnvelope(RefundPageSchema)], {
  title: 'RefundPageResponse', description: 'A page of refunds, oldest first'
})
export type RefundPageResponse = Static<typeof RefundPageResponseSchema>

export const PayoutPageResponseSchema = Type.Composite([SuccessEnvelope(PayoutPageSchema)], {
  title: 'PayoutPageResponse', description: 'A page of payouts, oldest first'
})
export type PayoutPageResponse = Static<typeof PayoutPageResponseSchema>

export const LedgerPageResponseSchema = Type.Composite([SuccessEnvelope(LedgerPageSchema)], {
  title: 'LedgerPageResponse', description: 'A page of a seller\'s points entries, oldest first'
})
export type LedgerPageResponse = Static<typeof LedgerPageResponseSchema>

export const WebhookEndpointCreatedResponseSchema = Type.Composite([CreatedEnvelope(CreatedEndpointSchema)], {
  title: 'WebhookEndpointCreatedResponse', description: 'The endpoint was created; its secret is in this answer alone'
})
export type WebhookEndpointCreatedResponse = Static<typeof WebhookEndpointCreatedResponseSchema>

export const WebhookEndpointListResponseSchema = Type.Composite([SuccessEnvelope(EndpointListSchema)], {
  title: 'WebhookEndpointListResponse', description: 'The seller\'s webhook endpoints, oldest first (never a secret)'
})
export type WebhookEndpointListResponse = Static<typeof WebhookEndpointListResponseSchema>

export const WebhookEndpointResponseSchema = Type.Composite([SuccessEnvelope(EndpointSchema)], {
  title: 'WebhookEndpointResponse', description: 'The endpoint as it is now'
})
export type WebhookEndpointResponse = Static<typeof WebhookEndpointResponseSchema>

export const WebhookEndpointDeletedResponseSchema = Type.Composite([SuccessEnvelope(DeletedEndpointSchema)], {
  title: 'WebhookEndpointDeletedResponse', description: 'The endpoint was removed with its queue and attempt log'
})
export type WebhookEndpointDeletedResponse = Static<typeof WebhookEndpointDeletedResponseSchema>

export const WebhookSecretRotatedResponseSchema = Type.Composite([SuccessEnvelope(RotatedSecretSchema)], {
  title: 'WebhookSecretRotatedResponse', description: 'A new secret; the previous one also signs for 24 hours'
})
export type WebhookSecretRotatedResponse = Static<typeof WebhookSecretRotatedResponseSchema>

export const WebhookTestResponseSchema = Type.Composite([SuccessEnvelope(TestResultSchema)], {
  title: 'WebhookTestResponse', description: 'A webhook.test event was recorded and queued for this endpoint alone'
})
export type WebhookTestResponse = Static<typeof WebhookTestResponseSchema>

export const WebhookAttemptPageResponseSchema = Type.Composite([SuccessEnvelope(AttemptPageSchema)], {
  title: 'WebhookAttemptPageResponse', description: 'A page of the endpoint\'s attempt log, oldest first'
})
export type WebhookAttemptPageResponse = Static<typeof WebhookAttemptPageResponseSchema>

export const WebhookReplayResponseSchema = Type.Composite([SuccessEnvelope(ReplayResultSchema)], {
  title: 'WebhookReplayResponse', description: 'The events were queued for this endpoint again'
})
export type WebhookReplayResponse = Static<typeof WebhookReplayResponseSchema>

export interface Endpoint {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** As OpenAPI writes it: a path parameter in braces (/v2/webhooks/endpoints/{id}); routePath() gives Fastify's. */
  path: string
  /** The path parameters, one property each; absent: the path has none. */
  params?: TSchema
  /** The query string's parameters; absent: the endpoint reads none. */
  query?: TSchema
  /** The JSON body; absent: the endpoint reads none. */
  request?: TSchema
  responses: Record<number, TSchema>
}

/** A contract path as Fastify routes it: /v2/webhooks/endpoints/{id} → /v2/webhooks/endpoints/:id. */
export function routePath (path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1')
}

/** What both endpoints may answer besides their own 200 and 400 (errors.ts RequestError). */
const requestFailures = {
  401: RequestFailureSchema,
  405: RequestFailureSchema,
  409: RequestFailureSchema,
  413: RequestFailureSchema,
  415: RequestFailureSchema,
  422: RequestFailureSchema,
  429: RequestFailureSchema,
  500: RequestFailureSchema,
  503: RequestFailureSchema
}

/**
 * What every webhook endpoint route may answer besides its own success (errors.ts, webhooks/texts.ts
 * WebhookError): the set is shared, so a later route cannot answer a status a client did not expect; each
 * route's OpenAPI entry says which of them it gives, and when. No 422: these routes take no Idempotency-Key.
 */
const webhookFailures = {
  400: RequestFailureSchema,
  401: RequestFailureSchema,
  404: RequestFailureSchema,
  405: RequestFailureSchema,
  409: RequestFailureSchema,
  413: RequestFailureSchema,
  415: RequestFailureSchema,
  429: RequestFailureSchema,
  500: RequestFailureSchema,
  503: RequestFailureSchema
}

/**
 * A webhook endpoint route's entry: what is its own (method, path, parameters, body, its one success
 * answer) and then webhookFailures, so no route can leave out a failure or add one of its own. The keys
 * come in the order the other entries write them: schema/rest.json lists them so.
 */
/** What a finance list (GET, no body) may answer besides its page. */
const listFailures = {
  400: RequestFailureSchema,
  401: RequestFailureSchema,
  429: RequestFailureSchema,
  500: RequestFailureSchema,
  503: RequestFailureSchema
}

function webhookRoute<Own extends Omit<Endpoint, 'responses'>, Answer extends Record<number, TSchema>> (
  own: Own, answer: Answer
): Own & { responses: Answer & typeof webhookFailures } {
  return { ...own, responses: { ...answer, ...webhookFailures } }
}

/** Every REST endpoint of /v2 (the GraphQL endpoint's contract is schema.graphql). */
export const restEndpoints = {
  statusUpdate: {
    method: 'POST',
    path: STATUS_UPDATE_PATH,
    request: StatusUpdateRequestSchema,
    responses: {
      200: StatusUpdateResponseSchema,
      400: Type.Union([StatusUpdateInvalidStatusResponseSchema, RequestFailureSchema]),
      ...requestFailures
    }
  },
  shipmentSync: {
    method: 'PUT',
    path: SYNC_PATH,
    request: SyncRequestSchema,
    responses: { 200: SyncResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  referencesSync: {
    method: 'PUT',
    path: REFERENCES_SYNC_PATH,
    request: ReferencesRequestSchema,
    responses: { 200: ReferencesResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformSellers: {
    method: 'PUT',
    path: PLATFORM_SELLERS_PATH,
    request: PlatformSellersRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformPoints: {
    method: 'POST',
    path: PLATFORM_POINTS_PATH,
    request: PlatformPointsRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformOrders: {
    method: 'POST',
    path: PLATFORM_ORDERS_PATH,
    request: PlatformOrdersRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformOrderStatus: {
    method: 'POST',
    path: PLATFORM_ORDER_STATUS_PATH,
    request: PlatformStatusUpdateRequestSchema,
    responses: {
      200: StatusUpdateResponseSchema,
      400: Type.Union([StatusUpdateInvalidStatusResponseSchema, RequestFailureSchema]),
      ...requestFailures
    }
  },
  platformRetailers: {
    method: 'PUT',
    path: PLATFORM_RETAILERS_PATH,
    request: PlatformRetailersRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformCatalogue: {
    method: 'PUT',
    path: PLATFORM_CATALOGUE_PATH,
    request: PlatformCatalogueRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformDeals: {
    method: 'PUT',
    path: PLATFORM_DEALS_PATH,
    request: PlatformDealsRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformRefunds: {
    method: 'GET',
    path: PLATFORM_REFUNDS_PATH,
    query: RefundListQuerySchema,
    responses: { 200: RefundPageResponseSchema, ...listFailures }
  },
  platformPayouts: {
    method: 'GET',
    path: PLATFORM_PAYOUTS_PATH,
    query: PayoutListQuerySchema,
    responses: { 200: PayoutPageResponseSchema, ...listFailures }
  },
  platformLedger: {
    method: 'GET',
    path: PLATFORM_LEDGER_PATH,
    params: LedgerParamsSchema,
    query: LedgerListQuerySchema,
    responses: { 200: LedgerPageResponseSchema, 404: RequestFailureSchema, ...listFailures }
  },
  platformRefundsSettle: {
    method: 'POST',
    path: PLATFORM_REFUNDS_SETTLE_PATH,
    request: SettleRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  platformPayoutsSettle: {
    method: 'POST',
    path: PLATFORM_PAYOUTS_SETTLE_PATH,
    request: SettleRequestSchema,
    responses: { 200: PlatformBatchResponseSchema, 400: RequestFailureSchema, ...requestFailures }
  },
  webhookEndpointCreate: webhookRoute(
    { method: 'POST', path: WEBHOOK_ENDPOINTS_PATH, request: CreateEndpointSchema },
    { 201: WebhookEndpointCreatedResponseSchema }
  ),
  webhookEndpointList: webhookRoute(
    { method: 'GET', path: WEBHOOK_ENDPOINTS_PATH },
    { 200: WebhookEndpointListResponseSchema }
  ),
  webhookEndpointUpdate: webhookRoute(
    { method: 'PATCH', path: WEBHOOK_ENDPOINT_PATH, params: EndpointParamsSchema, request: PatchEndpointSchema },
    { 200: WebhookEndpointResponseSchema }
  ),
  webhookEndpointDelete: webhookRoute(
    { method: 'DELETE', path: WEBHOOK_ENDPOINT_PATH, params: EndpointParamsSchema },
    { 200: WebhookEndpointDeletedResponseSchema }
  ),
  webhookSecretRotate: webhookRoute(
    { method: 'POST', path: `${WEBHOOK_ENDPOINT_PATH}/rotate-secret`, params: EndpointParamsSchema },
    { 200: WebhookSecretRotatedResponseSchema }
  ),
  webhookTest: webhookRoute(
    { method: 'POST', path: `${WEBHOOK_ENDPOINT_PATH}/test`, params: EndpointParamsSchema },
    { 200: WebhookTestResponseSchema }
  ),
  webhookAttemptList: webhookRoute(
    {
      method: 'GET', path: `${WEBHOOK_ENDPOINT_PATH}/deliveries`, params: EndpointParamsSchema, query: AttemptQuerySchema
    },
    { 200: WebhookAttemptPageResponseSchema }
  ),
  webhookReplay: webhookRoute(
    { method: 'POST', path: `${WEBHOOK_ENDPOINT_PATH}/replay`, params: EndpointParamsSchema, request: ReplaySchema },
    { 200: WebhookReplayResponseSchema }
  )
} satisfies Record<string, Endpoint>

export { MAX_ITEMS as MAX_STATUS_ITEMS, MAX_SYNC_ROWS, MAX_REFERENCE_ROWS }
