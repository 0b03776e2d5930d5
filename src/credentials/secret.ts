import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { CredentialKind, Environment } from '../db/schema.js'

/*
 * A secret reads `oxs_<env>_<kind>_<keyId>_<random>`: the environment and kind show in the prefix, so a
 * key pasted into the wrong place is recognisable; keyId (public) finds the row; the 32 random bytes
 * are the secret proper. Only SHA-256 of the whole string is stored: the secret is high-entropy, so a
 * slow password hash would add nothing but latency to every request.
 */

const ENV_PREFIX: Record<Environment, string> = { testing: 'test', production: 'live' }
const KIND_PREFIX: Record<CredentialKind, string> = { 'access-token': 'at', 'api-key': 'ak', 'platform-key': 'pk' }
const KIND_OF_PREFIX = new Map(Object.entries(KIND_PREFIX).map(([kind, prefix]) => [prefix, kind as CredentialKind]))
const SECRET_PATTERN = /^oxs_(test|live)_(at|ak|pk)_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/

export interface GeneratedSecret { secret: string, keyId: string, secretHash: string }

export function generateSecret (kind: CredentialKind, environment: Environment): GeneratedSecret {
  const keyId = randomBytes(12).toString('base64url').replace(/[-_]/g, '').slice(0, 12).padEnd(12, '0')
  const random = randomBytes(32).toString('base64url')
  const secret = `oxs_${ENV_PREFIX[environment]}_${KIND_PREFIX[kind]}_${keyId}_${random}`
  return { secret, keyId, secretHash: hashSecret(secret) }
}

export function hashSecret (secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

export interface ParsedSecret { environment: Environment, kind: CredentialKind, keyId: string }

/** Null for anything that is not shaped like one of our secrets. */
export function parseSecret (secret: string): ParsedSecret | null {
  const m = SECRET_PATTERN.exec(secret)
  if (!m) return null
  return {
    environment: m[1] === 'live' ? 'production' : 'testing',
    kind: KIND_OF_PREFIX.get(m[2])!,
    keyId: m[3]
  }
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches (secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}
