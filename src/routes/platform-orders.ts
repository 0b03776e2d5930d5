import type { FastifyInstance } from 'fastify'
import { badRequest } from '../errors.js'
import { OrderRowErrors as O, OrderText } from '../platform/order-texts.js'
import { placeOrders } from '../platform/place-orders.js'
import { placementRow } from '../platform/placement-row.js'
import { MAX_PLATFORM_ROWS } from '../platform/texts.js'
import { failure, success } from '../rest-envelope.js'
import { MAX_ITEMS as MAX_STATUS_ITEMS } from '../status-update/schemas.js'
import { OrderErrors, StatusUpdateCode, StatusUpdateText } from '../status-update/texts.js'
import { updateOrderStatuses } from '../status-update/update-batch.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody, failureExample } from './documented.js'
import { batchData, batchRoute, platformConfig, platformUnauthorized, rowError } from './platform-batch.js'
import { restEndpoints, type PlatformStatusUpdateRequest, type StatusUpdateResponse } from './rest-contract.js'
import { itemsOf, orderError, sendBatch } from './status-update.js'

/*
 * The marketplace's order routes (docs/platform/orders.md), platform key only: placement, and the platform's
 * transitions with the body and answers of the seller's update-status. Added by platform.ts, in its context.
 */

const order = placementRow({
  orderId: '700001',
  serviceOrderNumber: 'SVC-700001',
  companyId: 101,
  storeId: 1001,
  retailerId: 5001,
  shopId: 6001,
  paymentMode: 'ONLINE_PAID',
  orderItems: [
    { id: '900001', offerId: 3001, quantity: 10 },
    { id: '900002', offerId: 3002, quantity: '2.5', dealId: 4001 }
  ]
})

const moves: PlatformStatusUpdateRequest = {
  order_status: [
    { Order_id: '700001', Order_Status: 'CANCELLED', reason: 'Customer cancelled' },
    { Order_id: '700002', Order_Status: 'DELIVERED' },
    { Order_id: '700003', Order_Status: 'DELIVERED' }
  ]
}
const moved: StatusUpdateResponse = success(StatusUpdateText.success, {
  successful: 2,
  failed: 1,
  errors: [orderError(2, 700003, OrderErrors.cannotChange('ORDER_PLACED', 'DELIVERED'))],
  unchangedOrderIds: []
})
const movedAgain: StatusUpdateResponse =
  success(StatusUpdateText.success, { ...moved.data, unchangedOrderIds: [700001, 700002] })

export function platformOrderRoutes (app: FastifyInstance): void {
  const db = app.database.db
  batchRoute(app, restEndpoints.platformOrders, 'order rows', OrderText.placed, (rows, idempotency, request) =>
    placeOrders(db, rows, {
      idempotency,
      credentialId: request.platformCaller!.credentialId,
      autoRejectAfterMs: app.config.AUTO_REJECT_AFTER_MS
    }), {
    operationId: 'placePlatformOrders',
    summary: 'Place orders',
    description: `1 to ${MAX_PLATFORM_ROWS} orders keyed by orderId. Placing an order does, in one transaction, what ` +
      'placement means: ORDER_PLACED with its history, the deal quantity grabbed, the seller\'s live-order count, the ' +
      'auto-rejection job when the seller has it on, and the order.placed notification. The same order again is unchanged; ' +
      'the same orderId with other content is refused (ORDER_CONFLICT): an order is never edited by re-sending it. ' +
      'Platform key only.',
    requestExamples: { order: { summary: 'An order of two lines, one on a daily deal', value: [order] } },
    processed: success(OrderText.placed, batchData(1, 0, 0, [rowError(1, '700002', O.retailerNotLinked(5002))])),
    resent: success(OrderText.placed, batchData(0, 0, 2, []))
  })

  // The seller endpoint's body and answer (docs/api/status-updates.md), with the marketplace's statuses.
  const endpoint = restEndpoints.platformOrderStatus
  app.post(endpoint.path, {
    onRequest: app.requirePlatformKey(),
    config: platformConfig(app),
    // The items are checked one by one, each order independent (status-update.ts).
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId: 'updatePlatformOrderStatuses',
      summary: 'Cancel or deliver orders of any seller',
      description: `Up to ${MAX_STATUS_ITEMS} items, each order independent, with the body and answer of the seller's ` +
        'update-status and the statuses CANCELLED (from ORDER_PLACED or ORDER_ACCEPTED) and DELIVERED (from ORDER_ACCEPTED). ' +
        'Cancelling removes the auto-rejection, gives the deal quantity back, records a refund of an order paid online and ' +
        'gives an accepted order\'s points back to its seller; each effect once, whatever the retries. Platform key only.',
      tags: ['Platform'],
      security: [{ platformKeyBearer: [] }],
      body: documentedBody(endpoint.request, { mixed: { summary: 'A cancellation and two deliveries', value: moves } }),
      response: documentedAnswers(endpoint, {
        200: {
          description: 'The batch was processed: per-order errors are in data.errors',
          examples: {
            processed: { summary: 'Two changed, one refused', value: moved },
            retried: { summary: 'The same batch sent again: the changes were already made', value: movedAgain }
          }
        },
        400: {
          description: 'A status other than CANCELLED or DELIVERED (with data), or a request-level error without data',
          examples: {
            invalidStatus: {
              summary: 'An item asked for a seller\'s status: 400, and every item is still reported',
              value: failure(400, OrderErrors.invalidStatus.text, StatusUpdateCode.invalidStatus, {
                successful: 0,
                failed: 1,
                errors: [orderError(0, 700001, OrderErrors.invalidStatus)],
                unchangedOrderIds: []
              })
            },
            statusRequired: failureExample(badRequest(StatusUpdateCode.statusRequired, StatusUpdateText.statusRequired),
              'order_status missing, empty or not an array')
          }
        },
        ...commonAnswers(app.config.BODY_LIMIT_BYTES),
        401: platformUnauthorized('Missing or unknown platform key, or a seller credential instead of it: the same answer for each')
      })
    }
  }, async (request, reply) => {
    const items = itemsOf(request.body)
    const outcome = await withIdempotency(request, reply,
      (idempotency) =>
        updateOrderStatuses(db, { platform: request.platformCaller! }, items, { log: request.log, idempotency }),
      () => {})
    return sendBatch(reply, outcome)
  })
}
