// A receiver's check of the signature header on a webhook.
import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * What a receiver does (the check of docs/api/webhooks.md): true when the header is a valid signature of
 * this body, made at most `toleranceSeconds` ago.
 */
export function verifySignature (secret: string, rawBody: string, header: string | undefined,
  options: { toleranceSeconds?: number, now?: number } = {}): boolean {
  if (!header) return false
  const parts = new Map(header.split(',').map((p) => { const i = p.indexOf('='); return [p.slice(0, i).trim(), p.slice(i + 1).trim()] as const }))
  const timestamp = Number(parts.get('t'))
  const given = parts.get('v1')
  if (!Number.isInteger(timestamp) || !given || !/^[0-9a-f]{64}$/.test(given)) return false
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  const expected = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex'))
}
