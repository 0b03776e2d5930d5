import type { Logger } from 'pino'
import { ConfigError, type Config } from '../../config.js'
import type { NotificationChannel } from '../jobs.js'
import type { Notification } from '../notification.js'
import { logTransport } from './log.js'
import { webhookTransport } from './webhook.js'
import { whatsappCloudTransport } from './whatsapp-cloud.js'

/** Sends one notification. Throws to have the job retried with backoff; PermanentDeliveryError when a retry cannot help. */
export interface NotificationTransport {
  readonly name: string
  /** `stop` aborts the send when the worker is shutting down (graphile-worker's abort signal). */
  send: (notification: Notification, stop?: AbortSignal) => Promise<void>
}

/** A failure no retry can fix (e.g. a retailer without any phone number): recorded as failed at once. */
export class PermanentDeliveryError extends Error {
  override name = 'PermanentDeliveryError'
}

/** The transport of each channel as configured; throws a ConfigError naming what a chosen transport lacks. */
export function createTransports (config: Config, logger: Logger): Record<NotificationChannel, NotificationTransport> {
  const made = new Map<string, NotificationTransport>()
  const pick = (kind: 'log' | 'webhook' | 'whatsapp-cloud', variable: string): NotificationTransport => {
    const existing = made.get(kind)
    if (existing) return existing
    let transport: NotificationTransport
    if (kind === 'webhook') {
      if (!config.WEBHOOK_URL || !config.WEBHOOK_SECRET) {
        throw new ConfigError(`Invalid configuration: ${variable}=webhook needs WEBHOOK_URL and WEBHOOK_SECRET (at least 16 characters)`)
      }
      transport = webhookTransport({ url: config.WEBHOOK_URL, secret: config.WEBHOOK_SECRET, timeoutMs: config.WEBHOOK_TIMEOUT_MS })
    } else if (kind === 'whatsapp-cloud') {
      if (!config.WHATSAPP_PHONE_NUMBER_ID || !config.WHATSAPP_ACCESS_TOKEN) {
        throw new ConfigError(`Invalid configuration: ${variable}=whatsapp-cloud needs WHATSAPP_PHONE_NUMBER_ID and WHATSAPP_ACCESS_TOKEN`)
      }
      transport = whatsappCloudTransport({
        baseUrl: config.WHATSAPP_API_BASE_URL,
        phoneNumberId: config.WHATSAPP_PHONE_NUMBER_ID,
        accessToken: config.WHATSAPP_ACCESS_TOKEN,
        language: config.WHATSAPP_TEMPLATE_LANGUAGE,
        templates: {
          'order.accepted': config.WHATSAPP_TEMPLATE_ACCEPTED,
          'order.rejected': config.WHATSAPP_TEMPLATE_REJECTED,
          'order.completed': config.WHATSAPP_TEMPLATE_COMPLETED
        },
        timeoutMs: config.WHATSAPP_TIMEOUT_MS
      })
    } else {
      transport = logTransport(logger)
    }
    made.set(kind, transport)
    return transport
  }
  return {
    seller: pick(config.NOTIFY_SELLER_TRANSPORT, 'NOTIFY_SELLER_TRANSPORT'),
    customer: pick(config.NOTIFY_CUSTOMER_TRANSPORT, 'NOTIFY_CUSTOMER_TRANSPORT'),
    messaging: pick(config.NOTIFY_MESSAGING_TRANSPORT, 'NOTIFY_MESSAGING_TRANSPORT')
  }
}

/** The signal for one request: its timeout, or the worker stopping, whichever comes first. */
export function requestSignal (timeoutMs: number, stop?: AbortSignal): AbortSignal {
  return stop ? AbortSignal.any([AbortSignal.timeout(timeoutMs), stop]) : AbortSignal.timeout(timeoutMs)
}

/** Why a fetch failed, in a few words for last_error (no stack, no secrets). */
export function describeFetchError (err: unknown, what: string, timeoutMs: number, stop?: AbortSignal): string {
  if (stop?.aborted) return `${what} request abandoned: the worker is stopping`
  const e = err as { name?: string, message?: string, cause?: { code?: string, message?: string } }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `${what} timed out after ${timeoutMs} ms`
  return `${what} request failed: ${e.cause?.code ?? e.cause?.message ?? e.message ?? String(err)}`
}
