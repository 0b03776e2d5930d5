import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { RETRY_AFTER_SECONDS } from '../errors.js'
import { logRequestError, requestErrorOf } from '../plugins/error-handler.js'
import { sendGraphqlErrors } from './error-body.js'

/*
 * The GraphQL routes' own error handler: the same request errors as every endpoint (src/errors.ts, read
 * by the root handler's rules), answered as a GraphQL error body.
 */

/** Renders a request error (already one of src/errors.ts) as a GraphQL answer. */
export function sendGraphqlRequestError (
  request: FastifyRequest, reply: FastifyReply, error: FastifyError
): FastifyReply {
  const statusCode = error.statusCode!
  if (statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return sendGraphqlErrors(request, reply, statusCode, [{ message: error.message, extensions: { code: error.code } }])
}

export function graphqlErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const rendered = requestErrorOf(error, request)
  logRequestError(request, error, rendered)
  return sendGraphqlRequestError(request, reply, rendered)
}
