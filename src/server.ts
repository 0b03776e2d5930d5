import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { ConfigError, explorerEnabled, loadConfig, type Config } from './config.js'
import { loggerOptions } from './logger.js'
import { connect, timeoutsMissingBehindPooler, type Connection } from './db/connect.js'
import { EmbeddedPostgresError } from './db/embedded.js'
import { migrate } from './db/migrate.js'
import { buildApp } from './app.js'
import { ReadRouter } from './db/read-router.js'
import { formatDemoBanner, seedDemoIfEmpty } from './demo.js'
import type { EffectsWorker } from './effects/worker.js'
import { createMetrics, startMetricsServer } from './metrics.js'
import { openRedis } from './redis.js'
import { startWorker } from './worker-tasks.js'
import { startTracing } from './tracing/start.js'

/** The only place that owns the process: config, database, listen, and a graceful shutdown. */
async function main (): Promise<void> {
  let config: Config
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`)
      process.exit(1)
    }
    throw err
  }
  // Before anything that makes spans: the pools, the worker, the app (OTEL_EXPORTER_OTLP_ENDPOINT turns it on).
  const tracing = await startTracing(config)
  const logger = pino(loggerOptions(config, tracing) as pino.LoggerOptions)
  if (tracing) logger.info({ endpoint: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? process.env.OTEL_EXPORTER_OTLP_ENDPOINT }, 'traces exported over OTLP')

  // One set of metrics for the process: the API and the worker count into it.
  const metrics = createMetrics()
  let connection: Connection
  try {
    connection = await connect(config, {
      log: (line) => logger.debug({ postgres: line }), sqlObserver: tracing?.sqlObserver
    })
  } catch (err) {
    if (err instanceof EmbeddedPostgresError) {
      process.stderr.write(`Cannot start the embedded PostgreSQL: ${err.message}\n` +
        'Alternatively set DATABASE_URL=postgres://user@host:5432/db to use a PostgreSQL server (15 or later).\n')
      process.exit(1)
    }
    throw err
  }
  if (config.DATABASE_POOL_MODE === 'transaction') {
    const missing = await timeoutsMissingBehindPooler(connection.database).catch(() => [])
    if (missing.length > 0) {
      logger.warn({ missing }, 'behind a transaction pooler the session timeouts are not sent: set them on the role ' +
        "(ALTER ROLE … SET statement_timeout = '15s', …), else a stuck statement or transaction is never stopped")
    }
  }
  if (connection.embedded) logger.info({ port: connection.embedded.port, dataDir: config.DATA_DIR }, 'using embedded PostgreSQL')

  const reads = connection.reads
    ? new ReadRouter(connection.database, connection.reads, {
      maxLagMs: config.READ_MAX_LAG_MS,
      pollMs: config.REPLICA_LAG_POLL_MS,
      onLag: (lagMs) => { metrics.replicaLag.set(lagMs === null ? -1 : lagMs / 1000) },
      onPollError: (err) => { logger.warn({ err: (err as Error).message }, 'read replica did not answer: reads go to the primary') }
    })
    : undefined
  const redis = config.REDIS_URL ? openRedis(config.REDIS_URL, logger) : undefined
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | undefined
  let app: Awaited<ReturnType<typeof buildApp>> | undefined
  let worker: EffectsWorker | undefined
  /** Stops what has been started so far, the pool (and an embedded server) even when a part fails to stop. */
  const closeDown = async (): Promise<void> => {
    // Requests in flight and jobs in hand finish side by side (keep-alive sockets are closed as they
    // fall idle: plugins/graceful-close.ts); only then does the pool they both use close.
    const stopped = await Promise.allSettled([app?.close(), worker?.stop(), reads?.stop()])
    await connection.close()
    // Nothing uses Redis once the app is closed; a QUIT would wait on a Redis that does not answer.
    redis?.disconnect()
    await metricsServer?.close()
    // Last, so the spans of the requests and jobs finished above go out too.
    await tracing?.shutdown()
    const failed = stopped.find((result) => result.status === 'rejected')
    if (failed) throw failed.reason
  }
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'shutting down: finishing in-flight requests')
    const started = Date.now()
    await closeDown()
    logger.info({ ms: Date.now() - started }, 'shutdown complete')
  })

  let demo: Awaited<ReturnType<typeof seedDemoIfEmpty>>
  try {
    await migrate(connection.sessionUrl)
    demo = await seedDemoIfEmpty(config, connection.database)
    if (config.WORKER_ENABLED) {
      worker = await startWorker(config, connection.database, connection.sessionUrl, logger, metrics, tracing)
    }
    await reads?.start()
    app = await buildApp({ config, database: connection.database, reads, logger, redis, metrics, tracing })
    if (config.METRICS_PORT) {
      metricsServer = await startMetricsServer(metrics.registry, config.METRICS_HOST, config.METRICS_PORT)
      logger.info({ url: `http://${config.METRICS_HOST}:${metricsServer.port}/metrics` }, 'metrics served on the admin port')
    }
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (err) {
    // Never leave an embedded server behind when start-up fails half way.
    logger.fatal({ err }, 'start-up failed')
    await closeDown().catch(() => {})
    process.exit(1)
  }
  const baseUrl = `http://${config.HOST}:${config.PORT}`
  if (explorerEnabled(config)) logger.info({ docs: `${baseUrl}/docs`, graphiql: `${baseUrl}/graphiql`, openapi: `${baseUrl}/v2/openapi.json` }, 'API explorers served')
  if (demo) process.stdout.write(formatDemoBanner(demo, baseUrl, explorerEnabled(config)) + '\n')
}

main().catch((err) => {
  process.stderr.write(`order-exchange failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
