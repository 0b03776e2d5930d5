import { unstorableTextRule } from '../db/storable-text.js'
import { itemErrors } from '../item-error.js'

/*
 * The status update's texts, each written once: clients match on them letter for letter (docs/api/status-updates.md).
 * Change one only with the contract.
 */

/**
 * Per-order errors: the text (data.errors[].error) and, additive to the contract, the code beside it
 * (data.errors[].code) that a client branches on. One code per text; docs/api/errors.md.
 */
export const OrderErrors = itemErrors({
  notFound: ['ORDER_NOT_FOUND', 'Order not found in system'],
  invalidStatus: ['INVALID_STATUS', 'Invalid order status'],
  reasonRequired: ['REASON_REQUIRED', 'Reason is required when rejecting an order'],
  reasonUnstorable: ['REASON_UNSTORABLE', unstorableTextRule('Reason')],
  notAuthorized: ['ORDER_NOT_AUTHORIZED', 'Seller is not authorized to update this order'],
  notEligible: ['SELLER_NOT_ELIGIBLE', 'Seller is not eligible to accept orders'],
  insufficientPoints: ['INSUFFICIENT_POINTS', 'Insufficient points to accept this order'],
  badOrderId: ['INVALID_ORDER_ID', 'Order_id must be a positive integer'],
  storageFailure: ['ORDER_NOT_UPDATED', 'Order could not be updated'],
  cannotChange: ['TRANSITION_NOT_ALLOWED',
    (from: string, to: string) => `Cannot change order status from ${from} to ${to}`],
  itemNotObject: ['ITEM_NOT_OBJECT', 'Order status item must be an object']
})

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
