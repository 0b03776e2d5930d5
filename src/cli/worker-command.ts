import pino from 'pino'
import type { Config } from '../config.js'
import { connect } from '../db/connect.js'
import { migrate } from '../db/migrate.js'
import { loggerOptions } from '../logger.js'
import { startEffectsWorker } from '../effects/worker.js'

/**
 * `order-exchange worker`: the effects worker alone, for deployments that scale workers apart from API
 * instances (which then run with WORKER_ENABLED=false). Runs until SIGINT/SIGTERM, then finishes the
 * jobs in hand. Logs are pino JSON on stdout, like the server's.
 */
export async function runWorker (config: Config, err: (line: string) => void): Promise<number> {
  const logger = pino(loggerOptions(config) as pino.LoggerOptions)
  const connection = await connect(config, { max: config.WORKER_CONCURRENCY + 2, log: (line) => logger.debug({ postgres: line }) })
  try {
    await migrate(connection.database.url)
    const worker = await startEffectsWorker({ config, database: connection.database, logger })
    const signalled = await new Promise<NodeJS.Signals | null>((resolve) => {
      const onSignal = (signal: NodeJS.Signals): void => resolve(signal)
      process.once('SIGINT', onSignal)
      process.once('SIGTERM', onSignal)
      worker.done.then(() => resolve(null), () => resolve(null)).finally(() => {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      })
    })
    if (signalled) {
      logger.info({ signal: signalled }, 'stopping the worker: finishing jobs in hand')
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
}
