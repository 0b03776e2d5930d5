import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest } from '../errors.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { addPoints } from '../platform/add-points.js'
import { OrderText } from '../platform/order-texts.js'
import { placeOrders } from '../platform/place-orders.js'
import type { PlatformBatchData } from '../platform/schemas.js'
import { MAX_PLATFORM_ROWS, PlatformCode, PlatformText } from '../platform/texts.js'
import { upsertCatalogue } from '../platform/upsert-catalogue.js'
import { upsertDeals } from '../platform/upsert-deals.js'
import { upsertSellers } from '../platform/upsert-sellers.js'
import { upsertRetailers } from '../platform/upsert-retailers.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { success } from '../rest-envelope.js'
import { updateOrderStatuses } from '../status-update/update-batch.js'
import { restEndpoints, type Endpoint } from './rest-contract.js'
import { itemsOf, sendBatch } from './status-update.js'

/*
 * The marketplace's routes (docs/platform/api.md), platform key only. Thin: the request-level checks (a
 * non-empty array of at most MAX_PLATFORM_ROWS rows: a 400 without data), then one service call through
 * withIdempotency, its per-row results wrapped in the envelope. Rows are checked by the service, one by
 * one, so the schema documents the body rather than validating it (a schema error would refuse the
 * whole request for one bad row).
 */

/** The rows of a body, or a 400 that says what was expected. */
function rowsOf (body: unknown, what: string): unknown[] {
  if (!Array.isArray(body) || body.length === 0) {
    throw badRequest(PlatformCode.notAnArray, PlatformText.notAnArray(what))
  }
  if (body.length > MAX_PLATFORM_ROWS) throw badRequest(PlatformCode.tooManyRows, PlatformText.tooManyRows(body.length))
  return body
}

type Service = (rows: unknown[], idempotency: IdempotencyRequest | undefined, request: FastifyRequest) =>
Promise<Replayable<PlatformBatchData>>

const platformRoutes: FastifyPluginAsync = async (app) => {
  // JSON only: a text/plain body is 415, not "must be a JSON array".
  app.removeContentTypeParser('text/plain')
  // The marketplace's key is trusted with the data, not with the machine: each route has a budget per key,
  // as the seller routes have (a 1,000-row batch a request, 600 a minute by default: 10,000 rows a second).
  const config = () => ({
    idempotent: true,
    rateLimit: { max: app.config.RATE_LIMIT_PLATFORM_PER_MINUTE, timeWindow: 60_000 }
  })
  const route = (endpoint: Endpoint, what: string, message: string, service: Service) => {
    app.route({
      method: endpoint.method,
      url: endpoint.path,
      onRequest: app.requirePlatformKey(),
      // Money and quantities are stored exactly (docs/platform/api.md): a number JSON.parse would round is a
      // 400 naming its path (plugins/json-body.ts). Not the update-status below: its body and per-order
      // answers are the seller endpoint's (an Order_id that is not an integer is that order's error).
      config: { ...config(), exactNumbers: true },
      schema: {
        response: { 200: endpoint.responses[200], 400: endpoint.responses[400], 401: endpoint.responses[401] }
      },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const rows = rowsOf(request.body, what)
        const data = await withIdempotency(request, reply,
          (idempotency) => service(rows, idempotency, request), () => {})
        return reply.code(200).send(success(message, data))
      }
    })
  }
  const db = app.database.db
  route(restEndpoints.platformSellers, 'seller rows', PlatformText.sellersUpserted,
    (rows, idempotency) => upsertSellers(db, rows, { idempotency }))
  route(restEndpoints.platformPoints, 'points rows', PlatformText.pointsRecorded,
    (rows, idempotency) => addPoints(db, rows, { idempotency }))
  route(restEndpoints.platformRetailers, 'retailer rows', PlatformText.retailersUpserted,
    (rows, idempotency) => upsertRetailers(db, rows, { idempotency }))
  route(restEndpoints.platformOrders, 'order rows', OrderText.placed, (rows, idempotency, request) =>
    placeOrders(db, rows, {
      idempotency,
      credentialId: request.platformCaller!.credentialId,
      autoRejectAfterMs: app.config.AUTO_REJECT_AFTER_MS
    }))

  // The seller endpoint's body and answer (docs/api/status-updates.md), with the marketplace's statuses.
  const { path, responses } = restEndpoints.platformOrderStatus
  app.post(path, {
    onRequest: app.requirePlatformKey(),
    config: config(),
    schema: { response: { 200: responses[200], 400: responses[400], 401: responses[401] } }
  }, async (request, reply) => {
    const items = itemsOf(request.body)
    const outcome = await withIdempotency(request, reply,
      (idempotency) =>
        updateOrderStatuses(db, { platform: request.platformCaller! }, items, { log: request.log, idempotency }),
      () => {})
    return sendBatch(reply, outcome)
  })
  route(restEndpoints.platformCatalogue, 'item rows', PlatformText.catalogueUpserted,
    (rows, idempotency) => upsertCatalogue(db, rows, { idempotency }))
  route(restEndpoints.platformDeals, 'deal rows', PlatformText.dealsUpserted,
    (rows, idempotency) => upsertDeals(db, rows, { idempotency }))
}

export default platformRoutes
