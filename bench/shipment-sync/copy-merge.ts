import type postgres from 'postgres'
import type { SyncBatch } from '../../src/shipments/sync-batch.js'
import { copyInto, copyLines } from './rows.js'

/*
 * The alternative write the issue asked to measure against unnest: COPY the batch into a temporary table,
 * then one INSERT … SELECT … ON CONFLICT merge. Same semantics and counts as writeOutstandingShipments.
 */

// The same statement as write-outstanding.ts, reading the temp table instead of unnest (unmatched IDs too).
const MERGE = `
with
  input as (select * from sync_in),
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

export interface WriteCounts { inserted: number, updated: number }

export async function writeByCopyMerge (tx: postgres.TransactionSql, sellerId: number, batch: SyncBatch): Promise<WriteCounts> {
  await tx.unsafe('create temp table sync_in (n serial, retailer_sync_id text, shop_sync_id text, offer_sync_id text, quantity text) on commit drop')
  const rows = batch.retailerSyncIds.map((r, i) => ({
    retailerSyncId: r, shopSyncId: batch.shopSyncIds[i], offerSyncId: batch.offerSyncIds[i], outstandingQuantity: batch.quantities[i]
  }))
  await copyInto(tx`copy sync_in (retailer_sync_id, shop_sync_id, offer_sync_id, quantity) from stdin`, copyLines(rows, null))
  const [row] = await tx.unsafe<Array<{ inserted: number, updated: number }>>(MERGE, [sellerId] as never[])
  return row
}
