import type { Notification } from '../notification.js'

/*
 * What a notification transport is. The transports (log, webhook, whatsapp-cloud) implement it;
 * factory.ts picks one per channel from config.
 */

/**
 * Sends one notification. Throws to have the job retried with backoff; PermanentDeliveryError when a retry cannot
 * help.
 */
export interface NotificationTransport {
  readonly name: string
  /** `stop` aborts the send when the worker is shutting down (graphile-worker's abort signal). */
  send: (notification: Notification, stop?: AbortSignal) => Promise<void>
}

/** A failure no retry can fix (e.g. a retailer without any phone number): recorded as failed at once. */
export class PermanentDeliveryError extends Error {
  override name = 'PermanentDeliveryError'
}
