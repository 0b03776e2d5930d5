import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { verifyCredential, type Caller } from '../credentials/service.js'
import type { CredentialKind } from '../db/schema.js'
import { RequestError } from '../errors.js'

/** Where a route expects its credential. */
export type CredentialSource = 'authorization' | 'x-api-key'

declare module 'fastify' {
  interface FastifyInstance {
    /** An onRequest hook that resolves the caller or answers 401 before the body is even read. */
    requireCredential: (kind: CredentialKind, source: CredentialSource) => onRequestHookHandler
  }
  interface FastifyRequest {
    caller: Caller | null
  }
}

function presentedSecret (request: FastifyRequest, source: CredentialSource): string | null {
  if (source === 'x-api-key') {
    const v = request.headers['x-api-key']
    return typeof v === 'string' && v.length > 0 ? v.trim() : null
  }
  const header = request.headers.authorization
  if (typeof header !== 'string') return null
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return m ? m[1] : null
}

export default fp(async function authPlugin (app) {
  app.decorateRequest('caller', null)
  app.decorate('requireCredential', (kind: CredentialKind, source: CredentialSource) => {
    return async function authenticate (request: FastifyRequest, _reply: FastifyReply) {
      const secret = presentedSecret(request, source)
      const caller = secret === null
        ? null
        : await verifyCredential(app.database.db, secret, { kind, environment: app.config.ORDER_EXCHANGE_ENV })
      if (!caller) throw new RequestError.Unauthorized()
      request.caller = caller
    }
  })
}, { name: 'auth', dependencies: ['database'] })
