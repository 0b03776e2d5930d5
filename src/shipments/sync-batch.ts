import type { RowError } from './schemas.js'
import { checkOutstandingShipmentRow } from './sync-row.js'

/*
 * Turns the request's records into what is written: valid rows only, one per key (the last one of the
 * request wins, and ON CONFLICT never sees a key twice), as one array per column, sorted by key. Sorting
 * matters for concurrency: two syncs with overlapping keys lock those keys in the same order, so they
 * queue behind each other instead of deadlocking. Records are added one at a time as the body streams in;
 * only the key and the quantity of a valid row are kept.
 */

export interface SyncBatch {
  /** Elements in the request, valid or not. */
  received: number
  retailerSyncIds: string[]
  shopSyncIds: Array<string | null>
  offerSyncIds: string[]
  /** Exact numeric text, as the client sent it. */
  quantities: string[]
  errors: RowError[]
  /** Valid rows whose key came again later in the request (the later row was applied). */
  duplicates: number
}

const SEPARATOR = '\u0000'
const NO_SHOP = '\u0001'
const SHOP = '\u0002'

/**
 * The key as one string whose plain code-unit order is the order of (retailer, shop, offer), null shop
 * first. Sync IDs cannot contain NUL (rows with one are rejected), so the separators are unambiguous.
 */
function keyOf (retailerSyncId: string, shopSyncId: string | null, offerSyncId: string): string {
  // join() makes one flat string; chained + would keep a rope alive beside it in every Map entry.
  return [retailerSyncId, shopSyncId === null ? NO_SHOP : SHOP + shopSyncId, offerSyncId].join(SEPARATOR)
}

export class SyncBatchBuilder {
  private readonly quantityByKey = new Map<string, string>()
  private readonly errors: RowError[] = []
  private received = 0
  private valid = 0

  add (record: unknown): void {
    const index = this.received++
    const result = checkOutstandingShipmentRow(record)
    if (result.error !== undefined) {
      this.errors.push({ index, error: result.error.text, code: result.error.code })
      return
    }
    const { row } = result
    this.quantityByKey.set(keyOf(row.retailerSyncId, row.shopSyncId, row.offerSyncId), row.outstandingQuantity)
    this.valid++
  }

  finish (): SyncBatch {
    const keys = new Array<string>(this.quantityByKey.size)
    let k = 0
    for (const key of this.quantityByKey.keys()) keys[k++] = key
    keys.sort()
    const batch: SyncBatch = {
      received: this.received,
      retailerSyncIds: new Array(keys.length),
      shopSyncIds: new Array(keys.length),
      offerSyncIds: new Array(keys.length),
      quantities: new Array(keys.length),
      errors: this.errors,
      duplicates: this.valid - keys.length
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]
      const a = key.indexOf(SEPARATOR)
      const b = key.indexOf(SEPARATOR, a + 1)
      batch.retailerSyncIds[i] = key.slice(0, a)
      batch.shopSyncIds[i] = key.charAt(a + 1) === NO_SHOP ? null : key.slice(a + 2, b)
      batch.offerSyncIds[i] = key.slice(b + 1)
      batch.quantities[i] = this.quantityByKey.get(key)!
    }
    this.quantityByKey.clear()
    return batch
  }
}

export function prepareSyncBatch (records: Iterable<unknown>): SyncBatch {
  const builder = new SyncBatchBuilder()
  for (const record of records) builder.add(record)
  return builder.finish()
}
