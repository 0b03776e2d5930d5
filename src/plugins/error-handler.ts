import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseTimeout, isDatabaseUnavailable } from '../db/unavailable.js'
import { isRequestError, RequestError, RETRY_AFTER_SECONDS } from '../errors.js'
import { graphqlErrorBody } from '../graphql/error-body.js'
import { sendGraphql } from '../graphql/media-type.js'
import { GRAPHQL_PATH } from '../graphql/route.js'
import { failure } from '../routes/envelope.js'

/*
 * One root error handler: every error becomes one of the request errors of src/errors.ts, rendered in
 * its endpoint's shape (the REST envelope, or a GraphQL error body on the GraphQL endpoint). Fastify's
 * own parser messages never leak through, and a 5xx says only "Internal server error" while the details
 * go to the log with the request id. A database that cannot be reached is a 503 with Retry-After, not a
 * 500: the client did nothing wrong and its retry will work once the database is back.
 */

/** The request error an error stands for. */
function asRequestError (error: FastifyError, bodyLimit: number): FastifyError {
  if (isRequestError(error)) return error
  const code = error.code ?? ''
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new RequestError.PayloadTooLarge(bodyLimit)
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new RequestError.UnsupportedMediaType()
  if (error instanceof SyntaxError || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new RequestError.InvalidJson()
  }
  if (isDatabaseUnavailable(error)) return new RequestError.ServiceUnavailable()
  if (isDatabaseTimeout(error)) return new RequestError.Timeout()
  if ((error.statusCode ?? 500) >= 500) return new RequestError.Internal()
  if (error.validation) return new RequestError.BadRequest(`Invalid request: ${error.message}`)
  if (error.statusCode === 401) return new RequestError.Unauthorized()
  // Any other client error of the framework keeps its status, with its (safe) message.
  const other = new RequestError.BadRequest(error.message)
  other.statusCode = error.statusCode ?? 400
  return other
}

function isGraphqlRequest (request: FastifyRequest): boolean {
  return request.url === GRAPHQL_PATH || request.url.startsWith(`${GRAPHQL_PATH}?`)
}

function send (request: FastifyRequest, reply: FastifyReply, error: FastifyError): FastifyReply {
  const statusCode = error.statusCode!
  reply.code(statusCode)
  if (statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  if (isGraphqlRequest(request)) return sendGraphql(request, reply, statusCode, graphqlErrorBody(error.message, error.code), statusCode < 500)
  return reply.send(failure(statusCode, error.message, error.code))
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/** The methods some route answers on this path (routes here are static paths). */
function allowedMethods (app: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => app.hasRoute({ url: path, method }))
}

export default fp(async function errorHandlerPlugin (app) {
  app.setErrorHandler(function rootErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const bodyLimit = request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 0
    const rendered = asRequestError(error, bodyLimit)
    if (rendered.statusCode === 503) request.log.warn({ err: error }, 'database unavailable')
    else if (rendered.statusCode! >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: error.code, statusCode: rendered.statusCode, reason: error.message.slice(0, 300) }, 'request rejected')
    return send(request, reply, rendered)
  })

  // A path that exists with other methods: 405 with Allow (OPTIONS: 204 with Allow), as HTTP clients
  // expect; only a path that exists for no method is 404.
  app.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?')[0]
    const allowed = allowedMethods(app, path)
    if (allowed.length === 0) return send(request, reply, new RequestError.NotFound(request.method, path))
    const allow = [...allowed, 'OPTIONS'].join(', ')
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    return send(request, reply, new RequestError.MethodNotAllowed(request.method, path, allow))
  })
}, { name: 'error-handler' })
