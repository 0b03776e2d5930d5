import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { failureEnvelope } from '../errors.js'

/*
 * One root error handler: every error becomes the REST envelope (or a GraphQL error body on the GraphQL
 * endpoint) with a message safe to show. Fastify's own parser messages never leak through, and a 5xx
 * says only "Internal server error" while the details go to the log with the request id.
 */

interface Rendered { statusCode: number, message: string, code: string }

function render (error: FastifyError, bodyLimit: number): Rendered {
  const code = error.code ?? ''
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { statusCode: 413, message: `Request body is larger than the limit of ${bodyLimit} bytes`, code: 'PAYLOAD_TOO_LARGE' }
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { statusCode: 415, message: 'Content-Type must be application/json', code: 'UNSUPPORTED_MEDIA_TYPE' }
  }
  if (error instanceof SyntaxError || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return { statusCode: 400, message: 'Invalid JSON format', code: 'INVALID_JSON' }
  }
  const statusCode = error.statusCode ?? 500
  if (statusCode >= 500) return { statusCode: 500, message: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }
  if (error.validation) return { statusCode: 400, message: `Invalid request: ${error.message}`, code: 'BAD_REQUEST' }
  if (statusCode === 401) return { statusCode, message: 'Unauthorized', code: 'UNAUTHENTICATED' }
  return { statusCode, message: error.message, code: code.startsWith('OXS_') ? code.slice(4) : 'BAD_REQUEST' }
}

export function isGraphqlRequest (request: FastifyRequest): boolean {
  return request.url.startsWith('/v2/graphql') || request.url.startsWith('/graphiql')
}

export default fp(async function errorHandlerPlugin (app) {
  app.setErrorHandler(function rootErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const bodyLimit = request.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 0
    const rendered = render(error, bodyLimit)
    if (rendered.statusCode >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: error.code, statusCode: rendered.statusCode, reason: error.message }, 'request rejected')
    reply.code(rendered.statusCode)
    if (isGraphqlRequest(request)) {
      return reply.send({ data: null, errors: [{ message: rendered.message, extensions: { code: rendered.code } }] })
    }
    return reply.send(failureEnvelope(rendered.statusCode, rendered.message))
  })

  app.setNotFoundHandler(function notFound (request, reply) {
    reply.code(404).send(failureEnvelope(404, `Route ${request.method} ${request.url.split('?')[0]} not found`))
  })
}, { name: 'error-handler' })
