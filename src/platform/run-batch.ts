import { analyzeTables, tablesBulkLoaded } from '../db/analyze.js'
import type { Db, Tx } from '../db/client.js'
import { transaction } from '../db/transaction.js'
import { recordingEvents, type EventLogging, type PendingEvents } from '../events/record-events.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { batchData, type CheckedRow, type RowOutcome } from './batch.js'
import type { PlatformBatchData } from './schemas.js'

/** A request's rows after their own checks: those to apply, and every row's outcome so far (null: to decide). */
export interface CheckedRows<R> { valid: Array<CheckedRow<R>>, outcomes: Array<RowOutcome | null> }

/**
 * Every platform bulk write: the rows checked first, then one transaction (under the request's
 * Idempotency-Key) that applies the rows that passed and decides each one's outcome. A refused row changes
 * nothing; the others are applied together or (a lost connection, a failed commit) not at all. The events
 * the rows make (placed orders) are recorded as the transaction's last statement.
 */
export async function runPlatformBatch<R> (
  db: Db, checked: CheckedRows<R>, idempotency: IdempotencyRequest | undefined,
  apply: (tx: Tx, valid: Array<CheckedRow<R>>, events: PendingEvents) => Promise<Map<number, RowOutcome>>,
  eventLogging?: EventLogging
): Promise<Replayable<PlatformBatchData>> {
  let loaded: string[] = []
  const result = await transaction(db, async (tx) => {
    const answer = await recordingEvents(tx, (events) => idempotent(tx, idempotency, async () => {
      const decided = [...checked.outcomes]
      if (checked.valid.length > 0) {
        for (const [index, outcome] of await apply(tx, checked.valid, events)) decided[index] = outcome
      }
      return batchData(decided.map((o) => o!))
    }), eventLogging)
    // A bulk load (src/db/analyze.ts BULK_LOAD_ROWS rows or more) analyzes what it wrote once committed.
    loaded = await tablesBulkLoaded(tx)
    return answer
  })
  // Statistics help the reads; they are no part of the batch, which has committed: a failed ANALYZE (a lock
  // timeout behind another one on the same table) must not answer an error for it. Autovacuum analyzes later.
  await analyzeTables(db, loaded).catch(() => {})
  return result
}
