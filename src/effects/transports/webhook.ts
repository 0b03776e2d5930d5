import type { Notification } from '../notification.js'
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.js'
import { postWithDeadline } from './http.js'
import type { NotificationTransport } from './types.js'

export interface WebhookOptions { url: string, secret: string, timeoutMs: number }

/** The JSON body a webhook receiver gets. `id` is stable across retries: de-duplicate on it. */
export function webhookEvent (n: Notification): object {
  return {
    id: n.eventId,
    type: n.eventType,
    channel: n.channel,
    occurredAt: n.occurredAt,
    data: {
      orderId: n.order.orderId,
      orderNumber: n.order.orderNumber,
      orderStatus: n.order.orderStatus,
      reason: n.order.reason,
      companyId: n.order.companyId,
      storeId: n.order.storeId,
      orderTotalFinal: n.order.orderTotalFinal,
      currencyCode: n.order.currencyCode,
      seller: { companyId: n.seller.companyId, name: n.seller.name },
      retailer: {
        retailerId: n.retailer.retailerId,
        name: n.retailer.name,
        phone: n.retailer.phone,
        whatsapp: n.retailer.whatsapp
      }
    }
  }
}

/**
 * POSTs the event, signed, to one URL. Anything but a 2xx answer within the timeout throws, and the job
 * is retried with graphile-worker's exponential backoff. Each attempt is signed afresh (new timestamp).
 */
export function webhookTransport (options: WebhookOptions): NotificationTransport {
  return {
    name: 'webhook',
    async send (n, stop) {
      const body = JSON.stringify(webhookEvent(n))
      const timestamp = Math.floor(Date.now() / 1000)
      const answer = await postWithDeadline(options.url, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'order-exchange-webhooks/1',
          [EVENT_ID_HEADER]: n.eventId,
          [EVENT_TYPE_HEADER]: n.eventType,
          [SIGNATURE_HEADER]: signatureHeader(options.secret, timestamp, body)
        },
        body
      }, 'webhook', options.timeoutMs, stop)
      // The answer's body means nothing to us: the status is the answer.
      if (!answer.ok) throw new Error(`webhook answered HTTP ${answer.status}`)
    }
  }
}
