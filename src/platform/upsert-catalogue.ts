import type { Db } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { checkItemRows } from './catalogue-row.js'
import { planCatalogue } from './plan-catalogue.js'
import { runPlatformBatch } from './run-batch.js'
import type { PlatformBatchData } from './schemas.js'
import { catalogueIds, lockAndReadCatalogue, writeCatalogue } from './write-catalogue.js'

/*
 * PUT /v2/platform/catalogue: check every item row, then in one transaction lock the batch's record ids,
 * read what is stored under them, decide each row in memory and write the changes set-based (run-batch.ts).
 */
export async function upsertCatalogue (
  db: Db, raws: unknown[], options: { idempotency?: IdempotencyRequest } = {}
): Promise<Replayable<PlatformBatchData>> {
  return runPlatformBatch(db, checkItemRows(raws), options.idempotency, async (tx, valid) => {
    const plan = planCatalogue(valid, await lockAndReadCatalogue(tx, catalogueIds(valid.map((v) => v.row))))
    await writeCatalogue(tx, plan)
    return plan.outcomes
  })
}
