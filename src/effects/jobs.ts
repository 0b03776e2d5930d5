import { sql } from 'drizzle-orm'
import type { DbOrTx } from '../db/client.js'
import { notificationDeliveries } from '../db/schema.js'

/*
 * The job contract between the status update (which enqueues, inside its transaction) and the effects
 * worker (which delivers). Jobs go through graphile_worker.add_job on the caller's transaction, so a
 * job exists exactly when the change that caused it committed: a crash loses none and a rollback
 * leaves none.
 */

export const TASKS = {
  notify: 'notify',
  autoReject: 'auto-reject',
  processRefund: 'process-refund'
} as const

export type NotificationChannel = 'seller' | 'customer' | 'messaging'
export type NotificationEventType = 'order.accepted' | 'order.rejected' | 'order.completed'

export interface NotifyPayload {
  /** Stable per order + transition + channel: receivers de-duplicate on it. */
  eventId: string
  eventType: NotificationEventType
  channel: NotificationChannel
  orderId: number
  sellerId: number
  /** The rejection reason, for order.rejected. */
  reason: string | null
  /** Messaging channel: the retailer's whatsapp number, else phone (null when neither is known). */
  recipient?: string | null
  occurredAt: string
}

export interface AutoRejectPayload { orderId: number }
export interface ProcessRefundPayload { refundId: number }

export function notificationEventId (orderId: number, toStatus: string, channel: NotificationChannel): string {
  return `${orderId}:${toStatus}:${channel}`
}

export function autoRejectJobKey (orderId: number): string {
  return `auto-reject:${orderId}`
}

interface JobOptions { jobKey?: string, runAt?: Date, maxAttempts?: number }

export async function addJob (tx: DbOrTx, task: string, payload: object, options: JobOptions = {}): Promise<void> {
  await tx.execute(sql`select graphile_worker.add_job(
    ${task}, ${JSON.stringify(payload)}::json,
    job_key := ${options.jobKey ?? null}::text,
    run_at := ${options.runAt?.toISOString() ?? null}::timestamptz,
    max_attempts := ${options.maxAttempts ?? null}::int)`)
}

/** Records the delivery row and enqueues the notify job; a second call for the same event does nothing. */
export async function enqueueNotification (tx: DbOrTx, payload: NotifyPayload): Promise<boolean> {
  const inserted = await tx.insert(notificationDeliveries).values({
    eventId: payload.eventId, orderId: payload.orderId, sellerId: payload.sellerId, channel: payload.channel, eventType: payload.eventType
  }).onConflictDoNothing().returning({ eventId: notificationDeliveries.eventId })
  if (inserted.length === 0) return false
  await addJob(tx, TASKS.notify, payload, { maxAttempts: 10 })
  return true
}
