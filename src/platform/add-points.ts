import type { Db } from '../db/client.js'
import { transaction } from '../db/transaction.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { batchData, type RowOutcome } from './batch.js'
import { planPoints } from './plan-points.js'
import { checkPointsRows } from './points-row.js'
import type { PlatformBatchData } from './schemas.js'
import { lockAndReadPoints, writePoints } from './write-points.js'

/*
 * POST /v2/platform/sellers/points: check every row, then in one transaction lock the sellers, read their
 * balances and the entries already booked under the batch's references, decide each row in memory and
 * book the new entries with their balances. A re-sent row finds its entry and is unchanged.
 */
export async function addPoints (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  const { valid, outcomes } = checkPointsRows(raws)
  return transaction(db, (tx) => idempotent(tx, options.idempotency, async () => {
    const decided: (RowOutcome | null)[] = [...outcomes]
    if (valid.length > 0) {
      const plan = planPoints(valid, await lockAndReadPoints(tx, valid.map((v) => v.row)))
      await writePoints(tx, plan)
      for (const [index, outcome] of plan.outcomes) decided[index] = outcome
    }
    return batchData(decided.map((o) => o!))
  }))
}
