import type { Db } from '../db/client.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { transaction } from '../db/transaction.js'
import { retryOnConflict } from '../db/retry.js'
import type { SyncData } from './schemas.js'
import type { SyncBatch } from './sync-batch.js'
import { writeOutstandingShipments, DEFAULT_CHUNK_SIZE } from './write-outstanding.js'

/*
 * The outstanding shipment sync (docs/api/shipments.md): every valid row sets the quantity of its key,
 * bad rows are reported, rows not in the request are left alone. All writes of one request commit
 * together: a failure or a crash applies nothing, and the client's retry of the same request is safe
 * (setting a value twice is the same as once). A deadlock or serialization failure is retried here.
 */

export interface SyncOptions {
  chunkSize?: number
  /** The request's Idempotency-Key: its first outcome is stored with the rows and replayed to a retry. */
  idempotency?: IdempotencyRequest
}

/** Runs in its own transaction, retried on conflicts; a commit cut off by a lost connection is checked. */
export async function syncOutstandingShipments (
  db: Db, sellerId: number, batch: SyncBatch, options: SyncOptions = {}
): Promise<Replayable<SyncData>> {
  const keys = batch.retailerSyncIds.length
  const key = options.idempotency
  const outcome = (written: { inserted: number, updated: number, unmatched: SyncData['unmatched'] }): SyncData => ({
    received: batch.received,
    inserted: written.inserted,
    updated: written.updated,
    unchanged: keys - written.inserted - written.updated,
    duplicates: batch.duplicates,
    failed: batch.errors.length,
    errors: batch.errors,
    unmatched: written.unmatched
  })
  const none = { count: 0, examples: [] }
  const unmatched = { retailerSyncIds: none, shopSyncIds: none, offerSyncIds: none }
  const nothing = { inserted: 0, updated: 0, unmatched }
  if (keys === 0 && key === undefined) return outcome(nothing)
  // The answer commits with the rows it reports.
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE
  return retryOnConflict(() => transaction(db, (tx) => idempotent(tx, key, async () =>
    outcome(keys === 0 ? nothing : await writeOutstandingShipments(tx, sellerId, batch, chunkSize)))))
}
