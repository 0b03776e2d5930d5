import { itemErrors, type CodeOf, type ItemError } from '../item-error.js'
import { MAX_ID, TEXT_MAX_LENGTH } from './texts.js'

/*
 * The texts of POST /v2/platform/orders, each written once with its code (docs/platform/orders.md lists them). A text
 * names the field it is about; a field of a line names its place (`orderItems[2].offerId`). The shared
 * ones (FIELD_REQUIRED, ROW_NOT_OBJECT, UNSTORABLE_TEXT, INVALID_COMPANY_ID, SELLER_NOT_FOUND) have the
 * same code and wording as in the other platform routes (texts.ts).
 */

/** Lines of one order: more than any basket, few enough that a batch of 1,000 orders stays one statement. */
export const MAX_ORDER_LINES = 200
/** The largest order and order item id: ids travel as digit strings and are handled as JavaScript numbers. */
export const MAX_ORDER_ID = Number.MAX_SAFE_INTEGER
/** numeric(14,2) and numeric(14,3): the largest whole part each holds. */
export const MAX_MONEY = 999_999_999_999.99
export const MAX_QUANTITY = 99_999_999_999.999

const idRule = `a positive integer of at most ${MAX_ID}`
const textRule = `a non-empty string of at most ${TEXT_MAX_LENGTH} characters`
const money = 'number with at most 2 decimals and less than 1000000000000 in size (a JSON number or a numeric string)'

export const OrderRowErrors = itemErrors({
  orderId: ['INVALID_ORDER_ID', `orderId must be a string of digits (or an integer) from 1 to ${MAX_ORDER_ID}`],
  orderIdTwice: ['DUPLICATE_ORDER_ID',
    (orderId: number, index: number) => `orderId ${orderId} already appears in the row at index ${index}`],
  orderNumber: ['INVALID_ORDER_NUMBER', (field: string) => `${field} must be ${textRule}`],
  orderNumberTwice: ['DUPLICATE_ORDER_NUMBER',
    (orderNumber: string, index: number) => `orderNumber ${JSON.stringify(orderNumber)} already appears in the row at index ${index}`],
  orderNumberTaken: ['ORDER_NUMBER_TAKEN',
    (orderNumber: string) => `orderNumber ${JSON.stringify(orderNumber)} is already the number of another order`],
  id: ['INVALID_ID', (field: string) => `${field} must be ${idRule}`],
  shopId: ['INVALID_ID', `shopId must be ${idRule}, or null`],
  deliveryType: ['INVALID_DELIVERY_TYPE', `deliveryType must be ${textRule}`],
  currencyCode: ['INVALID_CURRENCY', 'currencyCode must be a three-letter ISO 4217 code in capitals, such as "INR"'],
  paymentMode: ['INVALID_PAYMENT_MODE', 'paymentMode must be "ONLINE_PAID", "PREPAID" or "CASH_ON_DELIVERY"'],
  amount: ['INVALID_AMOUNT', (field: string, signed: boolean) => `${field} must be a ${signed ? '' : 'non-negative '}${money}`],
  placedAt: ['INVALID_PLACED_AT',
    'placedAt must be an ISO-8601 date and time with an offset, such as "2026-11-25T09:30:00+05:30" or "…Z"'],
  lines: ['INVALID_ORDER_ITEMS', `orderItems must be an array of 1 to ${MAX_ORDER_LINES} lines {id, offerId, quantity, dealId}`],
  line: ['INVALID_ORDER_ITEMS', (i: number) => `orderItems[${i}] must be a JSON object {id, offerId, quantity, dealId}`],
  lineId: ['INVALID_ORDER_ITEM_ID',
    (i: number) => `orderItems[${i}].id must be a string of digits (or an integer) from 1 to ${MAX_ORDER_ID}`],
  lineIdTwice: ['DUPLICATE_ORDER_ITEM_ID', (i: number, id: number, where: string) =>
    `orderItems[${i}].id ${id} already appears ${where}`],
  lineIdTaken: ['ORDER_ITEM_ID_TAKEN', (i: number, id: number) => `orderItems[${i}].id ${id} is a line of another order`],
  quantity: ['INVALID_QUANTITY',
    (i: number) => `orderItems[${i}].quantity must be a number above 0 with at most 3 decimals, less than 100000000000`],
  storeNotFound: ['STORE_NOT_FOUND', (storeId: number) => `storeId ${storeId} is not a store of this seller`],
  retailerNotLinked: ['RETAILER_NOT_LINKED', (retailerId: number) =>
    `retailerId ${retailerId} is not a retailer linked to this seller (PUT /v2/platform/retailers links it)`],
  shopNotFound: ['SHOP_NOT_FOUND', (shopId: number, retailerId: number) =>
    `shopId ${shopId} is not a shop of retailer ${retailerId}`],
  offerNotFound: ['OFFER_NOT_FOUND', (i: number, offerId: number) =>
    `orderItems[${i}].offerId ${offerId} is not an offer of this seller`],
  dealNotFound: ['DEAL_NOT_FOUND', (i: number, dealId: number, offerId: number) =>
    `orderItems[${i}].dealId ${dealId} is not a deal of this seller for offer ${offerId}`],
  dealNotThatDay: ['DEAL_NOT_THAT_DAY', (i: number, dealId: number, dealDate: string, day: string) =>
    `orderItems[${i}].dealId ${dealId} is the deal of ${dealDate}, not of the day of placedAt (${day})`],
  dealSoldOut: ['DEAL_SOLD_OUT', (i: number, dealId: number, left: string) =>
    `orderItems[${i}].quantity would grab deal ${dealId} past its maxQuantity (${left} left)`],
  conflict: ['ORDER_CONFLICT', (orderId: number, fields: string) =>
    `orderId ${orderId} was already placed with other content (${fields}); an order is never edited by sending it again`]
})
export type OrderRowErrorCode = CodeOf<typeof OrderRowErrors>
export type OrderRowError = ItemError<OrderRowErrorCode>

export const OrderText = {
  placed: 'Orders placed'
} as const
