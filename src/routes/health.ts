import type { FastifyPluginAsync } from 'fastify'

/** Liveness says the process answers; readiness says it can reach its database. */
const healthRoutes: FastifyPluginAsync = async (app) => {
  app.get('/health/live', async () => ({ status: 'ok' }))
  app.get('/health/ready', async (request, reply) => {
    try {
      await app.database.sql`select 1`
      return { status: 'ready' }
    } catch (err) {
      request.log.warn({ err }, 'readiness check failed')
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' })
    }
  })
}
export default healthRoutes
