import { sql } from 'drizzle-orm'
import type { Task } from 'graphile-worker'
import type { Counter } from 'prom-client'
import type { Logger } from 'pino'
import type { Db } from '../../db/client.js'
import { prepared } from '../../db/statements.js'
import type { NotificationChannel, NotifyPayload } from '../jobs.js'
import { loadNotification } from '../notification.js'
import { PermanentDeliveryError, type NotificationTransport } from '../transports/types.js'

export interface NotifyDeps {
  db: Db
  transports: Record<NotificationChannel, NotificationTransport>
  logger: Logger
  /** Counts each attempt by transport and result (metrics.ts). */
  deliveries?: Counter<'transport' | 'result'>
}

/**
 * Delivers one notification event through its channel's transport and keeps notification_deliveries
 * up to date. At least once: a crash after sending but before the row says DELIVERED sends again with
 * the same event id, which receivers de-duplicate on. A row already DELIVERED is never sent again.
 */
export function notifyTask ({ db, transports, logger, deliveries }: NotifyDeps): Task {
  return async (raw, helpers) => {
    const payload = raw as NotifyPayload
    const transport = transports[payload.channel]
    if (!transport) throw new Error(`unknown notification channel ${JSON.stringify(payload.channel)}`)
    const loaded = await loadNotification(db, payload)
    if (!loaded) {
      logger.warn({ eventId: payload.eventId, orderId: payload.orderId }, 'notification dropped: its order does not exist')
      return
    }
    if (loaded.deliveryStatus === 'DELIVERED') return
    if (loaded.deliveryStatus === null) {
      // Enqueued without its row (not through enqueueNotification): track it all the same.
      await prepared(db, sql`insert into notification_deliveries (event_id, order_id, seller_id, channel, event_type)
        values (${payload.eventId}, ${payload.orderId}, ${payload.sellerId}, ${payload.channel}, ${payload.eventType})
        on conflict do nothing`)
    }

    try {
      await transport.send(loaded.notification, helpers.abortSignal)
    } catch (err) {
      const permanent = err instanceof PermanentDeliveryError
      const last = permanent || helpers.job.attempts >= helpers.job.max_attempts
      const message = (err as Error).message
      await prepared(db, sql`update notification_deliveries
        set attempts = attempts + 1, last_error = ${message}, status = ${last ? 'FAILED' : 'PENDING'}, updated_at = now()
        where event_id = ${payload.eventId} and status <> 'DELIVERED'`)
      deliveries?.inc({ transport: transport.name, result: last ? 'given_up' : 'failed' })
      if (last) {
        logger.error({
          eventId: payload.eventId,
          channel: payload.channel,
          transport: transport.name,
          orderId: payload.orderId,
          attempts: helpers.job.attempts,
          err: message
        }, 'notification failed for good: no more retries')
      }
      if (permanent) return
      throw err
    }
    await prepared(db, sql`update notification_deliveries
      set status = 'DELIVERED', attempts = attempts + 1, last_error = null, delivered_at = now(), updated_at = now()
      where event_id = ${payload.eventId}`)
    deliveries?.inc({ transport: transport.name, result: 'delivered' })
    logger.debug({ eventId: payload.eventId, transport: transport.name }, 'notification delivered')
  }
}
