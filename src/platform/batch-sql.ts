import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'

/*
 * SQL pieces every platform write shares: a batch's rows as one json parameter (json_to_recordset, one
 * statement whatever the number of rows), advisory locks on keys that may not exist yet, and the id
 * sequences moved past the marketplace's ids.
 */

export const json = (rows: unknown[]): SQL => sql`${JSON.stringify(rows)}::json`
export const intArray = (ids: number[]): SQL => sql`${sql.param(ids)}::int[]`

/**
 * The advisory lock namespaces of the marketplace's records, one per kind of id (a companyId, a store id, a
 * retailer id or a shop id may not exist yet, so there is no row to lock). All live here because the locks
 * of every platform batch are taken in one global order, (space, bucket) ascending (lockKeys): two batches
 * of different routes that share some keys (a sellers batch and a retailers batch naming one companyId) take turns
 * instead of deadlocking.
 */
export const KeySpace = {
  seller: 0x5e11e5,
  store: 0x5707e5,
  retailer: 0x7e7a11,
  shop: 0x5409,
  item: 0x173e5,
  sku: 0x5c0e5,
  offer: 0x0ffe5,
  sellingUnit: 0x0417e5,
  deal: 0xdea1e5,
  /**
   * A seller's sync IDs (references/): one lock per seller, taken by every references sync of that seller
   * before it reads what is stored, so two of them run one after the other. No platform batch writes a
   * sync ID, so none takes it.
   */
  sellerReferences: 0x5e1f5
} as const

/**
 * Locks per kind of id: a batch locks the buckets its ids fall in (id mod LOCK_BUCKETS), not each id.
 * PostgreSQL's lock table is shared by every session and holds about max_locks_per_transaction x
 * max_connections entries (some 15,000 by default): a 1 MB batch can name 35,000 stores, and a lock per id
 * would fail it with "out of shared memory" along with whatever else needed a lock meanwhile. With buckets a
 * batch takes at most LOCK_BUCKETS locks per kind; two batches whose ids share a bucket take turns, which
 * is all a lock on an id bought them too.
 */
export const LOCK_BUCKETS = 128

/** Transaction-scoped advisory locks on every (space, bucket) of a batch, in the global order, in one statement. */
export async function lockKeys (tx: Tx, keys: Array<{ space: number, ids: number[] }>): Promise<void> {
  const parts = keys.filter((k) => k.ids.length > 0)
    .map((k) => sql`select distinct ${k.space}::int as space, id % ${LOCK_BUCKETS}::int as bucket
      from unnest(${intArray(k.ids)}) as id`)
  if (parts.length === 0) return
  await tx.execute(sql`select count(pg_advisory_xact_lock(k.space, k.bucket)) from (
    ${sql.join(parts, sql` union all `)} order by 1, 2) k`)
}

export { advanceSequence } from '../db/advance-sequence.js'
