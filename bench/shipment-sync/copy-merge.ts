import { sql } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type postgres from 'postgres'
import type { SyncBatch } from '../../src/shipments/sync-batch.js'
import { mergeStatement } from '../../src/shipments/write-outstanding.js'
import { copyInto, copyLines } from './rows.js'

/*
 * The alternative write the issue asked to measure against unnest: COPY the batch into a temporary table,
 * then one INSERT … SELECT … ON CONFLICT merge. Same semantics and counts as writeOutstandingShipments.
 */

export interface WriteCounts { inserted: number, updated: number }

export async function writeByCopyMerge (tx: postgres.TransactionSql, sellerId: number,
  batch: SyncBatch): Promise<WriteCounts> {
  await tx.unsafe('create temp table sync_in (n serial, retailer_sync_id text, shop_sync_id text, offer_sync_id text, quantity text) on commit drop')
  const rows = batch.retailerSyncIds.map((r, i) => ({
    retailerSyncId: r,
    shopSyncId: batch.shopSyncIds[i],
    offerSyncId: batch.offerSyncIds[i],
    outstandingQuantity: batch.quantities[i]
  }))
  await copyInto(tx`copy sync_in (retailer_sync_id, shop_sync_id, offer_sync_id, quantity) from stdin`, copyLines(rows, null))
  // The same merge as write-outstanding.ts, reading the temp table instead of unnest (unmatched IDs too),
  // rendered by Drizzle and sent on the COPY's own transaction.
  const merge = new PgDialect().sqlToQuery(mergeStatement(sellerId, sql`select * from sync_in`))
  const [row] = await tx.unsafe<Array<{ inserted: number, updated: number }>>(merge.sql, merge.params as never[])
  return row
}
