import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import type { Redis } from 'ioredis'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { corsOrigins, explorerEnabled, type Config } from './config.js'
import type { Database } from './db/client.js'
import type { ReadRouter } from './db/read-router.js'
import databasePlugin from './plugins/database.js'
import errorHandlerPlugin from './plugins/error-handler.js'
import jsonBodyPlugin from './plugins/json-body.js'
import gracefulClosePlugin from './plugins/graceful-close.js'
import authPlugin from './plugins/auth.js'
import idempotencyPlugin from './plugins/idempotency.js'
import corsPlugin from './plugins/cors.js'
import rateLimitPlugin from './plugins/rate-limit.js'
import loadSheddingPlugin from './plugins/load-shedding.js'
import metricsPlugin from './plugins/metrics.js'
import { createMetrics, type ServiceMetrics } from './metrics.js'
import { RequestError } from './errors.js'
import { failure } from './rest-envelope.js'
import healthRoutes from './routes/health.js'
import graphqlPlugin from './graphql/plugin.js'
import { GRAPHQL_PATH } from './graphql/route.js'
import graphiqlRoutes from './routes/graphiql.js'
import openapiPlugin from './routes/openapi.js'
import statusUpdateRoutes from './routes/status-update.js'
import shipmentSyncRoutes from './routes/shipment-sync.js'
import referencesSyncRoutes from './routes/references-sync.js'
import { ReferenceEngine } from './references/reference-engine.js'
import platformRoutes from './routes/platform.js'
import platformMoneyRoutes from './routes/platform-money.js'
import webhookEndpointRoutes from './routes/webhook-endpoints.js'
import type { Tracing } from './tracing/tracing.js'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface BuildOptions {
  config: Config
  database: Database
  /** Where GraphQL reads go (READ_DATABASE_URL); absent: the primary. */
  reads?: ReadRouter
  /** A pino logger (server.ts) or none (tests). */
  logger?: FastifyBaseLogger
  /** Where rate-limit counters are shared by every instance (REDIS_URL); absent: counted in this process. */
  redis?: Redis
  /** The process's metrics (server.ts shares them with the worker); a fresh set when absent. */
  metrics?: ServiceMetrics
  /** OpenTelemetry, when server.ts started it (tracing/start.ts); absent: no spans, nothing registered. */
  tracing?: Tracing | null
}

/**
 * Builds the whole application from a config and an open database. It does not listen and owns no
 * connection: server.ts (or a test) opens the database, builds, listens and closes.
 */
export async function buildApp (
  { config, database, reads, logger, redis, metrics = createMetrics(), tracing = null }: BuildOptions
): Promise<FastifyInstance> {
  const app = Fastify({
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // A client gets this long to send a whole request; slower ones are cut off (408) before any handler.
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    // A client's x-request-id is kept only when it looks like an id: it goes into every log line.
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
    return503OnClosing: true,
    // A "__proto__" or "constructor.prototype" key is dropped like any other unknown key, rather than
    // failing the whole body as invalid JSON (JSON.parse never lets it touch a prototype anyway).
    onProtoPoisoning: 'remove',
    onConstructorPoisoning: 'remove',
    ajv: { customOptions: { coerceTypes: false } },
    // A path the router cannot even take apart (bad percent-encoding, a parameter longer than
    // maxParamLength) names no route: the REST 404, not Fastify's own body with its error code.
    frameworkErrors: (error, request, untyped) => {
      const reply = untyped as unknown as FastifyReply
      if (error.code !== 'FST_ERR_BAD_URL' && error.code !== 'FST_ERR_MAX_PARAM_LENGTH') {
        return reply.code(400).send(failure(400, 'Invalid request', 'BAD_REQUEST'))
      }
      const path = request.url.split('?')[0].slice(0, 200)
      const notFound = new RequestError.NotFound(request.method, path)
      return reply.code(404).send(failure(404, notFound.message, notFound.code))
    }
  }).withTypeProvider<TypeBoxTypeProvider>()

  // First: it wraps each route as it is added, and its request span must start before any other hook.
  if (tracing) await app.register(tracing.fastifyPlugin)
  app.decorate('tracing', tracing)
  app.addHook('onSend', async (request, reply) => { reply.header('x-request-id', request.id) })

  await app.register(gracefulClosePlugin)
  await app.register(databasePlugin, { config, database, reads })
  await app.register(errorHandlerPlugin)
  // Every parsed JSON body: nesting bounded, exact numbers where a route stores them (http/json-body.ts).
  await app.register(jsonBodyPlugin)
  await app.register(metricsPlugin, { metrics })
  await app.register(loadSheddingPlugin, { onShed: (reason) => metrics.shed.inc({ reason }) })
  await app.register(corsPlugin, { origins: corsOrigins(config) })
  await app.register(authPlugin)
  // Before the routes: it holds each route that says `idempotent` to answering through withIdempotency.
  await app.register(idempotencyPlugin)
  await app.register(rateLimitPlugin, { redis, onRefused: (route) => metrics.rateLimited.inc({ route }) })
  // Before the routes it documents: @fastify/swagger reads each route as it is added.
  await app.register(openapiPlugin, { explorer: explorerEnabled(config) })
  await app.register(healthRoutes)
  await app.register(graphqlPlugin)
  await app.register(statusUpdateRoutes)
  await app.register(shipmentSyncRoutes)
  // The references sync's thread (started at the first sync), stopped with the app.
  const referenceEngine = new ReferenceEngine()
  app.decorate('referenceEngine', referenceEngine)
  app.addHook('onClose', async () => { await referenceEngine.close() })
  await app.register(referencesSyncRoutes, { engine: referenceEngine })
  await app.register(platformRoutes)
  await app.register(platformMoneyRoutes)
  await app.register(webhookEndpointRoutes)
  if (explorerEnabled(config)) await app.register(graphiqlRoutes, { graphqlPath: GRAPHQL_PATH })
  return app
}
