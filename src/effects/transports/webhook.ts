import type { Notification } from '../notification.js'
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.js'
import { describeFetchError, requestSignal, type NotificationTransport } from './transport.js'

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
      retailer: { retailerId: n.retailer.retailerId, name: n.retailer.name, phone: n.retailer.phone, whatsapp: n.retailer.whatsapp }
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
      let response: Response
      try {
        response = await fetch(options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'order-exchange-webhooks/1',
            [EVENT_ID_HEADER]: n.eventId,
            [EVENT_TYPE_HEADER]: n.eventType,
            [SIGNATURE_HEADER]: signatureHeader(options.secret, timestamp, body)
          },
          body,
          signal: requestSignal(options.timeoutMs, stop)
        })
      } catch (err) {
        throw new Error(describeFetchError(err, 'webhook', options.timeoutMs, stop))
      }
      // The answer's body means nothing to us; read it so the connection goes back to the pool.
      await response.arrayBuffer().catch(() => {})
      if (!response.ok) throw new Error(`webhook answered HTTP ${response.status}`)
    }
  }
}
