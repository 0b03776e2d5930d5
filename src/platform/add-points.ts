import type { Db } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { planPoints } from './plan-points.js'
import { checkPointsRows } from './points-row.js'
import { runPlatformBatch } from './run-batch.js'
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
  return runPlatformBatch(db, checkPointsRows(raws), options.idempotency, async (tx, valid) => {
    const plan = planPoints(valid, await lockAndReadPoints(tx, valid.map((v) => v.row)))
    await writePoints(tx, plan)
    return plan.outcomes
  })
}
