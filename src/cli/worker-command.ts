import pino from 'pino'
import type { Config } from '../config.js'
import { connect } from '../db/connect.js'
import { migrate } from '../db/migrate.js'
import { loggerOptions } from '../logger.js'
import { startEffectsWorker } from '../effects/worker.js'

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
export async function runWorker (config: Config, err: (line: string) => void, options: { trigger?: StopTrigger, logger?: pino.Logger } = {}): Promise<number> {
  const logger = options.logger ?? pino(loggerOptions(config) as pino.LoggerOptions)
  const trigger = options.trigger ?? onStopSignal()
  try {
    const connection = await connect(config, { max: config.WORKER_CONCURRENCY + 2, log: (line) => logger.debug({ postgres: line }) })
    try {
      await migrate(connection.database.url)
      const worker = await startEffectsWorker({ config, database: connection.database, logger })
      const reason = await Promise.race([trigger.stopped, worker.done.then(() => null, () => null)])
      if (reason !== null) {
        logger.info({ signal: reason }, 'stopping the worker: finishing jobs in hand')
        await worker.stop()
        return 0
      }
      try {
        await worker.done
        return 0
      } catch (e) {
        err(`order-exchange: worker stopped: ${(e as Error).message}`)
        return 1
      }
    } finally {
      await connection.close()
    }
  } finally {
    trigger.dispose()
  }
}
