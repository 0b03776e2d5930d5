import type { Db } from '../db/client.js'
import { transaction } from '../db/transaction.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { batchData, type RowOutcome } from './batch.js'
import { planSellers } from './plan-sellers.js'
import type { PlatformBatchData } from './schemas.js'
import { checkSellerRows } from './seller-row.js'
import { lockAndReadSellers, writeSellers } from './write-sellers.js'

/*
 * PUT /v2/platform/sellers: check every row, then in one transaction lock the batch's keys, read what is
 * stored, decide each row in memory and write the changes set-based. A refused row changes nothing; the
 * others are applied together or (a lost connection, a failed commit) not at all.
 */
export async function upsertSellers (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  const { valid, outcomes } = checkSellerRows(raws)
  return transaction(db, (tx) => idempotent(tx, options.idempotency, async () => {
    const decided: (RowOutcome | null)[] = [...outcomes]
    if (valid.length > 0) {
      const companyIds = valid.map((v) => v.row.companyId)
      const storeIds = valid.flatMap((v) => v.row.stores.map((s) => s.id))
      const plan = planSellers(valid, await lockAndReadSellers(tx, companyIds, storeIds))
      await writeSellers(tx, plan)
      for (const [index, outcome] of plan.outcomes) decided[index] = outcome
    }
    return batchData(decided.map((o) => o!))
  }))
}
