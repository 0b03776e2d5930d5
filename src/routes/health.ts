import { sql } from 'drizzle-orm'
import type { FastifyPluginAsync } from 'fastify'

/** Liveness says the process answers; readiness says it can reach its database. */
const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get('/health/live', async () => ({ status: 'ok' }))
  app.get('/health/ready', async (request, reply) => {
    // Shedding load (plugins/load-shedding.ts): not ready for more until it recovers.
    if (app.shedding()) return reply.code(503).send({ status: 'unavailable', reason: 'overloaded' })
    try {
      await app.database.db.execute(sql`select 1`)
      // With a replica: how far behind it is and where reads go. A lagging or lost replica does not make
      // the instance unready: its reads go to the primary meanwhile.
      const replica = app.reads.state()
      return replica.configured ? { status: 'ready', replica: { lagMs: replica.lagMs, reads: replica.target } } : { status: 'ready' }
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed')
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' })
    }
  })
}
export default healthRoutes
