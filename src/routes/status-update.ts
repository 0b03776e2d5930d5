import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { badRequest } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { IdempotencyCode, IdempotencyText } from '../idempotency/idempotency-key.js'
import type { ItemError } from '../item-error.js'
import type { ServiceMetrics } from '../metrics.js'
import { isPlainObject } from '../plain-object.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { MAX_ITEMS, type BatchData } from '../status-update/schemas.js'
import { OrderErrors, StatusUpdateCode, StatusUpdateText } from '../status-update/texts.js'
import { updateOrderStatuses, type BatchOutcome } from '../status-update/update-batch.js'
import { failure, success } from '../rest-envelope.js'
import {
  checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody, failureExample, invalidJson, tooDeep
} from './documented.js'
import { restEndpoints, type StatusUpdateRequest, type StatusUpdateResponse } from './rest-contract.js'

/*
 * POST /v2/accounting/orders/update-status (docs/api/status-updates.md): API key as a Bearer token, a batch of up to
 * MAX_ITEMS status changes, each order independent. Thin: read the body, call the batch, shape the reply.
 */

/** The items of a body, or a 400 with the exact text of docs/api/status-updates.md. */
export function itemsOf (body: unknown): unknown[] {
  const items = isPlainObject(body) ? body.order_status : undefined
  if (!Array.isArray(items) || items.length === 0) {
    throw badRequest(StatusUpdateCode.statusRequired, StatusUpdateText.statusRequired)
  }
  if (items.length > MAX_ITEMS) {
    throw badRequest(StatusUpdateCode.tooManyItems, StatusUpdateText.tooManyItems(MAX_ITEMS))
  }
  return items
}

/** Items by outcome for the metrics (a replayed answer is not counted again). */
function countItems (metrics: ServiceMetrics, data: BatchData): void {
  metrics.statusItems.inc({ outcome: 'changed', code: '' }, data.successful - data.unchangedOrderIds.length)
  metrics.statusItems.inc({ outcome: 'unchanged', code: '' }, data.unchangedOrderIds.length)
  for (const error of data.errors) metrics.statusItems.inc({ outcome: 'error', code: error.code })
}

/** A per-order error of the answer, as the batch writes it (for the examples). */
export const orderError = (index: number, orderId: number | null, { code, text }: ItemError) =>
  ({ index, orderId, error: text, code })

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
const retried: StatusUpdateResponse =
  success(StatusUpdateText.success, { ...processed.data, unchangedOrderIds: [5, 9, 18] })

const statusUpdateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // JSON only: without this, Fastify would hand a text/plain body over as a string and the
  // client would read "Order status is required" instead of being told the content type is wrong.
  app.removeContentTypeParser('text/plain')
  const endpoint = restEndpoints.statusUpdate
  app.post(endpoint.path, {
    onRequest: app.requireCredential('api-key', 'authorization'),
    config: {
      idempotent: true,
      rateLimit: { max: app.config.RATE_LIMIT_STATUS_UPDATE_PER_MINUTE, timeWindow: 60_000 }
    },
    // The schema documents the body; the handler gives the exact messages (a schema error would not).
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId: 'updateOrderStatuses',
      summary: 'Accept, reject or complete orders in one batch',
      description: `Up to ${MAX_ITEMS} items; each order is independent: a bad item or an order that cannot move is reported ` +
        'in data.errors and the rest of the batch goes on. Asking for the status an order already has succeeds and does nothing ' +
        `(data.unchangedOrderIds), so a batch may be sent again safely. Body at most ${app.config.BODY_LIMIT_BYTES} bytes.`,
      tags: ['Accounting'],
      security: [{ apiKeyBearer: [] }],
      body: documentedBody(endpoint.request, { mixed: { summary: 'Accept, reject with a reason, complete', value: batch } }),
      response: documentedAnswers(endpoint, {
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
            invalidStatus: {
              summary: 'An item asked for a status that is not one of the three: 400, and every item is still reported',
              value: failure(400, OrderErrors.invalidStatus.text, StatusUpdateCode.invalidStatus, {
                successful: 1,
                failed: 1,
                errors: [orderError(1, null, OrderErrors.invalidStatus)],
                unchangedOrderIds: []
              })
            },
            statusRequired: failureExample(badRequest(StatusUpdateCode.statusRequired, StatusUpdateText.statusRequired), 'order_status missing, empty or not an array'),
            invalidJson,
            tooDeep: tooDeep(MAX_JSON_DEPTH),
            invalidKey: failureExample(badRequest(IdempotencyCode.invalidKey, IdempotencyText.invalidKey), 'A malformed Idempotency-Key'),
            tooMany: failureExample(badRequest(StatusUpdateCode.tooManyItems, StatusUpdateText.tooManyItems(MAX_ITEMS)), `More than ${MAX_ITEMS} items`)
          }
        },
        ...commonAnswers(app.config.BODY_LIMIT_BYTES)
      })
    }
  }, async (request, reply) => {
    const items = itemsOf(request.body)
    const outcome = await withIdempotency(request, reply,
      (idempotency) =>
        updateOrderStatuses(app.database.db, { seller: request.caller! }, items, { log: request.log, idempotency }),
      (answer) => countItems(app.metrics, answer))
    return sendBatch(reply, outcome)
  })
}

/** The batch's answer; the platform's update-status answers the same way. */
export function sendBatch (reply: FastifyReply, { invalidStatus, ...data }: BatchOutcome): FastifyReply {
  // Spec 7.2: an invalid status value makes the whole answer a 400, still with every order's outcome.
  if (invalidStatus) {
    return reply.code(400).send(failure(400, OrderErrors.invalidStatus.text, StatusUpdateCode.invalidStatus, data))
  }
  return reply.code(200).send(success(StatusUpdateText.success, data))
}

export default statusUpdateRoutes
