import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { SyncBatch } from './sync-batch.js'
import type { Unmatched } from './schemas.js'
import { UnmatchedCollector } from './unmatched-sync-ids.js'

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
 * offer_sync_id, quantity, n). Exported so the bench can run the same merge over a COPY-filled temp table.
 */
export function mergeStatement (sellerId: number, input: SQL): SQL {
  return sql`
with
  input as (${input}),
  written as (
    insert into outstanding_shipments as s (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity)
    select ${sellerId}::int, retailer_sync_id, shop_sync_id, offer_sync_id, quantity::numeric from input order by n
    on conflict on constraint outstanding_shipments_key do update
      set outstanding_quantity = excluded.outstanding_quantity, updated_at = now()
      where s.outstanding_quantity is distinct from excluded.outstanding_quantity
    returning (s.xmax = 0) as inserted
  )
select
  (select count(*) filter (where inserted) from written)::int as inserted,
  (select count(*) filter (where not inserted) from written)::int as updated,
  array(select i.retailer_sync_id from input i
        where not exists (select 1 from seller_retailers x where x.seller_id = ${sellerId}::int and x.sync_id = i.retailer_sync_id)
        group by i.retailer_sync_id order by min(i.n)) as unmatched_retailers,
  array(select i.shop_sync_id from input i
        where i.shop_sync_id is not null
          and not exists (select 1 from seller_shops x where x.seller_id = ${sellerId}::int and x.sync_id = i.shop_sync_id)
        group by i.shop_sync_id order by min(i.n)) as unmatched_shops,
  array(select i.offer_sync_id from input i
        where not exists (select 1 from offers x where x.seller_id = ${sellerId}::int and x.offer_sync_id = i.offer_sync_id)
        group by i.offer_sync_id order by min(i.n)) as unmatched_offers`
}

/** One chunk of the batch, one text[] parameter per column, unnest'ed in the batch's (sorted) order. */
function chunkInput (
  retailerSyncIds: string[], shopSyncIds: Array<string | null>, offerSyncIds: string[], quantities: string[]
): SQL {
  return sql`select * from unnest(${sql.param(retailerSyncIds)}::text[], ${sql.param(shopSyncIds)}::text[],
      ${sql.param(offerSyncIds)}::text[], ${sql.param(quantities)}::text[])
    with ordinality as u(retailer_sync_id, shop_sync_id, offer_sync_id, quantity, n)`
}

/** Rows per statement: round trips amortised, parameter strings still small enough to die young. */
export const DEFAULT_CHUNK_SIZE = 5_000

export interface WriteResult { inserted: number, updated: number, unmatched: Unmatched }

type ChunkRow = {
  inserted: number
  updated: number
  unmatched_retailers: string[]
  unmatched_shops: string[]
  unmatched_offers: string[]
}

export async function writeOutstandingShipments (
  tx: Tx, sellerId: number, batch: SyncBatch, chunkSize = DEFAULT_CHUNK_SIZE
): Promise<WriteResult> {
  let inserted = 0
  let updated = 0
  const unmatched = new UnmatchedCollector()
  for (let start = 0; start < batch.retailerSyncIds.length; start += chunkSize) {
    const end = start + chunkSize
    const [row] = await tx.execute<ChunkRow>(mergeStatement(sellerId, chunkInput(
      batch.retailerSyncIds.slice(start, end), batch.shopSyncIds.slice(start, end),
      batch.offerSyncIds.slice(start, end), batch.quantities.slice(start, end))))
    inserted += row.inserted
    updated += row.updated
    unmatched.add(row.unmatched_retailers, row.unmatched_shops, row.unmatched_offers)
  }
  return { inserted, updated, unmatched: unmatched.result() }
}
