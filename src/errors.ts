import createError from '@fastify/error'

/*
 * The request-level errors of every endpoint, in one table: the HTTP status, the exact message (the
 * contract's: docs/api/errors.md) and the code a client can branch on (a GraphQL
 * error's extensions.code). The root error handler (plugins/error-handler.ts) renders each in its
 * endpoint's own shape. Texts of one feature live beside it (status-update/texts.ts, shipments/texts.ts).
 */

export const RequestError = {
  Unauthorized: createError('UNAUTHENTICATED', 'Unauthorized', 401),
  InvalidJson: createError('INVALID_JSON', 'Invalid JSON format', 400),
  BadRequest: createError<[string]>('BAD_REQUEST', '%s', 400),
  /** Arrays and objects nested deeper than the bound (http/json-body.ts MAX_JSON_DEPTH): refused before parsing. */
  JsonTooDeep: createError<[number]>('JSON_TOO_DEEP', 'JSON body is nested more than %s levels deep', 400),
  /** A number a double does not hold exactly, on a route that stores numbers exactly (the platform's). */
  InexactNumber: createError<[string, string, string]>('INEXACT_NUMBER',
    '%s: the number %s cannot be stored exactly (as a JSON number it reads as %s); send it as a numeric string or with at most 15 significant digits', 400),
  NotFound: createError<[string, string]>('NOT_FOUND', 'Route %s %s not found', 404),
  MethodNotAllowed: createError<[string, string, string]>('METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s; allowed: %s', 405),
  /** The first request with this Idempotency-Key is still running (longer than the lock timeout). */
  IdempotencyKeyInUse: createError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed: retry when it has finished', 409),
  IdempotencyKeyReused: createError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request: use a new key for a new request', 422),
  PayloadTooLarge: createError<[number]>('PAYLOAD_TOO_LARGE', 'Request body is larger than the limit of %s bytes', 413),
  UnsupportedMediaType: createError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', 415),
  /** Over the credential's rate limit or GraphQL cost budget; Retry-After says when to try again. */
  RateLimited: createError<[string]>('RATE_LIMITED', 'Rate limit exceeded: %s', 429),
  Internal: createError('INTERNAL_SERVER_ERROR', 'Internal server error', 500),
  /** The database cannot be reached (lost connection, restart): a retry shortly after is safe. */
  ServiceUnavailable: createError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable: the database cannot be reached; retry shortly', 503),
  /** The process is overloaded (event loop lag, heap): shed before it falls over; try again shortly. */
  Overloaded: createError('OVERLOADED', 'Service temporarily overloaded; retry shortly', 503),
  /** A statement ran past the session's statement_timeout or lock_timeout: nothing was applied. */
  Timeout: createError('TIMEOUT', 'The database took too long to answer; nothing was applied, retry shortly', 503)
} as const

const REQUEST_ERRORS: ReadonlyArray<new (...args: never[]) => Error> = Object.values(RequestError)

/** Whether an error is one of the request errors above (rendered as is, never as a 500). */
export function isRequestError (error: unknown): boolean {
  return REQUEST_ERRORS.some((E) => error instanceof E)
}

/** A 400 with a feature's own code and text (the contract's texts live beside their feature). */
export function badRequest (code: string, message: string): InstanceType<typeof RequestError.BadRequest> {
  const error = new RequestError.BadRequest(message)
  error.code = code
  return error
}

/** A request error of any 4xx or 503 status with a feature's own code and text (webhooks/texts.ts). */
export function requestError (statusCode: number, code: string, message: string):
InstanceType<typeof RequestError.BadRequest> {
  const error = badRequest(code, message)
  error.statusCode = statusCode
  return error
}

/** Seconds a client is asked to wait (Retry-After) before retrying a 503. */
export const RETRY_AFTER_SECONDS = 5

/**
 * A value of a read's input that the contract does not allow (docs/api/orders.md). It names the
 * field; the GraphQL endpoint answers it as BAD_USER_INPUT with that field.
 */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError'
  constructor (readonly field: string, message: string) {
    super(message)
  }
}
