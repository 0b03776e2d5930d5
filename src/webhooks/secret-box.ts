import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import type { Config } from '../config.js'

/*
 * The endpoints' signing secrets at rest. A webhook is signed with HMAC, which needs the secret itself, so
 * it cannot be stored as a hash the way API keys are: it is encrypted with AES-256-GCM under
 * WEBHOOK_SECRETS_KEY, which lives in the environment and never in the database. A stolen dump alone
 * signs nothing. The stored value is version (1 byte) | IV (12) | tag (16) | ciphertext; the endpoint's id
 * is bound in as associated data, so a secret copied onto another endpoint's row does not decrypt.
 */

const VERSION = 1

/**
 * In testing without WEBHOOK_SECRETS_KEY: a fixed key derived from a public string, so a developer's
 * `npm start` works with no set-up. It protects nothing and production never uses it (config.ts).
 */
const DEVELOPMENT_KEY = createHash('sha256').update('order-exchange development webhook key: not a secret').digest()

export class SecretBox {
  private constructor (private readonly key: Buffer) {}

  /** The box of this deployment, or null when production has no key (endpoints cannot be made then). */
  static of (config: Config): SecretBox | null {
    if (config.WEBHOOK_SECRETS_KEY !== undefined) return new SecretBox(Buffer.from(config.WEBHOOK_SECRETS_KEY, 'base64'))
    return config.ORDER_EXCHANGE_ENV === 'testing' ? new SecretBox(DEVELOPMENT_KEY) : null
  }

  seal (endpointId: string, secret: string): Buffer {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(Buffer.from(endpointId))
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
    return Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body])
  }

  /** The secret, or throws when the value was not sealed for this endpoint with this key. */
  open (endpointId: string, sealed: Buffer): string {
    if (sealed.length < 29 || sealed[0] !== VERSION) throw new Error('webhook secret: unknown format')
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(1, 13))
    decipher.setAAD(Buffer.from(endpointId))
    decipher.setAuthTag(sealed.subarray(13, 29))
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8')
  }
}
