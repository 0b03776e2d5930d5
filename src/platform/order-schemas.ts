import { Type, type Static } from '@sinclair/typebox'
import { MAX_PLATFORM_ROWS, MAX_ID, TEXT_MAX_LENGTH } from './texts.js'
import { MAX_ORDER_LINES } from './order-texts.js'

/*
 * TypeBox schemas of POST /v2/platform/orders (docs/platform/orders.md). Rows are checked one by
 * one in code (order-row.ts) so that a bad row is that row's error, never the request's; these schemas
 * document the contract (OpenAPI, the client's types, the schema gate).
 */

const Id = Type.Integer({ minimum: 1, maximum: MAX_ID })
const Text = Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH })
const DigitId = (description: string) => Type.Union([
  Type.String({ pattern: '^[1-9][0-9]{0,15}$' }),
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
], { description })
const Amount = (description: string) =>
  Type.Union([Type.Number(), Type.String({ pattern: '^[+-]?(?:\\d+\\.?\\d*|\\.\\d+)$' })], { description })

export const PlatformOrderLineSchema = Type.Object({
  id: DigitId('The marketplace\'s order item id, a string of digits as the read hands it out'),
  offerId: Id,
  quantity: Amount('Above 0, at most 3 decimals'),
  dealId: Type.Optional(Type.Union([Id, Type.Null()], {
    description: 'A daily deal of the offer on the day of placedAt: its price, and its quantity grabbed'
  }))
}, { title: 'PlatformOrderLine' })

export const PlatformOrderSchema = Type.Object({
  orderId: DigitId('The marketplace\'s order id, a string of digits as the read hands it out'),
  orderNumber: Text,
  serviceOrderNumber: Text,
  companyId: Id,
  storeId: Id,
  retailerId: Id,
  shopId: Type.Optional(Type.Union([Id, Type.Null()], { description: 'A shop of the retailer, or null' })),
  deliveryType: Text,
  currencyCode: Type.String({ pattern: '^[A-Z]{3}$' }),
  paymentMode: Type.Union([Type.Literal('ONLINE_PAID'), Type.Literal('PREPAID'), Type.Literal('CASH_ON_DELIVERY')]),
  orderTotal: Amount('Non-negative, at most 2 decimals'),
  orderTotalFinal: Amount('Non-negative, at most 2 decimals'),
  orderTaxAmount: Amount('Non-negative, at most 2 decimals'),
  orderCessAmount: Amount('Non-negative, at most 2 decimals'),
  appliedPoints: Amount('Non-negative, at most 2 decimals'),
  totalExtraCharges: Amount('Non-negative, at most 2 decimals'),
  roundOff: Amount('At most 2 decimals, may be negative'),
  placedAt: Type.String({ description: 'ISO-8601 with an offset (the read\'s createdAt)', format: 'date-time' }),
  orderItems: Type.Array(PlatformOrderLineSchema, { minItems: 1, maxItems: MAX_ORDER_LINES })
}, { title: 'PlatformOrder', description: 'One order to place, keyed by orderId: placed once, never edited by a re-send' })
export type PlatformOrder = Static<typeof PlatformOrderSchema>

export const PlatformOrdersRequestSchema = Type.Array(PlatformOrderSchema, {
  title: 'PlatformOrdersRequest',
  description: `1 to ${MAX_PLATFORM_ROWS} orders; each is checked on its own and a bad row is reported by index`,
  minItems: 1,
  maxItems: MAX_PLATFORM_ROWS
})
