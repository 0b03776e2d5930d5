import { createHmac } from 'node:crypto'

/*
 * Deprecated: sent for one more release beside the Standard Webhooks headers (src/outbound/standard-signature.ts),
 * then removed with the X-Order-Exchange-Event-Id and -Type headers.
 *
 * Webhook signatures, the scheme Stripe uses: HMAC-SHA256 over `${timestamp}.${rawBody}`, sent as
 * `X-Order-Exchange-Signature: t=<unix seconds>,v1=<hex>`. The timestamp is inside the MAC, so a receiver
 * can refuse a replayed event older than a few minutes (the README shows a receiver's check).
 */

export const SIGNATURE_HEADER = 'x-order-exchange-signature'
export const EVENT_ID_HEADER = 'x-order-exchange-event-id'
export const EVENT_TYPE_HEADER = 'x-order-exchange-event-type'

function signatureHex (secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')
}

/** The header value for a body sent at `timestamp` (unix seconds). */
export function signatureHeader (secret: string, timestamp: number, rawBody: string): string {
  return `t=${timestamp},v1=${signatureHex(secret, timestamp, rawBody)}`
}
