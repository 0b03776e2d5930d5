import type { Config } from '../config.js'
import { badRequest, RequestError } from '../errors.js'
import { OrderRowErrors as O, OrderText } from '../platform/order-texts.js'
import { placementRow } from '../platform/placement-row.js'
import { MAX_PLATFORM_ROWS } from '../platform/texts.js'
import { failure, success } from '../rest-envelope.js'
import { MAX_ITEMS as MAX_STATUS_ITEMS } from '../status-update/schemas.js'
import { OrderErrors, StatusUpdateCode, StatusUpdateText } from '../status-update/texts.js'
import { platformResponses, rowError } from './platform-docs.js'
import type { PlatformStatusUpdateRequest, StatusUpdateResponse } from './rest-contract.js'
import { commonResponses, failureExample, type EndpointDoc } from './rest-docs.js'

/*
 * What the OpenAPI document says about the marketplace's order routes (docs/platform/orders.md): placement and
 * the platform's transitions, with examples built from the routes' own texts and typed against their
 * schemas.
 */

function platformOrdersDoc (config: Config): EndpointDoc {
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
  const batch = (inserted: number, unchanged: number, errors: ReturnType<typeof rowError>[]) =>
    ({ received: inserted + unchanged + errors.length, inserted, updated: 0, unchanged, failed: errors.length, errors })
  return {
    operationId: 'placePlatformOrders',
    summary: 'Place orders',
    description: `1 to ${MAX_PLATFORM_ROWS} orders keyed by orderId. Placing an order does, in one transaction, what ` +
      'placement means: ORDER_PLACED with its history, the deal quantity grabbed, the seller\'s live-order count, the ' +
      'auto-rejection job when the seller has it on, and the order.placed notification. The same order again is unchanged; ' +
      'the same orderId with other content is refused (ORDER_CONFLICT): an order is never edited by re-sending it. ' +
      'Platform key only.',
    tag: 'Platform',
    security: 'platformKeyBearer',
    requestExamples: { order: { summary: 'An order of two lines, one on a daily deal', value: [order] } },
    responses: platformResponses(config, 'order rows',
      success(OrderText.placed, batch(1, 0, [rowError(1, '700002', O.retailerNotLinked(5002))])),
      success(OrderText.placed, batch(0, 2, [])))
  }
}

/** POST /v2/platform/orders/update-status: the seller endpoint's answers, with the marketplace's statuses. */
function platformOrderStatusDoc (config: Config): EndpointDoc {
  const batch: PlatformStatusUpdateRequest = {
    order_status: [
      { Order_id: '700001', Order_Status: 'CANCELLED', reason: 'Customer cancelled' },
      { Order_id: '700002', Order_Status: 'DELIVERED' },
      { Order_id: '700003', Order_Status: 'DELIVERED' }
    ]
  }
  const orderError = (index: number, orderId: number | null, e: { code: string, text: string }) =>
    ({ index, orderId, error: e.text, code: e.code })
  const processed: StatusUpdateResponse = success(StatusUpdateText.success, {
    successful: 2,
    failed: 1,
    errors: [orderError(2, 700003, OrderErrors.cannotChange('ORDER_PLACED', 'DELIVERED'))],
    unchangedOrderIds: []
  })
  const retried: StatusUpdateResponse = success(StatusUpdateText.success, {
    ...processed.data, unchangedOrderIds: [700001, 700002]
  })
  return {
    operationId: 'updatePlatformOrderStatuses',
    summary: 'Cancel or deliver orders of any seller',
    description: `Up to ${MAX_STATUS_ITEMS} items, each order independent, with the body and answer of the seller's ` +
      'update-status and the statuses CANCELLED (from ORDER_PLACED or ORDER_ACCEPTED) and DELIVERED (from ORDER_ACCEPTED). ' +
      'Cancelling removes the auto-rejection, gives the deal quantity back, records a refund of an order paid online and ' +
      'gives an accepted order\'s points back to its seller; each effect once, whatever the retries. Platform key only.',
    tag: 'Platform',
    security: 'platformKeyBearer',
    requestExamples: { mixed: { summary: 'A cancellation and two deliveries', value: batch } },
    responses: {
      200: {
        description: 'The batch was processed: per-order errors are in data.errors',
        examples: {
          processed: { summary: 'Two changed, one refused', value: processed },
          retried: { summary: 'The same batch sent again: the changes were already made', value: retried }
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
      ...commonResponses(config.BODY_LIMIT_BYTES),
      401: {
        description: 'Missing or unknown platform key, or a seller credential instead of it: the same answer for each',
        examples: { unauthorized: failureExample(new RequestError.Unauthorized(), 'Every authentication failure') }
      }
    }
  }
}

export function platformOrderDocs (config: Config): { platformOrders: EndpointDoc, platformOrderStatus: EndpointDoc } {
  return { platformOrders: platformOrdersDoc(config), platformOrderStatus: platformOrderStatusDoc(config) }
}
