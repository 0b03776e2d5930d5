import fp from 'fastify-plugin'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isDatabaseTimeout, isDatabaseUnavailable } from '../db/unavailable.js'
import { isRequestError, RequestError, RETRY_AFTER_SECONDS } from '../errors.js'
import { failure } from '../rest-envelope.js'

/*
 * One root error handler: every error becomes one of the request errors of src/errors.ts, rendered as the
 * REST envelope. An interface with another shape sets its own handler on its routes with the same rules
 * (graphql/error-handler.ts), and claims its paths for the 404/405 answers here. Fastify's
 * own parser messages never leak through, and a 5xx says only "Internal server error" while the details
 * go to the log with the request id. A database that cannot be reached is a 503 with Retry-After, not a
 * 500: the client did nothing wrong and its retry will work once the database is back.
 */

/** Renders a request error for a path whose routes answer in another shape than the REST envelope. */
export type RequestErrorRenderer = (request: FastifyRequest, reply: FastifyReply, error: FastifyError) => FastifyReply

declare module 'fastify' {
  interface FastifyInstance {
    /** Answers 404/405 on `path` (which has no route for the method) in that interface's own shape. */
    renderRequestErrorsOn: (path: string, render: RequestErrorRenderer) => void
  }
}

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

/** The request error of an error raised while handling `request`. */
export function requestErrorOf (error: FastifyError, request: FastifyRequest): FastifyError {
  return asRequestError(error, request.routeOptions.bodyLimit ?? request.server.initialConfig.bodyLimit ?? 0)
}

/**
 * Unreachable database: warn, with the error; any other 503 (load shed, a feature not configured): warn,
 * one line with its code, no stack (nothing failed); a 5xx: the whole error; a client's mistake: one line.
 */
export function logRequestError (request: FastifyRequest, error: FastifyError, rendered: FastifyError): void {
  if (rendered.statusCode === 503 && isDatabaseUnavailable(error)) request.log.warn({ err: error }, 'database unavailable')
  else if (rendered.statusCode === 503) request.log.warn({ code: rendered.code, statusCode: 503 }, `service unavailable: ${rendered.message}`)
  else if (rendered.statusCode! >= 500) request.log.error({ err: error }, 'request failed')
  else {
    const reason = error.message.slice(0, 300)
    request.log.info({ code: error.code, statusCode: rendered.statusCode, reason }, 'request rejected')
  }
}

function sendRest (_request: FastifyRequest, reply: FastifyReply, error: FastifyError): FastifyReply {
  const statusCode = error.statusCode!
  reply.code(statusCode)
  if (statusCode === 503) reply.header('retry-after', String(RETRY_AFTER_SECONDS))
  return reply.send(failure(statusCode, error.message, error.code))
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * A route's URL as a matcher of request paths: `:name` stands for one non-empty segment, `*` for the rest.
 * app.hasRoute() compares route definitions, not paths, so it cannot see that /v2/webhooks/endpoints/3f0c…
 * is /v2/webhooks/endpoints/:id; this can. (A parameter's own regex, unused here, is read as any segment.)
 */
function pathMatcher (url: string): RegExp {
  const pattern = url.split(/(:\w+(?:\([^)]*\))?|\*)/).map((part, i) => {
    if (i % 2 === 1) return part === '*' ? '.*' : '[^/]+'
    return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  }).join('')
  return new RegExp(`^${pattern}$`)
}

/** A route URL's matcher and the methods its routes answer on. */
type KnownRoute = { matcher: RegExp, methods: Set<string> }

/** The methods the routes whose URL matches a path answer on, in METHODS' order. */
function allowedMethods (routes: ReadonlyMap<string, KnownRoute>, path: string): string[] {
  const allowed = new Set<string>()
  for (const { matcher, methods } of routes.values()) {
    if (matcher.test(path)) for (const method of methods) allowed.add(method)
  }
  return METHODS.filter((method) => allowed.has(method))
}

export default fp(async function errorHandlerPlugin (app) {
  app.setErrorHandler(function rootErrorHandler (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const rendered = requestErrorOf(error, request)
    logRequestError(request, error, rendered)
    return sendRest(request, reply, rendered)
  })

  const renderers = new Map<string, RequestErrorRenderer>()
  app.decorate('renderRequestErrorsOn', (path: string, render: RequestErrorRenderer) => { renderers.set(path, render) })

  // Every route added after this plugin (all of them: app.ts registers it before any route), by URL, with
  // the methods it answers. OPTIONS is left out: it is answered here, and a catch-all OPTIONS route would
  // make every path look like one that exists.
  const routes = new Map<string, KnownRoute>()
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'OPTIONS')
    if (methods.length === 0) return
    const known = routes.get(route.url) ?? { matcher: pathMatcher(route.url), methods: new Set<string>() }
    for (const method of methods) known.methods.add(method)
    routes.set(route.url, known)
  })

  // A path that exists with other methods: 405 with Allow (OPTIONS: 204 with Allow), as HTTP clients
  // expect; only a path that exists for no method is 404. Paths with parameters included: PUT on
  // /v2/webhooks/endpoints/{id} is a 405 whether or not that endpoint exists (the method is wrong for
  // every id), and says so before any credential is looked at, like the static paths' 405.
  app.setNotFoundHandler(function notFound (request, reply) {
    const path = request.url.split('?')[0]
    const send = renderers.get(path) ?? sendRest
    const allowed = allowedMethods(routes, path)
    // A route that takes this method and still ends here (reply.callNotFound(): an asset that does not exist)
    // found nothing: 404, not a 405 that would name this very method as allowed.
    if (allowed.length === 0 || allowed.includes(request.method)) {
      return send(request, reply, new RequestError.NotFound(request.method, path))
    }
    const allow = [...allowed, 'OPTIONS'].join(', ')
    reply.header('allow', allow)
    if (request.method === 'OPTIONS') return reply.code(204).send()
    return send(request, reply, new RequestError.MethodNotAllowed(request.method, path, allow))
  })
}, { name: 'error-handler' })
