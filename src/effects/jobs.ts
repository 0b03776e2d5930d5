import type { OrderStatus } from '../db/schema.js'

/*
 * The job contract between the status update (which enqueues, inside its transaction: enqueue.ts) and
 * the effects worker (which runs them). A job exists exactly when the change that caused it committed: a
 * crash loses none and a rollback leaves none. Notifications are not jobs: they are deliveries of the event
 * log's notification subscriptions (delivery/), as webhooks are.
 */

export const TASKS = {
  autoReject: 'auto-reject',
  processRefund: 'process-refund',
  purgeIdempotencyKeys: 'purge-idempotency-keys',
  pruneEvents: 'prune-events'
} as const

export const NOTIFICATION_CHANNELS = ['seller', 'customer', 'messaging'] as const
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number]

/** Each event type and the order status it announces: one map, read both ways. */
export const EVENT_STATUS = {
  'order.placed': 'ORDER_PLACED',
  'order.accepted': 'ORDER_ACCEPTED',
  'order.rejected': 'ORDER_REJECTED_BY_SELLER',
  'order.completed': 'ORDER_COMPLETED_BY_SELLER',
  'order.cancelled': 'CANCELLED',
  'order.delivered': 'DELIVERED'
} as const satisfies Record<string, OrderStatus>
export type NotificationEventType = keyof typeof EVENT_STATUS
export type AnnouncedStatus = (typeof EVENT_STATUS)[NotificationEventType]

const EVENT_TYPE = Object.fromEntries(
  Object.entries(EVENT_STATUS).map(([type, status]) => [status, type])
) as Record<AnnouncedStatus, NotificationEventType>

/** The event a change to this status announces. */
export function eventTypeOf (status: AnnouncedStatus): NotificationEventType {
  return EVENT_TYPE[status]
}

/**
 * What every job may carry besides its own fields: the W3C traceparent of the span that enqueued it (the
 * request, or the job that enqueued it), present only when tracing was on, so the job's span continues
 * that trace (traced-tasks.ts).
 */
export interface JobTrace { traceparent?: string }

export interface AutoRejectPayload extends JobTrace { orderId: number }
export interface ProcessRefundPayload extends JobTrace { refundId: number }

export const AUTO_REJECT_MAX_ATTEMPTS = 10

/** The job key prefix, for set-based SQL that builds keys itself: `auto-reject:<orderId>`. */
export const AUTO_REJECT_KEY_PREFIX = 'auto-reject:'

export function autoRejectJobKey (orderId: number): string {
  return `${AUTO_REJECT_KEY_PREFIX}${orderId}`
}
