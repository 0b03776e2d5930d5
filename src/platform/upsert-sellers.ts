import type { Db } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { planSellers } from './plan-sellers.js'
import { runPlatformBatch } from './run-batch.js'
import type { PlatformBatchData } from './schemas.js'
import { checkSellerRows } from './seller-row.js'
import { lockAndReadSellers, writeSellers } from './write-sellers.js'

/*
 * PUT /v2/platform/sellers: check every row, then in one transaction lock the batch's keys, read what is
 * stored, decide each row in memory and write the changes set-based (run-batch.ts).
 */
export async function upsertSellers (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  return runPlatformBatch(db, checkSellerRows(raws), options.idempotency, async (tx, valid) => {
    const companyIds = valid.map((v) => v.row.companyId)
    const storeIds = valid.flatMap((v) => v.row.stores.map((s) => s.id))
    const plan = planSellers(valid, await lockAndReadSellers(tx, companyIds, storeIds))
    await writeSellers(tx, plan)
    return plan.outcomes
  })
}
