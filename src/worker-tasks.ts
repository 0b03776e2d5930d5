import type { TaskList } from 'graphile-worker'
import type { Logger } from 'pino'
import { webhookPrivateNetworksAllowed, type Config } from './config.js'
import type { Database } from './db/client.js'
import type { ServiceMetrics } from './metrics.js'
import { TASKS, type AutoRejectPayload } from './effects/jobs.js'
import { createPaymentGateway } from './effects/refunds/gateway.js'
import { processRefundTask } from './effects/tasks/process-refund.js'
import { startSupervisedWorker, type EffectsWorker } from './effects/worker.js'
import { pruneDeliveryLog, pruneEvents } from './events/prune-events.js'
import type { NotificationChannel } from './effects/jobs.js'
import type { NotificationTransport } from './effects/transports/types.js'
import { applyOperatorEndpoint, operatorEndpointOf } from './delivery/shared-subscriptions.js'
import type { SubscriptionKind } from './db/schema.js'
import { createTransports } from './effects/transports/factory.js'
import { purgeExpiredIdempotencyKeys } from './idempotency/idempotency-key.js'
import { autoRejectOrder } from './status-update/auto-reject.js'
import { channelOf, Deliverer, type OperatorEndpoint } from './delivery/deliverer.js'
import { SecretBox } from './webhooks/secret-box.js'
import type { Tracing } from './tracing/tracing.js'

/*
 * Which job runs which service: the wiring of the effects worker, kept beside the entry points so that
 * effects/ (the queue, delivery) stays below the services that enqueue jobs (status-update/).
 */

/** The tasks of the effects worker. */
export function effectsTasks (config: Config, database: Database, logger: Logger): {
  taskList: TaskList, crontab: string
} {
  const taskList: TaskList = {
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
    // Hourly; a key expires 24 hours after its first use and is ignored from then on even before it goes.
    // Events are kept EVENT_RETENTION_DAYS: an hour more at most before they go.
    crontab: `0 * * * * ${TASKS.purgeIdempotencyKeys} ?max=1\n30 * * * * ${TASKS.pruneEvents} ?max=1`
  }
}

/**
 * The effects worker of this service, restarted after a fatal error (see startSupervisedWorker), and the
 * deliverer of every subscription beside it. The queue (LISTEN) and the liveness locks use `sessionUrl`, a
 * session-level connection; the tasks do their work through `database`, which may go through a transaction
 * pooler. Throws a ConfigError naming what a chosen transport or the operator's endpoint lacks.
 */
export async function startWorker (config: Config, database: Database, sessionUrl: string, logger: Logger,
  metrics?: ServiceMetrics, tracing?: Tracing | null): Promise<EffectsWorker> {
  const log = logger.child({ component: 'effects-worker' })
  const channels = createTransports(config, log)
  const operator = operatorEndpointOf(config)
  await applyOperatorEndpoint(database.db, operator)
  const deliverer = startDeliverer(config, database, sessionUrl, logger, channels, operator, metrics, tracing)
  await deliverer.start()
  let worker: EffectsWorker
  try {
    worker = await startSupervisedWorker({
      config,
      url: sessionUrl,
      logger: log,
      tracing,
      details: {
        transports: Object.fromEntries(Object.entries(channels).map(([channel, t]) => [channel, t.name])),
        operatorEndpoint: operator !== null
      },
      ...effectsTasks(config, database, log)
    })
  } catch (err) {
    await deliverer.stop()
    throw err
  }
  return {
    stop: async () => { await Promise.all([worker.stop(), deliverer.stop(config.SHUTDOWN_GRACE_MS)]) },
    done: worker.done
  }
}

/**
 * The deliveries of every subscription (delivery/deliverer.ts), beside the jobs in every worker process.
 * Without WEBHOOK_SECRETS_KEY in production no seller's endpoint can exist (nor its secret be read): the
 * notifications and the operator's endpoint are delivered all the same.
 */
function startDeliverer (config: Config, database: Database, sessionUrl: string, logger: Logger,
  channels: Record<NotificationChannel, NotificationTransport>, operator: OperatorEndpoint | null,
  metrics?: ServiceMetrics, tracing?: Tracing | null): Deliverer {
  const box = SecretBox.of(config)
  const log = logger.child({ component: 'deliverer' })
  if (box === null) log.warn('WEBHOOK_SECRETS_KEY is not set: the sellers\' webhook endpoints are off')
  return new Deliverer({
    db: database.db,
    sessionUrl,
    box,
    operator,
    channels,
    logger: log,
    concurrency: config.WEBHOOK_DELIVERY_CONCURRENCY,
    timeoutMs: config.WEBHOOK_DELIVERY_TIMEOUT_MS,
    notificationTimeoutMs: config.WHATSAPP_TIMEOUT_MS,
    allowPrivateNetworks: webhookPrivateNetworksAllowed(config),
    tracing,
    onAttempt: (r) => metrics?.deliveries.inc({
      transport: transportOf(r.kind, channels), result: r.succeeded ? 'delivered' : r.retryInMs === null ? 'given_up' : 'failed'
    })
  })
}

/** The `transport` label of an attempt (metrics): the kind's, or the channel's transport. */
function transportOf (kind: SubscriptionKind, channels: Record<NotificationChannel, NotificationTransport>): string {
  if (kind === 'seller-webhook' || kind === 'operator-webhook') return kind
  return channels[channelOf(kind)].name
}
