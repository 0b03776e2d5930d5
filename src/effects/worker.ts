import { EventEmitter } from 'node:events'
import { Logger as GraphileLogger, run, type LogLevel, type WorkerEvents } from 'graphile-worker'
import pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import { changeOrderStatus } from '../status-update/change-status.js'
import { TASKS } from './jobs.js'
import { WorkerLiveness } from './crash-recovery.js'
import { createTransports } from './transports/transport.js'
import { createPaymentGateway } from './refunds/gateway.js'
import { notifyTask } from './tasks/notify.js'
import { processRefundTask } from './tasks/process-refund.js'
import { autoRejectTask } from './tasks/auto-reject.js'

export interface EffectsWorkerOptions {
  config: Config
  database: Database
  logger: Logger
}

export interface EffectsWorker {
  /** Finishes the jobs in hand (graphile-worker's graceful shutdown), then lets go of the liveness lock. */
  stop: () => Promise<void>
  /** Settles when the worker stops, rejects if it died of a fatal error (e.g. the database went away for good). */
  done: Promise<void>
}

/**
 * Runs the effects worker: graphile-worker's job loop with this service's tasks. Any number of these
 * (inside API processes or alone through `order-exchange worker`) may run against one database; each
 * job runs in one of them at a time. Domain work goes through `database`; graphile-worker keeps its own
 * small pg pool for the queue.
 */
export async function startEffectsWorker ({ config, database, logger }: EffectsWorkerOptions): Promise<EffectsWorker> {
  const log = logger.child({ component: 'effects-worker' })
  const transports = createTransports(config, log)
  const gateway = createPaymentGateway(config)

  const liveness = new WorkerLiveness(database.url, log, config.WORKER_RECOVERY_INTERVAL_MS)
  await liveness.open()
  const events: WorkerEvents = new EventEmitter()
  events.on('pool:create', ({ workerPool }) => liveness.hold(workerPool.id))
  // The queue's own pg pool, ours rather than graphile-worker's: it ends that one without waiting, so a
  // database going away right after stop() would meet clients with no error handler and crash the process.
  const queuePool = new pg.Pool({ connectionString: database.url, max: config.WORKER_CONCURRENCY + 2, application_name: 'order-exchange-worker' })
  const onPoolError = (err: Error): void => { log.warn({ err: err.message }, 'worker queue connection error') }
  queuePool.on('error', onPoolError)
  queuePool.on('connect', (client) => { client.on('error', onPoolError) })
  const release = async (): Promise<void> => {
    await queuePool.end().catch(() => {})
    await liveness.close()
  }

  let runner
  try {
    runner = await run({
      pgPool: queuePool,
      concurrency: config.WORKER_CONCURRENCY,
      pollInterval: config.WORKER_POLL_INTERVAL_MS,
      noHandleSignals: true,
      logger: graphileLogger(log),
      events,
      taskList: {
        [TASKS.notify]: notifyTask({ database, transports, logger: log }),
        [TASKS.processRefund]: processRefundTask({ database, gateway, logger: log }),
        [TASKS.autoReject]: autoRejectTask({ database, changeOrderStatus, logger: log })
      }
    })
  } catch (err) {
    await release()
    throw err
  }
  liveness.start()
  log.info({ concurrency: config.WORKER_CONCURRENCY, transports: Object.fromEntries(Object.entries(transports).map(([c, t]) => [c, t.name])) }, 'effects worker started')

  let stopping: Promise<void> | null = null
  const done = runner.promise.finally(release)
  done.catch(() => {})
  return {
    done,
    stop: () => {
      stopping ??= (async () => {
        await runner.stop()
        await done.catch(() => {})
        log.info('effects worker stopped')
      })()
      return stopping
    }
  }
}

/**
 * graphile-worker's log lines into pino. Its per-job "Completed task" lines are debug here (one per
 * notification would drown the log); a failed attempt that will be retried is a warning, and only the
 * last failed attempt stays an error.
 */
function graphileLogger (logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level: LogLevel, message: string, meta?: Record<string, unknown>) => {
    const fields = { workerId: scope.workerId, task: scope.taskIdentifier, jobId: scope.jobId }
    if (level === 'error') {
      const job = meta?.job as { attempts: number, max_attempts: number } | undefined
      if (meta?.failure && job && job.attempts < job.max_attempts) logger.warn(fields, message)
      else logger.error(fields, message)
    } else if (level === 'warning') {
      logger.warn(fields, message)
    } else {
      logger.debug(fields, message)
    }
  })
}
