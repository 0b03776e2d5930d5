import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { ConfigError, loadConfig, type Config } from './config.js'
import { loggerOptions } from './logger.js'
import { connect, type Connection } from './db/connect.js'
import { EmbeddedPostgresError } from './db/embedded.js'
import { migrate } from './db/migrate.js'
import { buildApp } from './app.js'
import { formatDemoBanner, seedDemoIfEmpty } from './demo.js'
import { startEffectsWorker, type EffectsWorker } from './effects/worker.js'

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
  const logger = pino(loggerOptions(config) as pino.LoggerOptions)

  let connection: Connection
  try {
    connection = await connect(config, { log: (line) => logger.debug({ postgres: line }) })
  } catch (err) {
    if (err instanceof EmbeddedPostgresError) {
      process.stderr.write(`Cannot start the embedded PostgreSQL: ${err.message}\n` +
        'Alternatively set DATABASE_URL=postgres://user@host:5432/db to use a PostgreSQL server (15 or later).\n')
      process.exit(1)
    }
    throw err
  }
  if (connection.embedded) logger.info({ port: connection.embedded.port, dataDir: config.DATA_DIR }, 'using embedded PostgreSQL')

  let app: Awaited<ReturnType<typeof buildApp>> | undefined
  let worker: EffectsWorker | undefined
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'shutting down: finishing in-flight requests')
    await app?.close()
    // Jobs in hand finish (or go back to the queue) before the pool they use closes.
    await worker?.stop()
    await connection.close()
  })

  let demo: Awaited<ReturnType<typeof seedDemoIfEmpty>>
  try {
    await migrate(connection.database.url)
    demo = await seedDemoIfEmpty(config, connection.database)
    if (config.WORKER_ENABLED) {
      worker = await startEffectsWorker({ config, database: connection.database, logger })
      worker.done.catch((err) => logger.error({ err }, 'effects worker stopped after a fatal error; jobs wait for another worker'))
    }
    app = await buildApp({ config, database: connection.database, logger })
    await app.listen({ port: config.PORT, host: config.HOST })
  } catch (err) {
    // Never leave an embedded server behind when start-up fails half way.
    logger.fatal({ err }, 'start-up failed')
    await app?.close().catch(() => {})
    await worker?.stop().catch(() => {})
    await connection.close().catch(() => {})
    process.exit(1)
  }
  if (demo) process.stdout.write(formatDemoBanner(demo, `http://${config.HOST}:${config.PORT}`) + '\n')
}

main().catch((err) => {
  process.stderr.write(`order-exchange failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
