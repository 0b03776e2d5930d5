import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/*
 * Standard Webhooks signatures (https://www.standardwebhooks.com), made with the reference library
 * `standardwebhooks` so that any receiver's Standard Webhooks library verifies them: HMAC-SHA256 over
 * `${webhook-id}.${webhook-timestamp}.${body}`, sent as the headers `webhook-id`, `webhook-timestamp` (unix
 * seconds) and `webhook-signature: v1,<base64>` — several space-separated `v1,` entries while a secret is
 * being rotated; a receiver accepts the message when any of them is valid for its secret.
 *
 * Used for every HTTP subscriber (delivery/deliverer.ts): the sellers' endpoints and the operator's.
 */

export const STANDARD_SECRET_PREFIX = 'whsec_'

/**
 * A key to sign with: a string is a Standard Webhooks secret, `whsec_` + base64 (the prefix optional, as
 * every Standard Webhooks library takes it); a Uint8Array is the key's bytes themselves.
 */
export type SigningSecret = Uint8Array | string

function signer (secret: SigningSecret): Webhook {
  return typeof secret === 'string' ? new Webhook(secret) : new Webhook(secret, { format: 'raw' })
}

/**
 * The three Standard Webhooks headers of one message: `msgId` is the event's id (the same on every attempt:
 * receivers de-duplicate on it), `timestamp` the moment of this attempt, `body` the exact bytes sent. Signed
 * with each secret in turn. Throws when there is no secret or one is not a usable key.
 */
export function standardWebhookHeaders (msgId: string, timestamp: Date, body: string,
  secrets: SigningSecret[]): Record<string, string> {
  if (secrets.length === 0) throw new Error('standardWebhookHeaders: no secret to sign with')
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => signer(secret).sign(msgId, timestamp, body)).join(' ')
  }
}

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newEndpointSecret (): string {
  return standardSecretOf(randomBytes(32))
}

/** The Standard Webhooks secret (`whsec_` + base64) a receiver uses for a key given as bytes. */
export function standardSecretOf (key: Uint8Array): string {
  return STANDARD_SECRET_PREFIX + Buffer.from(key).toString('base64')
}

const PADDED_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * The key bytes of a Standard Webhooks secret: `whsec_` (optional) + padded standard base64, the form every
 * Standard Webhooks library decodes (the JavaScript one also takes some unpadded forms, others do not).
 * Throws an Error saying what is wrong, never quoting the secret.
 */
export function standardSecretKey (secret: string): Uint8Array {
  const base64 = secret.startsWith(STANDARD_SECRET_PREFIX) ? secret.slice(STANDARD_SECRET_PREFIX.length) : secret
  if (base64 === '' || !PADDED_BASE64.test(base64)) {
    throw new Error('not a Standard Webhooks secret: whsec_ followed by base64 (A-Z a-z 0-9 + /, padded with =)')
  }
  return new Uint8Array(Buffer.from(base64, 'base64'))
}

/**
 * The key WEBHOOK_SECRET stands for: a `whsec_` secret is base64 of its key (throws when it is not); any other
 * text signs with its UTF-8 bytes, so the receiver's Standard Webhooks secret is `whsec_` + base64 of those bytes.
 */
export function operatorSigningKey (secret: string): Uint8Array {
  return secret.startsWith(STANDARD_SECRET_PREFIX) ? standardSecretKey(secret) : new TextEncoder().encode(secret)
}
