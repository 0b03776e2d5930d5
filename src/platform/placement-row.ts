import type { PlatformOrder } from './order-schemas.js'

/*
 * A typical row of POST /v2/platform/orders, for the OpenAPI example (routes/platform-orders.ts) and
 * for the orders the tests and bench:events place. It is here, beside the row's schema, because the docs
 * need it and src may not import from test/ or bench/; they import it from here.
 */

/** What each maker of a row chooses; delivery, currency, the totals and placedAt default to one order's. */
export type PlacementChoices = Pick<PlatformOrder,
  'orderId' | 'serviceOrderNumber' | 'companyId' | 'storeId' | 'retailerId' | 'shopId' | 'paymentMode' | 'orderItems'
> & Partial<Pick<PlatformOrder, 'orderNumber' | 'orderTotal' | 'orderTotalFinal' | 'orderTaxAmount' | 'placedAt'>>

/** The row, its fields in the schema's order (the docs example is published as written). */
export function placementRow (order: PlacementChoices): PlatformOrder {
  return {
    orderId: order.orderId,
    orderNumber: order.orderNumber ?? `ORD-${order.orderId}`,
    serviceOrderNumber: order.serviceOrderNumber,
    companyId: order.companyId,
    storeId: order.storeId,
    retailerId: order.retailerId,
    shopId: order.shopId,
    deliveryType: 'REGULAR',
    currencyCode: 'INR',
    paymentMode: order.paymentMode,
    orderTotal: order.orderTotal ?? '1180.00',
    orderTotalFinal: order.orderTotalFinal ?? '1180.00',
    orderTaxAmount: order.orderTaxAmount ?? '180.00',
    orderCessAmount: 0,
    appliedPoints: 0,
    totalExtraCharges: 0,
    roundOff: 0,
    placedAt: order.placedAt ?? '2026-11-25T09:30:00+05:30',
    orderItems: order.orderItems
  }
}
