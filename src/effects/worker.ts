import { EventEmitter } from 'node:events'
import { Logger as GraphileLogger, run, type LogLevel, type TaskList, type WorkerEvents } from 'graphile-worker'
import pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { Tracing } from '../tracing/tracing.js'
import { WorkerLiveness } from './crash-recovery.js'
import { tracedTasks } from './traced-tasks.js'

export interface EffectsWorkerOptions {
  config: Config
  /** The database the queue lives in. */
  url: string
  /** Already a child logger of the worker (component effects-worker). */
  logger: Logger
  /** Which task runs which service: src/worker-tasks.ts. */
  taskList: TaskList
  /** Said in the "started" log line (e.g. each channel's transport). */
  details?: Record<string, unknown>
  /** Recurring jobs, in graphile-worker's crontab format. */
  crontab?: string
  /** A span per job when tracing is on. */
  tracing?: Tracing | null
}

export interface EffectsWorker {
  /** Finishes the jobs in hand (graphile-worker's graceful shutdown), then lets go of the liveness lock. */
  stop: () => Promise<void>
  /** Settles when the worker stops, rejects if it died of a fatal error (e.g. the database went away for good). */
  done: Promise<void>
}

/**
 * Runs the effects worker: graphile-worker's job loop with the given tasks. Any number of these (inside
 * API processes or alone through `order-exchange worker`) may run against one database; each job runs in
 * one of them at a time. The tasks do their work through the service's database handle; graphile-worker
 * keeps its own small pg pool for the queue.
 */
export async function startEffectsWorker (
  { config, url, logger: log, taskList, details, crontab, tracing }: EffectsWorkerOptions
): Promise<EffectsWorker> {
  const liveness = new WorkerLiveness(url, log, config.WORKER_RECOVERY_INTERVAL_MS)
  await liveness.open()
  const events: WorkerEvents = new EventEmitter()
  events.on('pool:create', ({ workerPool }) => liveness.hold(workerPool.id))
  // The queue's own pg pool, ours rather than graphile-worker's: it ends that one without waiting, so a
  // database going away right after stop() would meet clients with no error handler and crash the process.
  const queuePool = new pg.Pool({
    connectionString: url,
    max: config.WORKER_CONCURRENCY + 2,
    application_name: 'order-exchange-worker',
    statement_timeout: config.DB_STATEMENT_TIMEOUT_MS,
    lock_timeout: config.DB_LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: config.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS
  })
  const onPoolError = (err: Error): void => { log.warn({ err: err.message }, 'worker queue connection error') }
  queuePool.on('error', onPoolError)
  queuePool.on('connect', (client) => { client.on('error', onPoolError) })
  const release = async (): Promise<void> => {
    // graphile-worker writes a job's completion (or failure) without awaiting it: when its runner says it
    // stopped, the last completions of a graceful shutdown may still be waiting for a connection of this
    // pool. Ending the pool then drops them, and their jobs stay locked by a pool that no longer exists
    // (until crash recovery releases them as "workers that died mid-job" and they run again).
    await settled(queuePool, config.DB_STATEMENT_TIMEOUT_MS || QUEUE_SETTLE_MAX_MS)
    await queuePool.end().catch(() => {})
    // Whatever the pool still holds (a completion that failed, or outlasted the wait) is released now.
    await liveness.releaseOwnJobs()
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
      taskList: tracing ? tracedTasks(tracing, taskList) : taskList,
      ...(crontab ? { crontab } : {})
    })
  } catch (err) {
    await release()
    throw err
  }
  liveness.start()
  log.info({ concurrency: config.WORKER_CONCURRENCY, ...details }, 'effects worker started')

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

/** How long a stopping worker waits for its queue's last writes when statements have no timeout. */
const QUEUE_SETTLE_MAX_MS = 15_000
const QUEUE_SETTLE_POLL_MS = 10

/**
 * Resolves once no query of the pool is running or waiting for a connection (every client idle), or after
 * `maxMs`. A write graphile-worker started holds a client, or waits for one, from the moment it is called.
 */
async function settled (pool: pg.Pool, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs
  while ((pool.waitingCount > 0 || pool.idleCount < pool.totalCount) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, QUEUE_SETTLE_POLL_MS))
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

/** Restarts after a fatal error back off from this to RESTART_MAX_DELAY_MS while the database is away. */
const RESTART_FIRST_DELAY_MS = 500
const RESTART_MAX_DELAY_MS = 5_000

/**
 * The effects worker, kept running. graphile-worker gives up ("fatal error") when the database stays
 * away longer than its own retries; this starts it again, backing off until the database answers,
 * so a process outlives a database restart without being restarted itself. The first start is
 * awaited (a worker that cannot start at all fails start-up, as before); `done` settles on stop().
 */
export async function startSupervisedWorker (options: EffectsWorkerOptions): Promise<EffectsWorker> {
  const log = options.logger
  let current: EffectsWorker | null = await startEffectsWorker(options)
  let stopping = false
  let wake: () => void = () => {}
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    wake = () => { clearTimeout(timer); resolve() }
  })

  const done = (async () => {
    let delay = 0
    // eslint-disable-next-line no-unmodified-loop-condition -- stop() sets it while this loop awaits
    while (!stopping) {
      if (current) {
        const failure = await current.done.then(() => null, (err: unknown) => err ?? new Error('worker stopped'))
        current = null
        if (stopping) return
        // graphile-worker stops a pool that lost track of its jobs (it logs why just before).
        log.error(failure ? { err: failure } : {}, 'effects worker stopped on its own; starting it again')
      }
      delay = Math.min(Math.max(delay * 2, RESTART_FIRST_DELAY_MS), RESTART_MAX_DELAY_MS)
      await sleep(delay)
      if (stopping) return
      try {
        current = await startEffectsWorker(options)
        delay = 0
        log.info('effects worker started again')
      } catch (err) {
        log.warn({ err, retryInMs: Math.min(delay * 2, RESTART_MAX_DELAY_MS) }, 'effects worker could not start again; retrying')
      }
    }
  })()

  let stopped: Promise<void> | null = null
  return {
    done,
    stop: () => {
      stopped ??= (async () => {
        stopping = true
        wake()
        await current?.stop()
        await done
      })()
      return stopped
    }
  }
}
