import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { RequestError } from '../errors.js'
import { MAX_JSON_DEPTH, pathAt, scanJson } from '../http/json-body.js'

/*
 * The one application/json parser of every route that has its body parsed (the status update, the
 * platform and webhook routes, POST /v2/graphql): Fastify's own (secure-json-parse, the app's
 * __proto__/constructor rules, an empty body refused), behind the scan of http/json-body.ts: a body
 * nested deeper than MAX_JSON_DEPTH is a 400 JSON_TOO_DEEP before anything parses it, and on a route
 * that says `exactNumbers` a number a double does not hold exactly is a 400 INEXACT_NUMBER naming its
 * path. An empty body on a route that says `noBody` is no body. The routes that stream their body
 * (streamed-json-array.ts) bound depth in their own scanner.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Numbers are stored exactly: one a double would round (0.1000000000000000000001) is refused. */
    exactNumbers?: boolean
    /** The route reads no body: an empty one sent as application/json is no body, not invalid JSON. */
    noBody?: boolean
  }
}

type Done = (err: Error | null, body?: unknown) => void

/** Refuses a too-deep body or (exactNumbers) an inexact number; else hands the text to `parse`. */
export function checkedJsonParser (parse: (request: FastifyRequest, body: string, done: Done) => void) {
  return (request: FastifyRequest, body: string | Buffer, done: Done): void => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    // Many HTTP clients send `Content-Type: application/json` on every call: on a route that reads no body
    // (POST …/test, DELETE …/{id}), an empty one is no body, not invalid JSON. A route that reads one
    // (a platform batch, whose schema only documents it) still answers INVALID_JSON to an empty body.
    if (request.routeOptions.config?.noBody === true && text.trim() === '') {
      done(null, undefined)
      return
    }
    const exactNumbers = request.routeOptions.config?.exactNumbers === true
    const scan = scanJson(text, { exactNumbers })
    if (scan.kind === 'too-deep') {
      done(new RequestError.JsonTooDeep(MAX_JSON_DEPTH))
      return
    }
    if (scan.kind === 'ok') {
      parse(request, text, done)
      return
    }
    // An inexact number: only once the body is known to be JSON is it named (else: Invalid JSON format).
    parse(request, text, (err) => {
      if (err !== null) { done(err); return }
      const shown = scan.number.length > 40 ? `${scan.number.slice(0, 40)}…` : scan.number
      done(new RequestError.InexactNumber(pathAt(text, scan.at), shown, String(Number(scan.number))))
    })
  }
}

export default fp(async function jsonBodyPlugin (app: FastifyInstance) {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning) as unknown as
  (request: FastifyRequest, body: string, done: Done) => void
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, checkedJsonParser(parse))
}, { name: 'json-body' })
