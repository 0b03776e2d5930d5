import createError from '@fastify/error'

/*
 * Every error the service answers with, coded, in one place. The messages are the exact texts clients
 * match on (spec section 7 and decisions.md): change them only with the contract.
 */

export const UnauthorizedError = createError('OXS_UNAUTHORIZED', 'Unauthorized', 401)
export const InvalidJsonError = createError('OXS_INVALID_JSON', 'Invalid JSON format', 400)
export const BadRequestError = createError<[string]>('OXS_BAD_REQUEST', '%s', 400)
export const PayloadTooLargeError = createError<[string]>('OXS_PAYLOAD_TOO_LARGE', '%s', 413)
export const NotFoundError = createError('OXS_NOT_FOUND', 'Not found', 404)
export const InternalError = createError('OXS_INTERNAL', 'Internal server error', 500)

/** Per-order error texts of the status update (spec 7.2, decisions.md). */
export const OrderErrorText = {
  notFound: 'Order not found in system',
  invalidStatus: 'Invalid order status',
  reasonRequired: 'Reason is required when rejecting an order',
  notAuthorized: 'Seller is not authorized to update this order',
  notEligible: 'Seller is not eligible to accept orders',
  insufficientPoints: 'Insufficient points to accept this order',
  badOrderId: 'Order_id must be a positive integer',
  storageFailure: 'Order could not be updated',
  cannotChange: (from: string, to: string) => `Cannot change order status from ${from} to ${to}`,
  itemNotObject: 'Order status item must be an object'
} as const

/** Request-level texts of the status update (spec 4.2, 7.1, decisions.md). */
export const StatusUpdateText = {
  success: 'Order statuses updated successfully',
  statusRequired: 'Order status is required',
  tooManyItems: (max: number) => `Order status must contain at most ${max} items`
} as const

/** The envelope of the REST endpoints (spec 4.2): error/status/statusCode/message and maybe data. */
export interface Envelope<D = unknown> {
  error: boolean
  status: boolean
  statusCode: number
  message: string
  data?: D
}

export function failureEnvelope (statusCode: number, message: string): Envelope {
  return { error: true, status: false, statusCode, message }
}

/**
 * Bad input to a GraphQL field (decisions.md "Orders"): becomes a GraphQL error whose
 * extensions.code is BAD_USER_INPUT and whose message and extensions.field name the field.
 */
export class BadUserInputError extends Error {
  override name = 'BadUserInputError'
  readonly extensions: { code: 'BAD_USER_INPUT', field: string }
  constructor (readonly field: string, message: string) {
    super(message)
    this.extensions = { code: 'BAD_USER_INPUT', field }
  }
}

/** Request-level texts of the outstanding shipment sync (decisions.md: the message says what was expected). */
export const SyncErrorText = {
  notAnArray: 'Request body must be a non-empty JSON array of outstanding shipment records',
  tooManyRows: (max: number, got: number) =>
    `Too many outstanding shipment records: at most ${max} per request, got ${got}`
} as const
