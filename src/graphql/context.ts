import type { FastifyRequest } from 'fastify'
import type { Caller } from '../credentials/service.js'
import type { Db } from '../db/client.js'
import { RequestError } from '../errors.js'

declare module 'mercurius' {
  interface MercuriusContext {
    /** The verified access token's seller (and stores); set by the route's onRequest hook. */
    caller: Caller
    db: Db
    /** BUSINESS_TIMEZONE: the zone in which fromDate/toDate are whole days. */
    timeZone: string
  }
}

/** The per-request context; the route's onRequest hook has verified the caller (else it answered 401). */
export function graphqlContext (request: FastifyRequest): { caller: Caller, db: Db, timeZone: string } {
  if (!request.caller) throw new RequestError.Unauthorized()
  // The replica while it is close enough behind the primary (db/read-router.ts), else the primary.
  const reads = request.server.reads
  const target = reads.target()
  request.server.metrics.graphqlReads.inc({ database: target })
  return { caller: request.caller, db: reads.db(target), timeZone: request.server.config.BUSINESS_TIMEZONE }
}
