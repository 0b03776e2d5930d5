/*
 * What can go wrong with a call, as types a caller can branch on. A per-order or per-row failure is
 * never an exception: it is part of the result (updateStatuses, sync). These are for requests that got
 * no usable answer.
 */

/** Every error of this client. */
export class OrderExchangeError extends Error {
  override name = 'OrderExchangeError'
}

/** The service answered with an error status (after any retries). */
export class HttpError extends OrderExchangeError {
  override name = 'HttpError'
  /** The service's code for what went wrong (UNAUTHENTICATED, INVALID_JSON, RATE_LIMITED, …), when it sent one. */
  readonly code: string | undefined

  constructor (
    readonly status: number,
    message: string,
    /** The parsed answer (the REST envelope or a GraphQL body), when it was JSON. */
    readonly body: unknown
  ) {
    super(message)
    const answer = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown, errors?: Array<{ extensions?: { code?: unknown } }> }
    const code = answer.code ?? (Array.isArray(answer.errors) ? answer.errors[0]?.extensions?.code : undefined)
    this.code = typeof code === 'string' ? code : undefined
  }
}

/** 401: the credential is missing, malformed, revoked, of the other kind or of the other environment. */
export class UnauthorizedError extends HttpError {
  override name = 'UnauthorizedError'
}

/** 400 (other than per-item results): the request itself is wrong; the message says what. */
export class BadRequestError extends HttpError {
  override name = 'BadRequestError'
}

/** 413: the body is larger than the service takes. */
export class PayloadTooLargeError extends HttpError {
  override name = 'PayloadTooLargeError'
}

/** 429 or 5xx still failing after the retry budget was spent. */
export class ServiceUnavailableError extends HttpError {
  override name = 'ServiceUnavailableError'
}

/** No answer at all (connection refused or reset, DNS), after the retry budget was spent. */
export class NetworkError extends OrderExchangeError {
  override name = 'NetworkError'
  constructor (message: string, readonly cause: unknown) {
    super(message)
  }
}

/** A GraphQL answer with errors and no data to use; `errors` carry each message and code. */
export class GraphqlError extends HttpError {
  override name = 'GraphqlError'
  constructor (
    status: number,
    readonly errors: Array<{ message: string, extensions?: { code?: string, field?: string } }>,
    body: unknown
  ) {
    super(status, errors.map((e) => e.extensions?.code ? `${e.extensions.code}: ${e.message}` : e.message).join('; '), body)
  }
}

/** The call was aborted through its AbortSignal. */
export class AbortError extends OrderExchangeError {
  override name = 'AbortError'
}
