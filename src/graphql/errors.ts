import { GraphQLError, type ExecutionResult, type FormattedExecutionResult } from 'graphql'
import type { FastifyBaseLogger } from 'fastify'
import { isDatabaseTimeout, isDatabaseUnavailable } from '../db/unavailable.js'
import { InvalidInputError, RequestError } from '../errors.js'
import { withCode } from './coded-error.js'

/*
 * Every GraphQL error leaves with an extensions.code a client can branch on, and nothing internal leaks:
 * an error the code did not throw on purpose (a lost database connection, a bug) is logged in full and
 * answered as "Internal server error". Authentication, JSON and body-size errors never get here: the
 * plugin's error handler renders them (error-body.ts).
 */

interface Classified { error: GraphQLError, internal: boolean, unavailable: boolean }

/**
 * A request-level error that reached here uncoded (parse, validation and variables are coded where they
 * are raised, admission.ts): Mercurius's own checks of the body, or execution refusing to start (no such
 * operation). Either way the document never ran.
 */
function classifyRequestError (error: Error & { code?: string, validation?: unknown }): GraphQLError {
  const gql = error instanceof GraphQLError ? error : new GraphQLError(error.message)
  if (typeof gql.extensions.code === 'string') return gql
  // The HTTP body itself is wrong: no query, or fields of the wrong JSON type.
  if (error.code === 'MER_ERR_GQL_PERSISTED_QUERY_NOT_FOUND') return withCode(gql, 'BAD_REQUEST', 'The request body must contain a query')
  if (error.validation !== undefined) return withCode(gql, 'BAD_REQUEST', `Invalid request: ${error.message}`)
  if (error.code === 'MER_ERR_GQL_QUERY_DEPTH') return withCode(gql, 'QUERY_TOO_DEEP', error.message.replace(/^`|`$/g, ''))
  return withCode(gql, 'GRAPHQL_VALIDATION_FAILED')
}

/** An error raised while executing: coded ones are meant for the client, the rest are internal. */
function classifyFieldError (raw: GraphQLError | Error): Classified {
  // Execution normally reports GraphQLErrors, but a plain Error must not break the formatter.
  const error = raw instanceof GraphQLError ? raw : new GraphQLError(raw.message, { originalError: raw })
  if (error.originalError === undefined || error.originalError === null) {
    return { error: classifyRequestError(error), internal: false, unavailable: false }
  }
  if (error.originalError instanceof InvalidInputError) {
    return { error: withCode(error, 'BAD_USER_INPUT', error.message, { field: error.originalError.field }), internal: false, unavailable: false }
  }
  if (typeof error.extensions.code === 'string') return { error, internal: false, unavailable: false }
  if (isDatabaseUnavailable(error.originalError)) {
    return { error: withCode(error, 'SERVICE_UNAVAILABLE', new RequestError.ServiceUnavailable().message), internal: false, unavailable: true }
  }
  if (isDatabaseTimeout(error.originalError)) {
    return { error: withCode(error, 'TIMEOUT', new RequestError.Timeout().message), internal: false, unavailable: true }
  }
  return { error: withCode(error, 'INTERNAL_SERVER_ERROR', new RequestError.Internal().message), internal: true, unavailable: false }
}

/**
 * The errors of an execution (mercurius' errorFormatter): each coded; status 200 when there is data,
 * 400 when the request could not run (bad variables), 503 when the database could not be reached or was
 * too slow and no field was answered, 500 when it failed inside.
 */
export function formatExecutionErrors (
  errors: ReadonlyArray<GraphQLError | Error>, data: ExecutionResult['data'], log: FastifyBaseLogger
): { statusCode: number, response: FormattedExecutionResult } {
  let internal = false
  let unavailable = false
  const out = errors.map((error) => {
    const classified = classifyFieldError(error)
    if (classified.internal) {
      internal = true
      log.error({ err: (error as GraphQLError).originalError ?? error, path: classified.error.path }, 'graphql resolver failed')
    } else if (classified.unavailable) {
      unavailable = true
      log.warn({ err: (error as GraphQLError).originalError, path: classified.error.path }, 'database unavailable or too slow')
    }
    return classified.error
  })
  // Nothing answered because the database was away or too slow: 503 with Retry-After, so clients retry
  // (a bad input value also leaves its field null, but is the client's to fix: still 200 with the error).
  const nothingAnswered = !data || Object.values(data).every((value) => value === null)
  const statusCode = unavailable && nothingAnswered ? 503 : data ? 200 : internal ? 500 : 400
  return { statusCode, response: { data: data ?? null, errors: out.map((e) => e.toJSON()) } }
}

/**
 * A document rejected before it ran (mercurius' route error handler): mercurius wraps the real errors
 * (syntax, validation, depth, variables) in one error's `errors`; each gets its code. Always 400.
 */
export function formatRejectedRequest (
  error: Error & { errors?: Error[] }
): { statusCode: number, response: FormattedExecutionResult } {
  const errors = Array.isArray(error.errors) ? error.errors : [error]
  return { statusCode: 400, response: { data: null, errors: errors.map((e) => classifyRequestError(e).toJSON()) } }
}
