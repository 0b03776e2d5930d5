import type { Logger } from 'pino'
import { ConfigError, type Config } from '../../config.js'
import type { NotificationChannel } from '../jobs.js'
import { logTransport } from './log.js'
import type { NotificationTransport } from './types.js'
import { whatsappCloudTransport } from './whatsapp-cloud.js'

/**
 * The transport of each notification channel as configured; throws a ConfigError naming what a chosen
 * transport lacks. `webhook` is no longer a channel's transport: the operator's endpoint (WEBHOOK_URL) is a
 * subscription of its own that hears every event once (CHANGELOG, Breaking).
 */
export function createTransports (config: Config, logger: Logger): Record<NotificationChannel, NotificationTransport> {
  const made = new Map<string, NotificationTransport>()
  const pick = (kind: 'log' | 'webhook' | 'whatsapp-cloud', variable: string): NotificationTransport => {
    const existing = made.get(kind)
    if (existing) return existing
    let transport: NotificationTransport
    if (kind === 'webhook') {
      throw new ConfigError(`Invalid configuration: ${variable}=webhook was removed: set WEBHOOK_URL and WEBHOOK_SECRET, ` +
        'and every event of every seller is sent there once, signed the Standard Webhooks way (CHANGELOG: Breaking)')
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
          'order.completed': config.WHATSAPP_TEMPLATE_COMPLETED,
          'order.placed': config.WHATSAPP_TEMPLATE_PLACED,
          'order.cancelled': config.WHATSAPP_TEMPLATE_CANCELLED,
          'order.delivered': config.WHATSAPP_TEMPLATE_DELIVERED
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
