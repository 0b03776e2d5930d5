import { UNMATCHED_EXAMPLES, type Unmatched, type UnmatchedSyncIds } from './schemas.js'

/*
 * Sync IDs of a sync that match nothing the seller has synced before (seller_retailers.sync_id, seller_shops.sync_id,
 * offers.offer_sync_id). Only reported: the rows are stored anyway, the retailer may be synced later.
 * Each write chunk reports its own unknown IDs (write-outstanding.ts); this collects them across chunks
 * into distinct counts and the first few examples, in the order the batch was written (by key).
 */

export class UnmatchedCollector {
  private readonly retailers = new Set<string>()
  private readonly shops = new Set<string>()
  private readonly offers = new Set<string>()

  add (retailerSyncIds: readonly string[], shopSyncIds: readonly string[], offerSyncIds: readonly string[]): void {
    for (const id of retailerSyncIds) this.retailers.add(id)
    for (const id of shopSyncIds) this.shops.add(id)
    for (const id of offerSyncIds) this.offers.add(id)
  }

  result (): Unmatched {
    const report = (ids: Set<string>): UnmatchedSyncIds => {
      const examples: string[] = []
      for (const id of ids) {
        if (examples.length === UNMATCHED_EXAMPLES) break
        examples.push(id)
      }
      return { count: ids.size, examples }
    }
    return {
      retailerSyncIds: report(this.retailers),
      shopSyncIds: report(this.shops),
      offerSyncIds: report(this.offers)
    }
  }
}
