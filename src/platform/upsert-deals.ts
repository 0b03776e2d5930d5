import type { Db } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { checkDealRows } from './deal-row.js'
import { planDeals } from './plan-deals.js'
import { runPlatformBatch } from './run-batch.js'
import type { PlatformBatchData } from './schemas.js'
import { lockAndReadDeals, writeDeals } from './write-deals.js'

/*
 * PUT /v2/platform/deals: check every row, then in one transaction lock the batch's deal ids, read the
 * stored deals (locked against the orders that grab them), decide each row in memory and write the changes
 * set-based (run-batch.ts).
 */
export async function upsertDeals (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  return runPlatformBatch(db, checkDealRows(raws), options.idempotency, async (tx, valid) => {
    const plan = planDeals(valid, await lockAndReadDeals(tx, valid.map((v) => v.row)))
    await writeDeals(tx, plan)
    return plan.outcomes
  })
}
