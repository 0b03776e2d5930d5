import type { Config } from '../config.js'
import { badRequest, RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { IdempotencyCode, IdempotencyText } from '../idempotency/idempotency-key.js'
import { checkOutstandingShipmentRow } from '../shipments/sync-row.js'
import { SyncCode, SyncText } from '../shipments/texts.js'
import type { ItemError } from '../item-error.js'
import { OrderErrors, StatusUpdateCode, StatusUpdateText } from '../status-update/texts.js'
import { failure, success } from '../rest-envelope.js'
import {
  MAX_STATUS_ITEMS, MAX_SYNC_ROWS, type RequestFailure, type StatusUpdateRequest, type StatusUpdateResponse,
  type SyncResponse
} from './rest-contract.js'

/*
 * What the OpenAPI document says about the REST endpoints beyond their schemas: summaries, the answer of
 * each status, and examples. Every example is built from the contract's own texts and typed against the
 * route schemas' static types (test/routes/openapi.test.ts also validates each against its schema), so an example
 * cannot drift from what the service sends.
 */

export interface ResponseDoc {
  description: string
  examples: Record<string, { summary: string, value: unknown }>
  /** Headers the answer carries, documented (Retry-After on a 503). */
  headers?: Record<string, { description: string, schema: { type: 'integer' | 'string' } }>
}

export interface EndpointDoc {
  operationId: string
  summary: string
  description: string
  tag: string
  /** The security scheme of components.securitySchemes the endpoint takes. */
  security: 'apiKeyBearer' | 'apiKeyHeader' | 'platformKeyBearer'
  /** Examples of the body (none when the endpoint reads no body). */
  requestExamples: Record<string, { summary: string, value: unknown }>
  responses: Record<number, ResponseDoc>
}

/** The envelope the root error handler makes of a coded error. */
export const failureExample = (
  error: { statusCode?: number, message: string, code: string }, summary: string
): { summary: string, value: RequestFailure } =>
  ({ summary, value: failure(error.statusCode ?? 400, error.message, error.code) })

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying (the request is safe to repeat)', schema: { type: 'integer' as const } } }

/** The answers both endpoints share: authentication, body size, content type, failures inside. */
export function commonResponses (bodyLimit: number): Record<number, ResponseDoc> {
  return {
    401: {
      description: 'Missing, malformed, unknown or revoked API key, an access token instead of a key, or a key of the other environment',
      examples: { unauthorized: failureExample(new RequestError.Unauthorized(), 'Every authentication failure') }
    },
    409: {
      description: 'The first request with this Idempotency-Key is still running: retry when it has finished',
      examples: { inUse: failureExample(new RequestError.IdempotencyKeyInUse(), 'The same key, while its first request runs') }
    },
    413: {
      description: `The body is larger than the limit (${bodyLimit} bytes)`,
      examples: { tooLarge: failureExample(new RequestError.PayloadTooLarge(bodyLimit), 'Body over the limit') }
    },
    415: {
      description: 'The body is not application/json',
      examples: { notJson: failureExample(new RequestError.UnsupportedMediaType(), 'Another content type') }
    },
    422: {
      description: 'The Idempotency-Key was used before with a different request (method, path or body)',
      examples: { reused: failureExample(new RequestError.IdempotencyKeyReused(), 'A key reused for another request') }
    },
    429: {
      description: 'Over the credential\'s requests-per-minute budget for this endpoint; nothing was done. ' +
        'Retry-After says when to try again; RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset come with every answer',
      headers: { 'Retry-After': { description: 'Seconds until the budget allows a request again', schema: { type: 'integer' } } },
      examples: { rateLimited: failureExample(new RequestError.RateLimited('at most 120 requests a minute per credential on this endpoint; retry in 42 s'), 'Too many requests') }
    },
    500: {
      description: 'A failure inside the service; nothing of the request was applied. Details are in the service log under the x-request-id',
      examples: { internal: failureExample(new RequestError.Internal(), 'Failure inside') }
    },
    503: {
      description: 'The database cannot be reached or was too slow, or the process is shedding load; nothing was applied ' +
        '(or, if the connection was lost at commit, everything: repeating the request is safe either way)',
      headers: retryAfter,
      examples: {
        unavailable: failureExample(new RequestError.ServiceUnavailable(), 'Database unavailable'),
        timeout: failureExample(new RequestError.Timeout(), 'A statement ran past its timeout'),
        overloaded: failureExample(new RequestError.Overloaded(), 'The process is shedding load')
      }
    }
  }
}

const orderError = (index: number, orderId: number | null, { code, text }: ItemError) =>
  ({ index, orderId, error: text, code })

function rowError (index: number, row: unknown): { index: number, error: string, code: string } {
  const checked = checkOutstandingShipmentRow(row)
  if (checked.error === undefined) throw new Error('the example row must be one the service refuses')
  return { index, error: checked.error.text, code: checked.error.code }
}

/** The seller endpoints' words; the platform routes' are platform-docs.ts. */
export function restDocs (config: Config): { statusUpdate: EndpointDoc, shipmentSync: EndpointDoc } {
  const batch: StatusUpdateRequest = {
    order_status: [
      { Order_id: 5, Order_Status: 'ORDER_ACCEPTED' },
      { Order_id: 9, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' },
      { Order_id: '18', Order_Status: 'ORDER_COMPLETED_BY_SELLER' },
      { Order_id: 1, Order_Status: 'ORDER_COMPLETED_BY_SELLER' },
      { Order_id: 999999, Order_Status: 'ORDER_ACCEPTED' }
    ]
  }
  const processed: StatusUpdateResponse = success(StatusUpdateText.success, {
    successful: 3,
    failed: 2,
    errors: [
      orderError(3, 1, OrderErrors.cannotChange('ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER')),
      orderError(4, 999999, OrderErrors.notFound)
    ],
    unchangedOrderIds: []
  })
  const retried: StatusUpdateResponse = success(StatusUpdateText.success, {
    successful: 3,
    failed: 2,
    errors: processed.data.errors,
    unchangedOrderIds: [5, 9, 18]
  })
  const invalidStatus = {
    summary: 'An item asked for a status that is not one of the three: 400, and every item is still reported',
    value: failure(400, OrderErrors.invalidStatus.text, StatusUpdateCode.invalidStatus, {
      successful: 1,
      failed: 1,
      errors: [orderError(1, null, OrderErrors.invalidStatus)],
      unchangedOrderIds: []
    })
  }
  const refusedRow = { retailerSyncId: 'RET-1-00003', shopSyncId: null, offerSyncId: '', outstandingQuantity: 4 }
  const synced: SyncResponse = success(SyncText.success, {
    received: 3,
    inserted: 1,
    updated: 1,
    unchanged: 0,
    duplicates: 0,
    failed: 1,
    errors: [rowError(2, refusedRow)],
    unmatched: {
      retailerSyncIds: { count: 1, examples: ['RET-NEW-0042'] },
      shopSyncIds: { count: 0, examples: [] },
      offerSyncIds: { count: 0, examples: [] }
    }
  })

  return {
    statusUpdate: {
      operationId: 'updateOrderStatuses',
      summary: 'Accept, reject or complete orders in one batch',
      description: `Up to ${MAX_STATUS_ITEMS} items; each order is independent: a bad item or an order that cannot move is reported ` +
        'in data.errors and the rest of the batch goes on. Asking for the status an order already has succeeds and does nothing ' +
        `(data.unchangedOrderIds), so a batch may be sent again safely. Body at most ${config.BODY_LIMIT_BYTES} bytes.`,
      tag: 'Accounting',
      security: 'apiKeyBearer',
      requestExamples: { mixed: { summary: 'Accept, reject with a reason, complete', value: batch } },
      responses: {
        200: {
          description: 'The batch was processed, also when every order failed: per-order errors are in data.errors',
          examples: {
            processed: { summary: 'Three changed, two refused', value: processed },
            retried: { summary: 'The same batch sent again: the changes were already made', value: retried }
          }
        },
        400: {
          description: 'An invalid status value (with data), or a request-level error without data',
          examples: {
            invalidStatus,
            statusRequired: failureExample(badRequest(StatusUpdateCode.statusRequired, StatusUpdateText.statusRequired), 'order_status missing, empty or not an array'),
            invalidJson: failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON'),
            tooDeep: failureExample(new RequestError.JsonTooDeep(MAX_JSON_DEPTH), `Arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`),
            invalidKey: failureExample(badRequest(IdempotencyCode.invalidKey, IdempotencyText.invalidKey), 'A malformed Idempotency-Key'),
            tooMany: failureExample(badRequest(StatusUpdateCode.tooManyItems, StatusUpdateText.tooManyItems(MAX_STATUS_ITEMS)), `More than ${MAX_STATUS_ITEMS} items`)
          }
        },
        ...commonResponses(config.BODY_LIMIT_BYTES)
      }
    },
    shipmentSync: {
      operationId: 'syncOutstandingShipments',
      summary: 'Replace outstanding shipment quantities',
      description: `A JSON array of 1 to ${MAX_SYNC_ROWS} rows; each row sets the quantity of its key (retailer, shop, offer). ` +
        'Bad rows are skipped and reported by index; the last valid row of a key wins; sync IDs that match nothing are stored and ' +
        `reported in data.unmatched. One request is one transaction, so sending it again is safe. Body at most ${config.SYNC_BODY_LIMIT_BYTES} bytes, streamed.`,
      tag: 'Shipments',
      security: 'apiKeyHeader',
      requestExamples: {
        rows: {
          summary: 'Two rows: with a shop, and without one (null); a quantity as a numeric string is stored as written',
          value: [
            { retailerSyncId: 'RET-1-00001', shopSyncId: 'SHOP-1-00001', offerSyncId: 'VAR-1-001', outstandingQuantity: 12 },
            { retailerSyncId: 'RET-NEW-0042', shopSyncId: null, offerSyncId: 'VAR-1-002', outstandingQuantity: '10.500' }
          ]
        }
      },
      responses: {
        200: {
          description: 'Every row was processed; bad rows are in data.errors by index, unknown sync IDs in data.unmatched',
          examples: { synced: { summary: 'Of three rows: one new, one changed, one refused (an empty offerSyncId); a retailer not known yet', value: synced } }
        },
        400: {
          description: 'The body is not a non-empty JSON array, has too many rows, or is not valid JSON (nothing is written)',
          examples: {
            notAnArray: failureExample(badRequest(SyncCode.notAnArray, SyncText.notAnArray), 'Not a non-empty array'),
            tooManyRows: failureExample(badRequest(SyncCode.tooManyRows, SyncText.tooManyRows(MAX_SYNC_ROWS, 100_001)), `More than ${MAX_SYNC_ROWS} rows`),
            invalidJson: failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON'),
            tooDeep: failureExample(new RequestError.JsonTooDeep(MAX_JSON_DEPTH), `Arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`)
          }
        },
        ...commonResponses(config.SYNC_BODY_LIMIT_BYTES)
      }
    }
  }
}
