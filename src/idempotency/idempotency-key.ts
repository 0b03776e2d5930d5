import { createHash, type Hash } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Db, Tx } from '../db/client.js'
import { isLockTimeout } from '../db/unavailable.js'
import { RequestError, badRequest } from '../errors.js'

/*
 * Idempotency-Key on every mutating route (the status update, the shipment sync), by Stripe's rules. Both
 * are idempotent already (a status already set is a no-op, a sync sets values), but a retry's *answer* would
 * differ: it would report "unchanged" where the first attempt changed things. With a key, a retry gets the
 * first answer again, byte for byte, for 24 hours.
 *
 * The key is claimed inside the transaction that does the work, and the outcome stored in it before it
 * commits: a crash can never leave a stored answer for work that did not commit, nor work without its
 * answer. A retry that arrives while the first request is still running waits on the claimed row (its
 * insert meets the first one's uncommitted key) and then replays the answer; if it waits longer than the
 * session's lock_timeout it is told 409 and may try again.
 *
 * This is the transactional half: a service runs its work through `idempotent` on its own transaction.
 * The HTTP half (the header, the fingerprint, the replay header, not counting a replay twice) is
 * plugins/idempotency.ts, which a route opts into with `config: { idempotent: true }`.
 */

/** How long an answer is kept for replay. */
export const IDEMPOTENCY_TTL_HOURS = 24

/** What a key is: 1 to 255 visible ASCII characters (a UUID is the usual choice). */
const KEY = /^[\x21-\x7e]{1,255}$/

export interface IdempotencyRequest {
  credentialId: number
  key: string
  /** SHA-256 of what makes two requests the same: method, path and body. */
  fingerprint: string
}

export const IdempotencyCode = { invalidKey: 'INVALID_IDEMPOTENCY_KEY' } as const
export const IdempotencyText = { invalidKey: 'Idempotency-Key must be 1 to 255 visible ASCII characters' } as const

/** The key of a request's Idempotency-Key header, or undefined without one; a malformed key is a 400. */
export function idempotencyKeyOf (header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined
  if (typeof header !== 'string' || !KEY.test(header)) throw badRequest(IdempotencyCode.invalidKey, IdempotencyText.invalidKey)
  return header
}

/**
 * The start of a request's fingerprint: its method and path; the body follows (as sent, or as parsed for
 * JSON), all at once or as it streams by.
 */
export function startFingerprint (method: string, path: string): Hash {
  return createHash('sha256').update(`${method} ${path}\n`)
}

/** An outcome; `replayed` when it is the stored answer of an earlier request with the same key. */
export type Replayable<T> = T & { replayed?: true }

/**
 * Runs `work` on the caller's transaction under the request's key, when it has one: the stored outcome of
 * an earlier request with the key is returned instead (marked replayed), else the work's outcome is stored
 * on the same transaction, so that it commits with the work it describes or not at all.
 */
export async function idempotent<T extends object> (
  tx: Tx, request: IdempotencyRequest | undefined, work: () => Promise<T>
): Promise<Replayable<T>> {
  if (request === undefined) return work()
  const stored = await claimIdempotencyKey<T>(tx, request)
  if (stored !== null) return { ...stored, replayed: true }
  const outcome = await work()
  await storeOutcome(tx, request, outcome)
  return outcome
}

/**
 * Claims the key on the caller's transaction. Returns the stored outcome when the key was used before
 * with the same request (a replay), null when this request is the first (its outcome is stored on the
 * same transaction). Throws 422 when the key was used with another request, 409 when
 * the first request with it is still running after the session's lock_timeout.
 */
async function claimIdempotencyKey<T> (tx: Tx, request: IdempotencyRequest): Promise<T | null> {
  const { credentialId, key, fingerprint } = request
  let claimed
  try {
    // A savepoint: should the wait for a running first request time out, the transaction stays usable.
    claimed = await tx.transaction((savepoint) => savepoint.execute(sql`
      insert into idempotency_keys (credential_id, key, fingerprint, expires_at)
      values (${credentialId}, ${key}, ${fingerprint}, now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
      on conflict (credential_id, key) do nothing
      returning 1 as claimed`))
  } catch (err) {
    if (isLockTimeout(err)) throw new RequestError.IdempotencyKeyInUse()
    throw err
  }
  if (claimed.length > 0) return null
  const [stored] = await tx.execute<{ fingerprint: string, outcome: string | null, expired: boolean }>(sql`
    select fingerprint, outcome, expires_at <= now() as expired from idempotency_keys
    where credential_id = ${credentialId} and key = ${key} for update`)
  if (!stored || stored.expired || stored.outcome === null) {
    // Expired (not purged yet), or gone meanwhile: this request is the first again.
    await tx.execute(sql`
      insert into idempotency_keys (credential_id, key, fingerprint, expires_at)
      values (${credentialId}, ${key}, ${fingerprint}, now() + make_interval(hours => ${IDEMPOTENCY_TTL_HOURS}))
      on conflict (credential_id, key) do update set fingerprint = excluded.fingerprint, outcome = null,
        created_at = now(), expires_at = excluded.expires_at`)
    return null
  }
  if (stored.fingerprint !== fingerprint) throw new RequestError.IdempotencyKeyReused()
  return JSON.parse(stored.outcome) as T
}

/** Stores the outcome of the claimed key, on the transaction that did the work. */
async function storeOutcome (tx: Tx, request: IdempotencyRequest, outcome: unknown): Promise<void> {
  await tx.execute(sql`update idempotency_keys set outcome = ${JSON.stringify(outcome)}
    where credential_id = ${request.credentialId} and key = ${request.key}`)
}

/** Deletes expired keys, a slice at a time so no statement holds many rows; returns how many went. */
export async function purgeExpiredIdempotencyKeys (db: Db, slice = 10_000): Promise<number> {
  let purged = 0
  for (;;) {
    const rows = await db.execute(sql`
      delete from idempotency_keys where ctid = any(array(
        select ctid from idempotency_keys where expires_at <= now() limit ${slice}))
      returning 1`)
    purged += rows.length
    if (rows.length < slice) return purged
  }
}
