import { sql } from 'drizzle-orm'
import type { Db, Tx } from '../db/client.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { transaction } from '../db/transaction.js'
import { retryOnConflict } from '../db/retry.js'
import { KeySpace, lockKeys } from '../platform/batch-sql.js'
import type { ReferenceDecider, TypeOutcome } from './reference-work.js'
import type { ReferencesData } from './schemas.js'
import type { ReferenceType } from './texts.js'
import { countMatchedShipments, readStoredTexts, writeReferences } from './write-references.js'

/*
 * The references sync: the seller's own sync IDs for its retailers, shops, items and offers. One request is
 * one transaction under the seller's advisory lock (two syncs of one seller run one after the other): every
 * type's stored state is read before anything is written, each type's rows are decided (decide.ts) on it
 * before that type is written, and the writes are set-based. A failure or a crash applies nothing; re-sending
 * the same request answers `unchanged`. The request's rows and the decisions are the references thread's
 * (reference-engine.ts, reference-work.ts): this side holds the transaction and passes texts along.
 */

export interface ReferencesOptions {
  /** The request's Idempotency-Key: its first outcome is stored with the rows and replayed to a retry. */
  idempotency?: IdempotencyRequest
}

/** How many times a whole run is made again after the unique index refused a write (see below). */
const UNIQUE_RETRIES = 3

export async function syncReferences (
  db: Db, sellerId: number, work: ReferenceDecider, options: ReferencesOptions = {}
): Promise<Replayable<ReferencesData>> {
  const key = options.idempotency
  const run = () => retryOnConflict(() => transaction(db, (tx) =>
    idempotent(tx, key, () => applyReferences(tx, sellerId, work))))
  // Every writer of a sync ID takes the seller's lock and checks first, so the unique index should never
  // refuse a write; if a writer outside this service ever does, the run is made again: it then reads the
  // sync ID as taken and refuses that row (SYNC_ID_TAKEN) rather than answering 500.
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      if (attempt > UNIQUE_RETRIES || !isUniqueViolation(err)) throw err
    }
  }
}

/** The work of one request on its transaction (exported for the bench and tests). */
export async function applyReferences (tx: Tx, sellerId: number, work: ReferenceDecider): Promise<ReferencesData> {
  await lockKeys(tx, [{ space: KeySpace.sellerReferences, ids: [sellerId] }])
  // One CPU of the database for a sync: parallel workers made its reads slower, not faster, on a busy
  // 2-core server (a 50,000 sync ID lookup: 334 ms gathered, 135 ms alone;
  // bench/results/2026-11-26-references-sync.md), and took the CPUs the orders reads need.
  await tx.execute(sql`set local max_parallel_workers_per_gather = 0`)
  // The decisions (the references thread's) overlap PostgreSQL's reads and writes. Every type's stored
  // state is asked for at once, and a type's writes are sent as soon as it is decided, while the next type
  // is decided. postgres.js pipelines the statements on the transaction's connection, which runs them in
  // the order sent: a type's read is sent before its writes, and a type's read and writes touch its own
  // table only, so each type is decided on its state before the request. A failed statement fails the ones
  // after it (the transaction is aborted): every promise is held until the end and awaited there.
  const { received, errors: requestErrors, lookups } = await work.summary()
  const reads = lookups.map((lookup) => readStoredTexts(tx, sellerId, lookup))
  const writes: Array<Promise<void>> = []
  for (const pending of reads) pending.catch(() => {}) // reported by the await below
  const outcomes = new Map<ReferenceType, TypeOutcome>()
  try {
    for (const [i, { type }] of lookups.entries()) {
      const outcome = await work.decide(type, await reads[i])
      outcomes.set(type, outcome)
      const written = writeReferences(tx, sellerId, type, outcome)
      written.catch(() => {}) // reported by Promise.all below
      writes.push(written)
    }
  } finally {
    await Promise.allSettled([...reads, ...writes])
  }
  await Promise.all(writes)
  const newly = (type: ReferenceType) => outcomes.get(type)?.newlyMatched
  const matched = await countMatchedShipments(tx, sellerId,
    { retailers: newly('RETAILER'), shops: newly('SHOP'), offers: newly('OFFER') })

  const errors = [...requestErrors]
  let inserted = 0
  let updated = 0
  let unchanged = 0
  for (const outcome of outcomes.values()) {
    for (const error of outcome.errors) errors.push(error)
    inserted += outcome.inserted
    updated += outcome.updated
    unchanged += outcome.unchanged
  }
  errors.sort((a, b) => a.index - b.index)
  return { received, inserted, updated, unchanged, failed: errors.length, errors, matched }
}

/** 23505, on the error or one it wraps (Drizzle wraps the driver's). */
function isUniqueViolation (err: unknown): boolean {
  let current: unknown = err
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ((current as { code?: unknown }).code === '23505') return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}
