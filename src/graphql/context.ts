import type { FastifyRequest } from 'fastify'
import type { Caller } from '../credentials/service.js'
import type { Database } from '../db/client.js'
import { UnauthorizedError } from '../errors.js'

declare module 'mercurius' {
  interface MercuriusContext {
    /** The verified access token's seller (and stores); set by the route's onRequest hook. */
    caller: Caller
    database: Database
    /** BUSINESS_TIMEZONE: the zone in which fromDate/toDate are whole days. */
    timeZone: string
  }
}

/**
 * The per-request context. Mercurius also builds it on its error path, where an unauthenticated request
 * may arrive: then it throws the same 401 the hook would have answered.
 */
export function graphqlContext (request: FastifyRequest): { caller: Caller, database: Database, timeZone: string } {
  if (!request.caller) throw new UnauthorizedError()
  return { caller: request.caller, database: request.server.database, timeZone: request.server.config.BUSINESS_TIMEZONE }
}
