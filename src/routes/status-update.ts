import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { badRequest } from '../errors.js'
import type { ServiceMetrics } from '../metrics.js'
import { isPlainObject } from '../plain-object.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { MAX_ITEMS, StatusUpdateBodySchema, type BatchData } from '../status-update/schemas.js'
import { OrderErrors, StatusUpdateCode, StatusUpdateText } from '../status-update/texts.js'
import { updateOrderStatuses, type BatchOutcome } from '../status-update/update-batch.js'
import { failure, success } from '../rest-envelope.js'
import { restEndpoints } from './rest-contract.js'

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

const statusUpdateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // JSON only: without this, Fastify would hand a text/plain body over as a string and the
  // client would read "Order status is required" instead of being told the content type is wrong.
  app.removeContentTypeParser('text/plain')
  const { path, responses } = restEndpoints.statusUpdate
  app.post(path, {
    onRequest: app.requireCredential('api-key', 'authorization'),
    config: {
      idempotent: true,
      rateLimit: { max: app.config.RATE_LIMIT_STATUS_UPDATE_PER_MINUTE, timeWindow: 60_000 }
    },
    // The schema documents the body; the handler gives the exact messages (a schema error would not).
    attachValidation: true,
    schema: {
      body: StatusUpdateBodySchema,
      response: { 200: responses[200], 400: responses[400], 401: responses[401] }
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
