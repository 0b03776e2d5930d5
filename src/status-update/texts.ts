import { unstorableTextRule } from '../db/storable-text.js'

/*
 * The status update's texts, each written once: clients match on them letter for letter (spec 4.2, 7.1,
 * 7.2 and decisions.md "Status update"). Change one only with the contract.
 */

/** Per-order errors, in data.errors[].error. */
export const OrderErrorText = {
  notFound: 'Order not found in system',
  invalidStatus: 'Invalid order status',
  reasonRequired: 'Reason is required when rejecting an order',
  reasonUnstorable: unstorableTextRule('Reason'),
  notAuthorized: 'Seller is not authorized to update this order',
  notEligible: 'Seller is not eligible to accept orders',
  insufficientPoints: 'Insufficient points to accept this order',
  badOrderId: 'Order_id must be a positive integer',
  storageFailure: 'Order could not be updated',
  cannotChange: (from: string, to: string) => `Cannot change order status from ${from} to ${to}`,
  itemNotObject: 'Order status item must be an object'
} as const

/**
 * A machine-readable code beside each per-order text (additive to the contract: `data.errors[].code`),
 * so a client branches on the code and shows the text. One code per text; README "Error codes".
 */
export const OrderErrorCode = {
  notFound: 'ORDER_NOT_FOUND',
  invalidStatus: 'INVALID_STATUS',
  reasonRequired: 'REASON_REQUIRED',
  reasonUnstorable: 'REASON_UNSTORABLE',
  notAuthorized: 'ORDER_NOT_AUTHORIZED',
  notEligible: 'SELLER_NOT_ELIGIBLE',
  insufficientPoints: 'INSUFFICIENT_POINTS',
  badOrderId: 'INVALID_ORDER_ID',
  storageFailure: 'ORDER_NOT_UPDATED',
  cannotChange: 'TRANSITION_NOT_ALLOWED',
  itemNotObject: 'ITEM_NOT_OBJECT'
} as const satisfies Record<keyof typeof OrderErrorText, string>
export type OrderErrorCodeValue = (typeof OrderErrorCode)[keyof typeof OrderErrorCode]

const CANNOT_CHANGE = OrderErrorText.cannotChange('\u0000', '\u0000').split('\u0000')[0]!
const codeByText = new Map<string, OrderErrorCodeValue>(
  (Object.keys(OrderErrorText) as Array<keyof typeof OrderErrorText>)
    .filter((key) => typeof OrderErrorText[key] === 'string')
    .map((key) => [OrderErrorText[key] as string, OrderErrorCode[key]])
)

/** The code of a per-order error text. */
export function orderErrorCode (text: string): OrderErrorCodeValue {
  const code = codeByText.get(text) ?? (text.startsWith(CANNOT_CHANGE) ? OrderErrorCode.cannotChange : undefined)
  if (code === undefined) throw new Error(`no code for the order error ${JSON.stringify(text)}`)
  return code
}

/** Request-level messages of the envelope. */
export const StatusUpdateText = {
  success: 'Order statuses updated successfully',
  statusRequired: 'Order status is required',
  tooManyItems: (max: number) => `Order status must contain at most ${max} items`
} as const

/** Their codes (the envelope's additive `code`). */
export const StatusUpdateCode = {
  statusRequired: 'ORDER_STATUS_REQUIRED',
  tooManyItems: 'TOO_MANY_ITEMS',
  invalidStatus: 'INVALID_STATUS'
} as const

/** The reason an auto-rejection records (history, notifications). */
export const AUTO_REJECT_REASON = 'Not accepted in time'
