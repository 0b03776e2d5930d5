import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { BadRequestError, OrderErrorText, StatusUpdateText } from '../errors.js'
import {
  FailureEnvelopeSchema, MAX_ITEMS, StatusUpdateBodySchema, SuccessEnvelopeSchema
} from './schemas.js'
import { updateOrderStatuses } from './update-batch.js'

/*
 * POST /v2/accounting/orders/update-status (spec 4.2): API key as a Bearer token, a batch of up to
 * MAX_ITEMS status changes, each order independent. Thin: read the body, call the batch, shape the reply.
 */

/** The items of a body, or a 400 with the exact text of spec 7.1 / decisions.md. */
function itemsOf (body: unknown): unknown[] {
  const items = typeof body === 'object' && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>).order_status
    : undefined
  if (!Array.isArray(items) || items.length === 0) throw new BadRequestError(StatusUpdateText.statusRequired)
  if (items.length > MAX_ITEMS) throw new BadRequestError(StatusUpdateText.tooManyItems(MAX_ITEMS))
  return items
}

const statusUpdateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // JSON only (spec 4.2): without this, Fastify would hand a text/plain body over as a string and the
  // client would read "Order status is required" instead of being told the content type is wrong.
  app.removeContentTypeParser('text/plain')
  app.post('/v2/accounting/orders/update-status', {
    onRequest: app.requireCredential('api-key', 'authorization'),
    // The schema documents the body; the handler gives the exact messages (a schema error would not).
    attachValidation: true,
    schema: {
      body: StatusUpdateBodySchema,
      response: { 200: SuccessEnvelopeSchema, 400: FailureEnvelopeSchema, 401: FailureEnvelopeSchema }
    }
  }, async (request, reply) => {
    const items = itemsOf(request.body)
    const { invalidStatus, ...data } = await updateOrderStatuses(app.database.db, request.caller!, items, { log: request.log })
    // Spec 7.2: an invalid status value makes the whole answer a 400, still with every order's outcome.
    if (invalidStatus) {
      return reply.code(400).send({ error: true, status: false, statusCode: 400, message: OrderErrorText.invalidStatus, data })
    }
    return reply.code(200).send({ error: false, status: true, statusCode: 200, message: StatusUpdateText.success, data })
  })
}

export default statusUpdateRoutes
