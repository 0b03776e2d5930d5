import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/*
 * CORS for browser frontends on other origins (@fastify/cors). Allowed: the origins of CORS_ORIGINS, and
 * always the service's own origin (its explorers). A request from any other origin gets no CORS headers,
 * so the browser keeps the answer from the page; a preflight from it is answered like any OPTIONS (204
 * with Allow) without them. Requests without an Origin (servers, curl) are not CORS requests at all.
 */

/** Request headers a browser may send: the credentials of either kind, JSON, and an idempotency key. */
export const CORS_ALLOWED_HEADERS = ['authorization', 'x-api-key', 'content-type', 'idempotency-key', 'x-request-id', 'accept']
/** Response headers a page may read. */
export const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'ratelimit', 'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']

/**
 * One allowed origin: exact (`https://erp.example.com`), or with any port (`http://localhost:*`). A
 * pattern is matched whole, scheme and host included: `https://*.example.com` is not a form it takes.
 */
export function originMatcher (patterns: readonly string[]): (origin: string) => boolean {
  const exact = new Set<string>()
  const anyPort: string[] = []
  for (const pattern of patterns) {
    if (pattern.endsWith(':*')) anyPort.push(pattern.slice(0, -2))
    else exact.add(pattern.replace(/\/+$/, ''))
  }
  return (origin) => {
    if (exact.has(origin)) return true
    const port = /^(.*):(\d{1,5})$/.exec(origin)
    return anyPort.includes(port ? port[1]! : origin)
  }
}

/** The service's own origin as this request reached it (the explorers are served from it). */
function ownOrigin (request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

type CorsCallback = (error: Error | null, options: FastifyCorsOptions) => void

async function corsPlugin (app: FastifyInstance, options: { origins: readonly string[] }): Promise<void> {
  const allowed = originMatcher(options.origins)
  const allowedOptions: FastifyCorsOptions = {
    methods: ['GET', 'POST', 'PUT'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false
  }
  await app.register(cors, () => (request: FastifyRequest, callback: CorsCallback) => {
    const origin = request.headers.origin
    if (typeof origin !== 'string' || !(origin === ownOrigin(request) || allowed(origin))) {
      callback(null, { origin: false })
      return
    }
    callback(null, { ...allowedOptions, origin })
  })
}

export default fp(corsPlugin, { name: 'cors' })
