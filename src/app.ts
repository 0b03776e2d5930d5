import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import type { Database } from './db/client.js'
import databasePlugin from './plugins/database.js'
import errorHandlerPlugin from './plugins/error-handler.js'
import authPlugin from './plugins/auth.js'
import healthRoutes from './routes/health.js'
import graphqlPlugin from './graphql/plugin.js'
import statusUpdateRoutes from './status-update/route.js'
import shipmentSyncRoutes from './shipments/sync-route.js'

export interface BuildOptions {
  config: Config
  database: Database
  /** A pino logger (server.ts) or none (tests). */
  logger?: FastifyBaseLogger
}

/**
 * Builds the whole application from a config and an open database. It does not listen and owns no
 * connection: server.ts (or a test) opens the database, builds, listens and closes.
 */
export async function buildApp ({ config, database, logger }: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false } }
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addHook('onSend', async (request, reply) => { reply.header('x-request-id', request.id) })

  await app.register(databasePlugin, { config, database })
  await app.register(errorHandlerPlugin)
  await app.register(authPlugin)
  await app.register(healthRoutes)
  await app.register(graphqlPlugin)
  await app.register(statusUpdateRoutes)
  await app.register(shipmentSyncRoutes)
  return app
}
