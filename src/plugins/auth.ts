import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { verifyCredential, verifyPlatformKey, type Caller, type PlatformCaller } from '../credentials/service.js'
import type { SellerCredentialKind } from '../db/schema.js'
import { RequestError } from '../errors.js'

/** Where a route expects its credential. */
export type CredentialSource = 'authorization' | 'x-api-key'

declare module 'fastify' {
  interface FastifyInstance {
    /** An onRequest hook that resolves the caller or answers 401 before the body is even read. */
    requireCredential: (kind: SellerCredentialKind, source: CredentialSource) => onRequestHookHandler
    /**
     * The same for a platform route: only a platform key, as a Bearer token. A seller credential here is
     * the same 401 as none at all, and a platform key on a seller route fails requireCredential's kind check.
     */
    requirePlatformKey: () => onRequestHookHandler
  }
  interface FastifyRequest {
    caller: Caller | null
    platformCaller: PlatformCaller | null
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
  app.decorateRequest('platformCaller', null)
  app.decorate('requirePlatformKey', () => {
    return async function authenticatePlatform (request: FastifyRequest, _reply: FastifyReply) {
      const secret = presentedSecret(request, 'authorization')
      const caller = secret === null
        ? null
        : await verifyPlatformKey(app.database.db, secret, app.config.ORDER_EXCHANGE_ENV)
      if (!caller) throw new RequestError.Unauthorized()
      request.platformCaller = caller
    }
  })
  app.decorate('requireCredential', (kind: SellerCredentialKind, source: CredentialSource) => {
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
