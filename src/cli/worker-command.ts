import pino from 'pino'
import type { Config } from '../config.js'
import { connect } from '../db/connect.js'
import { migrate } from '../db/migrate.js'
import { loggerOptions } from '../logger.js'
import { createMetrics, startMetricsServer } from '../metrics.js'
import { startTracing } from '../tracing/start.js'
import { startWorker } from '../worker-tasks.js'

export interface StopTrigger { stopped: Promise<string>, dispose: () => void }

/** Resolves with the first SIGINT or SIGTERM; dispose() removes the handlers again. */
export function onStopSignal (): StopTrigger {
  let onSignal: (signal: NodeJS.Signals) => void = () => {}
  const stopped = new Promise<string>((resolve) => { onSignal = (signal) => resolve(signal) })
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  return { stopped, dispose: () => { process.off('SIGINT', onSignal); process.off('SIGTERM', onSignal) } }
}

/**
 * `order-exchange worker`: the effects worker alone, for deployments that scale workers apart from API
 * instances (which then run with WORKER_ENABLED=false). Runs until SIGINT/SIGTERM (or `trigger`), then
 * finishes the jobs in hand. Logs are pino JSON on stdout, like the server's.
 */
export async function runWorker (config: Config,
  options: { trigger?: StopTrigger, logger?: pino.Logger } = {}): Promise<number> {
  // Before the pools and the worker: a span per job and per statement (OTEL_EXPORTER_OTLP_ENDPOINT turns it on).
  const tracing = await startTracing(config)
  const logger = options.logger ?? pino(loggerOptions(config, tracing) as pino.LoggerOptions)
  const trigger = options.trigger ?? onStopSignal()
  try {
    // Direct (WORKER_DATABASE_URL when set): a worker needs a session for its queue anyway.
    const connection = await connect(config, {
      max: config.WORKER_CONCURRENCY + 2,
      direct: true,
      log: (line) => logger.debug({ postgres: line }),
      sqlObserver: tracing?.sqlObserver
    })
    try {
      await migrate(connection.sessionUrl)
      // Its deliveries on an admin port of its own when METRICS_PORT is set (a worker has no API port).
      const metrics = createMetrics()
      const metricsServer = config.METRICS_PORT
        ? await startMetricsServer(metrics.registry, config.METRICS_HOST, config.METRICS_PORT)
        : undefined
      try {
        // Restarted after a fatal error (a long database outage) until told to stop.
        const worker = await startWorker(config, connection.database, connection.sessionUrl, logger, metrics, tracing)
        const reason = await trigger.stopped
        logger.info({ signal: reason }, 'stopping the worker: finishing jobs in hand')
        await worker.stop()
        return 0
      } finally {
        await metricsServer?.close()
      }
    } finally {
      await connection.close()
    }
  } finally {
    trigger.dispose()
    // Last, so the spans of the jobs finished above go out too.
    await tracing?.shutdown()
  }
}
