import { createHmac, timingSafeEqual } from 'node:crypto'

/*
 * Webhook signatures, the scheme Stripe uses: HMAC-SHA256 over `${timestamp}.${rawBody}`, sent as
 * `X-Order-Exchange-Signature: t=<unix seconds>,v1=<hex>`. The timestamp is inside the MAC, so a receiver
 * can refuse a replayed event older than a few minutes.
 */

export const SIGNATURE_HEADER = 'x-order-exchange-signature'
export const EVENT_ID_HEADER = 'x-order-exchange-event-id'
export const EVENT_TYPE_HEADER = 'x-order-exchange-event-type'

export function signatureHex (secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')
}

/** The header value for a body sent at `timestamp` (unix seconds). */
export function signatureHeader (secret: string, timestamp: number, rawBody: string): string {
  return `t=${timestamp},v1=${signatureHex(secret, timestamp, rawBody)}`
}

/** What a receiver does: true when the header is a valid signature of this body, made at most `toleranceSeconds` ago. */
export function verifySignature (secret: string, rawBody: string, header: string | undefined,
  options: { toleranceSeconds?: number, now?: number } = {}): boolean {
  if (!header) return false
  const parts = new Map(header.split(',').map((p) => { const i = p.indexOf('='); return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const }))
  const timestamp = Number(parts.get('t'))
  const given = parts.get('v1')
  if (!Number.isInteger(timestamp) || !given || !/^[0-9a-f]{64}$/.test(given)) return false
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(signatureHex(secret, timestamp, rawBody), 'hex'))
}
