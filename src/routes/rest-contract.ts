import { Type, type Static, type TSchema } from '@sinclair/typebox'
import {
  PlatformBatchDataSchema, PlatformCatalogueRequestSchema, PlatformDealsRequestSchema, PlatformPointsRequestSchema,
  PlatformRetailersRequestSchema, PlatformSellersRequestSchema
} from '../platform/schemas.js'
import { PlatformOrdersRequestSchema } from '../platform/order-schemas.js'
import { MAX_SYNC_ROWS, SyncDataSchema, SyncRequestSchema } from '../shipments/schemas.js'
import { MAX_REFERENCE_ROWS, ReferencesDataSchema, ReferencesRequestSchema } from '../references/schemas.js'
import {
  BatchDataSchema, MAX_ITEMS, PlatformStatusUpdateItemSchema, StatusUpdateItemSchema
} from '../status-update/schemas.js'
import { FailureEnvelope, FailureEnvelopeWithData, SuccessEnvelope } from '../rest-envelope.js'

/*
 * The REST contract in one place: each endpoint's method, path, request and answers as TypeBox schemas.
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

export const StatusUpdateRequestSchema = Type.Object({
  order_status: Type.Array(StatusUpdateItemSchema, { minItems: 1, maxItems: MAX_ITEMS })
}, { title: 'StatusUpdateRequest', description: `A batch of 1 to ${MAX_ITEMS} status changes, each order independent (spec 4.2)` })
export type StatusUpdateRequest = Static<typeof StatusUpdateRequestSchema>

export const PlatformStatusUpdateRequestSchema = Type.Object({
  order_status: Type.Array(PlatformStatusUpdateItemSchema, { minItems: 1, maxItems: MAX_ITEMS })
}, {
  title: 'PlatformStatusUpdateRequest',
  description: `1 to ${MAX_ITEMS} orders of any seller moved to CANCELLED or DELIVERED, each independent`
})
export type PlatformStatusUpdateRequest = Static<typeof PlatformStatusUpdateRequestSchema>

export const StatusUpdateResponseSchema = Type.Composite([SuccessEnvelope(BatchDataSchema)], {
  title: 'StatusUpdateResponse', description: 'The batch was processed; per-order failures are in data.errors (spec 4.2)'
})
export type StatusUpdateResponse = Static<typeof StatusUpdateResponseSchema>

export const StatusUpdateInvalidStatusResponseSchema = Type.Composite([FailureEnvelopeWithData(BatchDataSchema)], {
  title: 'StatusUpdateInvalidStatusResponse',
  description: 'An item asked for a status that is not one of the three: a 400 that still reports every item (spec 7.2)'
})

export const RequestFailureSchema = Type.Composite([FailureEnvelope], {
  title: 'RequestFailure', description: 'A request-level failure (spec 7.1): no data; message says what was wrong'
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

export interface Endpoint {
  method: 'POST' | 'PUT'
  path: string
  request: TSchema
  responses: Record<number, TSchema>
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
  }
} satisfies Record<string, Endpoint>

export { MAX_ITEMS as MAX_STATUS_ITEMS, MAX_SYNC_ROWS, MAX_REFERENCE_ROWS }
