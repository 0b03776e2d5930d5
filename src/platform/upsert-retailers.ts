import type { Db } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { planRetailers } from './plan-retailers.js'
import { checkRetailerRows } from './retailer-row.js'
import { runPlatformBatch } from './run-batch.js'
import type { PlatformBatchData } from './schemas.js'
import { lockAndReadRetailers, writeRetailers } from './write-retailers.js'

/*
 * PUT /v2/platform/retailers: check every row, then in one transaction lock the batch's keys, read what is
 * stored, decide each row in memory and write the changes set-based (run-batch.ts).
 */
export async function upsertRetailers (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  return runPlatformBatch(db, checkRetailerRows(raws), options.idempotency, async (tx, valid) => {
    const state = await lockAndReadRetailers(tx, {
      companyIds: valid.map((v) => v.row.companyId),
      retailerIds: valid.map((v) => v.row.id),
      shopIds: valid.flatMap((v) => v.row.shops.map((s) => s.id))
    })
    const plan = planRetailers(valid, state)
    await writeRetailers(tx, plan)
    return plan.outcomes
  })
}
