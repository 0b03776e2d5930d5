import type { Notification } from '../notification.js'
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './signature.js'
import { postWithDeadline } from './http.js'
import type { NotificationTransport } from './types.js'
import { STANDARD_SECRET_PREFIX, standardSecretKey, standardWebhookHeaders } from '../../outbound/standard-signature.js'

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
 * The key WEBHOOK_SECRET stands for in Standard Webhooks signatures: a `whsec_` secret is base64 of its key
 * (throws when it is not); any other text signs with its UTF-8 bytes, so the receiver's Standard Webhooks
 * secret is `whsec_` + base64 of those bytes.
 */
export function webhookSigningKey (secret: string): Uint8Array {
  return secret.startsWith(STANDARD_SECRET_PREFIX) ? standardSecretKey(secret) : new TextEncoder().encode(secret)
}

/**
 * POSTs the event, signed, to one URL. Anything but a 2xx answer within the timeout throws, and the job
 * is retried with graphile-worker's exponential backoff. Each attempt is signed afresh (new timestamp) under
 * the same `webhook-id`, the event id. Signed twice: the Standard Webhooks headers, and (deprecated, sent for
 * one more release) X-Order-Exchange-Signature with the secret's text as the HMAC key, as before.
 */
export function webhookTransport (options: WebhookOptions): NotificationTransport {
  const key = webhookSigningKey(options.secret)
  return {
    name: 'webhook',
    async send (n, stop) {
      const body = JSON.stringify(webhookEvent(n))
      const now = new Date()
      const answer = await postWithDeadline(options.url, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'order-exchange-webhooks/1',
          ...standardWebhookHeaders(n.eventId, now, body, [key]),
          [EVENT_ID_HEADER]: n.eventId,
          [EVENT_TYPE_HEADER]: n.eventType,
          [SIGNATURE_HEADER]: signatureHeader(options.secret, Math.floor(now.getTime() / 1000), body)
        },
        body
      }, 'webhook', options.timeoutMs, stop)
      // The answer's body means nothing to us: the status is the answer.
      if (!answer.ok) throw new Error(`webhook answered HTTP ${answer.status}`)
    }
  }
}
