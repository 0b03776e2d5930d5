import type postgres from 'postgres'
import { retryOnConflict } from '../db/retry.js'
import type { RowError, SyncBatch } from './sync-batch.js'
import type { Unmatched } from './unmatched-sync-ids.js'
import { writeOutstandingShipments, DEFAULT_CHUNK_SIZE } from './write-outstanding.js'

/*
 * The outstanding shipment sync (spec 4.3, decisions.md): every valid row sets the quantity of its key,
 * bad rows are reported, rows not in the request are left alone. All writes of one request commit
 * together: a failure or a crash applies nothing, and the client's retry of the same request is safe
 * (setting a value twice is the same as once). A deadlock or serialization failure is retried here.
 */

export interface OutstandingShipmentSyncResult {
  received: number
  inserted: number
  updated: number
  /** Keys whose stored quantity already had the sent value: not written. */
  unchanged: number
  /** Valid rows superseded by a later row of the same key in the same request. */
  duplicates: number
  failed: number
  errors: RowError[]
  unmatched: Unmatched
}

export interface SyncOptions { chunkSize?: number }

export async function syncOutstandingShipments (
  sql: postgres.Sql, sellerId: number, batch: SyncBatch, options: SyncOptions = {}
): Promise<OutstandingShipmentSyncResult> {
  const keys = batch.retailerSyncIds.length
  const none = { count: 0, examples: [] }
  const written = keys === 0
    ? { inserted: 0, updated: 0, unmatched: { retailerSyncIds: none, shopSyncIds: none, offerSyncIds: none } }
    : await retryOnConflict(() => sql.begin((tx) =>
      writeOutstandingShipments(tx, sellerId, batch, options.chunkSize ?? DEFAULT_CHUNK_SIZE)))
  return {
    received: batch.received,
    inserted: written.inserted,
    updated: written.updated,
    unchanged: keys - written.inserted - written.updated,
    duplicates: batch.duplicates,
    failed: batch.errors.length,
    errors: batch.errors,
    unmatched: written.unmatched
  }
}
