import type { TaskList } from 'graphile-worker'
import type { Logger } from 'pino'
import { webhookPrivateNetworksAllowed, type Config } from './config.js'
import type { Database } from './db/client.js'
import type { ServiceMetrics } from './metrics.js'
import { TASKS, type AutoRejectPayload } from './effects/jobs.js'
import { createPaymentGateway } from './effects/refunds/gateway.js'
import { notifyTask } from './effects/tasks/notify.js'
import { processRefundTask } from './effects/tasks/process-refund.js'
import { createTransports } from './effects/transports/factory.js'
import { startSupervisedWorker, type EffectsWorker } from './effects/worker.js'
import { pruneDeliveryLog, pruneEvents } from './events/prune-events.js'
import { purgeExpiredIdempotencyKeys } from './idempotency/idempotency-key.js'
import { autoRejectOrder } from './status-update/auto-reject.js'
import { WebhookDeliverer } from './webhooks/deliverer.js'
import { SecretBox } from './webhooks/secret-box.js'
import type { Tracing } from './tracing/tracing.js'

/*
 * Which job runs which service: the wiring of the effects worker, kept beside the entry points so that
 * effects/ (the queue, delivery) stays below the services that enqueue jobs (status-update/).
 */

/** The tasks of the effects worker; throws a ConfigError naming what a chosen transport lacks. */
export function effectsTasks (config: Config, database: Database, logger: Logger, metrics?: ServiceMetrics): {
  taskList: TaskList, details: Record<string, unknown>, crontab: string
} {
  const transports = createTransports(config, logger)
  const taskList: TaskList = {
    [TASKS.notify]: notifyTask({ db: database.db, transports, logger, deliveries: metrics?.deliveries }),
    [TASKS.processRefund]: processRefundTask({ db: database.db, gateway: createPaymentGateway(config), logger }),
    // The status update's own path, so an auto-rejection has every reject effect.
    [TASKS.autoReject]: async (payload) => {
      const { orderId } = payload as AutoRejectPayload
      const outcome = await autoRejectOrder(database.db, orderId)
      if (outcome === 'rejected') logger.info({ orderId }, 'order auto-rejected: not accepted in time')
      else logger.debug({ orderId }, 'auto-rejection: order already moved, nothing to do')
    },
    [TASKS.purgeIdempotencyKeys]: async () => {
      const purged = await purgeExpiredIdempotencyKeys(database.db)
      if (purged > 0) logger.info({ purged }, 'expired idempotency keys purged')
    },
    [TASKS.pruneEvents]: async () => {
      const pruned = await pruneEvents(database.db, config.EVENT_RETENTION_DAYS)
      if (pruned > 0) logger.info({ pruned, retentionDays: config.EVENT_RETENTION_DAYS }, 'events past their retention removed')
      const deliveryRows = await pruneDeliveryLog(database.db, config.EVENT_RETENTION_DAYS)
      if (deliveryRows > 0) logger.info({ deliveryRows }, 'deliveries and attempts past the retention removed')
    }
  }
  return {
    taskList,
    details: { transports: Object.fromEntries(Object.entries(transports).map(([channel, t]) => [channel, t.name])) },
    // Hourly; a key expires 24 hours after its first use and is ignored from then on even before it goes.
    // Events are kept EVENT_RETENTION_DAYS: an hour more at most before they go.
    crontab: `0 * * * * ${TASKS.purgeIdempotencyKeys} ?max=1\n30 * * * * ${TASKS.pruneEvents} ?max=1`
  }
}

/**
 * The effects worker of this service, restarted after a fatal error (see startSupervisedWorker). The
 * queue (LISTEN) and the liveness locks use `sessionUrl`, a session-level connection; the tasks do their
 * work through `database`, which may go through a transaction pooler.
 */
export async function startWorker (config: Config, database: Database, sessionUrl: string, logger: Logger,
  metrics?: ServiceMetrics, tracing?: Tracing | null): Promise<EffectsWorker> {
  const log = logger.child({ component: 'effects-worker' })
  const deliverer = startDeliverer(config, database, sessionUrl, logger, metrics, tracing)
  await deliverer?.start()
  let worker: EffectsWorker
  try {
    worker = await startSupervisedWorker({
      config, url: sessionUrl, logger: log, tracing, ...effectsTasks(config, database, log, metrics)
    })
  } catch (err) {
    await deliverer?.stop()
    throw err
  }
  return {
    stop: async () => { await Promise.all([worker.stop(), deliverer?.stop(config.SHUTDOWN_GRACE_MS)]) },
    done: worker.done
  }
}

/**
 * The sellers' webhook deliveries (webhooks/deliverer.ts), beside the jobs in every worker process; none
 * where production has no WEBHOOK_SECRETS_KEY (no endpoint can exist then, and secrets could not be read).
 */
function startDeliverer (config: Config, database: Database, sessionUrl: string, logger: Logger,
  metrics?: ServiceMetrics, tracing?: Tracing | null): WebhookDeliverer | null {
  const box = SecretBox.of(config)
  const log = logger.child({ component: 'webhook-deliverer' })
  if (box === null) {
    log.warn('WEBHOOK_SECRETS_KEY is not set: the sellers\' webhook endpoints are off')
    return null
  }
  return new WebhookDeliverer({
    db: database.db,
    sessionUrl,
    box,
    logger: log,
    concurrency: config.WEBHOOK_DELIVERY_CONCURRENCY,
    timeoutMs: config.WEBHOOK_DELIVERY_TIMEOUT_MS,
    allowPrivateNetworks: webhookPrivateNetworksAllowed(config),
    tracing,
    onAttempt: (r) => metrics?.deliveries.inc({
      transport: 'seller-webhook', result: r.succeeded ? 'delivered' : r.retryInMs === null ? 'given_up' : 'failed'
    })
  })
}
