import type postgres from 'postgres'
import type { SyncBatch } from './sync-batch.js'
import { UnmatchedCollector, type Unmatched } from './unmatched-sync-ids.js'

/*
 * The set-based write: one statement per chunk, one text[] parameter per column, unnest'ed in the batch's
 * (sorted) order. A key whose quantity already has the same value is not written at all (no new row
 * version, no updated_at change). New rows are told from updated ones by xmax = 0: an updated row version
 * carries the updating transaction in xmax; each key occurs once per batch, so that test is sound.
 * The same statement reports the chunk's sync IDs that match none of the seller's retailers, shops or
 * offers, so the columns are sent once.
 */

/**
 * The merge and the unmatched report over an `input` relation (retailer_sync_id, shop_sync_id,
 * offer_sync_id, quantity, n); $1 is the seller. Exported so the bench can run the same merge over
 * a COPY-filled temp table.
 */
export function mergeStatement (input: string): string {
  return `
with
  input as (${input}),
  written as (
    insert into outstanding_shipments as s (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity)
    select $1::int, retailer_sync_id, shop_sync_id, offer_sync_id, quantity::numeric from input order by n
    on conflict on constraint outstanding_shipments_key do update
      set outstanding_quantity = excluded.outstanding_quantity, updated_at = now()
      where s.outstanding_quantity is distinct from excluded.outstanding_quantity
    returning (s.xmax = 0) as inserted
  )
select
  (select count(*) filter (where inserted) from written)::int as inserted,
  (select count(*) filter (where not inserted) from written)::int as updated,
  array(select i.retailer_sync_id from input i
        where not exists (select 1 from retailers x where x.seller_id = $1 and x.sync_id = i.retailer_sync_id)
        group by i.retailer_sync_id order by min(i.n)) as unmatched_retailers,
  array(select i.shop_sync_id from input i
        where i.shop_sync_id is not null
          and not exists (select 1 from shops x where x.seller_id = $1 and x.sync_id = i.shop_sync_id)
        group by i.shop_sync_id order by min(i.n)) as unmatched_shops,
  array(select i.offer_sync_id from input i
        where not exists (select 1 from offers x where x.seller_id = $1 and x.offer_sync_id = i.offer_sync_id)
        group by i.offer_sync_id order by min(i.n)) as unmatched_offers`
}

const WRITE_CHUNK = mergeStatement(`
    select * from unnest($2::text[], $3::text[], $4::text[], $5::text[])
      with ordinality as u(retailer_sync_id, shop_sync_id, offer_sync_id, quantity, n)`)

/** Rows per statement: round trips amortised, parameter strings still small enough to die young. */
export const DEFAULT_CHUNK_SIZE = 5_000

export interface WriteResult { inserted: number, updated: number, unmatched: Unmatched }

interface ChunkRow {
  inserted: number
  updated: number
  unmatched_retailers: string[]
  unmatched_shops: string[]
  unmatched_offers: string[]
}

export async function writeOutstandingShipments (
  tx: postgres.TransactionSql, sellerId: number, batch: SyncBatch, chunkSize = DEFAULT_CHUNK_SIZE
): Promise<WriteResult> {
  let inserted = 0
  let updated = 0
  const unmatched = new UnmatchedCollector()
  for (let start = 0; start < batch.retailerSyncIds.length; start += chunkSize) {
    const end = start + chunkSize
    const [row] = await tx.unsafe<ChunkRow[]>(WRITE_CHUNK, [
      sellerId,
      batch.retailerSyncIds.slice(start, end),
      batch.shopSyncIds.slice(start, end),
      batch.offerSyncIds.slice(start, end),
      batch.quantities.slice(start, end)
    ] as never[])
    inserted += row.inserted
    updated += row.updated
    unmatched.add(row.unmatched_retailers, row.unmatched_shops, row.unmatched_offers)
  }
  return { inserted, updated, unmatched: unmatched.result() }
}
