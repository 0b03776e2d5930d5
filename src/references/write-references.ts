import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { StoredReferences, TypeDecision } from './decide.js'
import { REFERENCE_TABLES } from './reference-tables.js'
import type { Matched } from './schemas.js'
import type { ReferenceType } from './texts.js'

/*
 * The references sync's statements, set-based: per type one read of what is stored (the rows' records and
 * the holders of the rows' sync IDs, as one JSON text each, whatever the number of rows), then per chunk one statement
 * that releases the sync IDs that change and one that sets the new ones. Released first, set after, in one
 * transaction: the unique index on (seller, sync ID) is never met by a swap, and the decision (decide.ts)
 * made sure no other record holds a sync ID that is set. One statement counts the newly matched shipments.
 */

/** Rows per write statement: parameter arrays small enough to die young. */
export const WRITE_CHUNK = 10_000

/** [id, sync ID] pairs as JSON text: the driver reads a NULL element of a text[] as the string "NULL". */
type StoredRow = { targets: string, holders: string }

export async function readStoredReferences (
  tx: Tx, sellerId: number, type: ReferenceType, ids: number[], syncIds: string[]
): Promise<StoredReferences> {
  const { table, id, syncId } = REFERENCE_TABLES[type]
  const [row] = await tx.execute<StoredRow>(sql`
with
  target as (
    select x.${id} as id, x.${syncId} as sync_id from ${table} x
    where x.seller_id = ${sellerId}::int and x.${id} in (select unnest(${sql.param(ids)}::int[]))),
  holder as (
    select x.${id} as id, x.${syncId} as sync_id from ${table} x
    where x.seller_id = ${sellerId}::int and x.${syncId} in (select unnest(${sql.param(syncIds)}::text[])))
select
  coalesce((select json_agg(json_build_array(id, sync_id)) from target), '[]')::text as targets,
  coalesce((select json_agg(json_build_array(id, sync_id)) from holder), '[]')::text as holders`)
  const current = new Map<number, string | null>()
  const targets = JSON.parse(row.targets) as Array<[number, string | null]>
  for (const [recordId, value] of targets) current.set(recordId, value)
  const holders = new Map<string, number>()
  for (const [recordId, value] of JSON.parse(row.holders) as Array<[number, string]>) holders.set(value, recordId)
  return { current, holders }
}

/** Releases every changing sync ID of the type, then sets the new ones. */
export async function writeReferences (
  tx: Tx, sellerId: number, type: ReferenceType, decision: TypeDecision
): Promise<void> {
  const { table, id, syncId } = REFERENCE_TABLES[type]
  for (let start = 0; start < decision.clearIds.length; start += WRITE_CHUNK) {
    const ids = decision.clearIds.slice(start, start + WRITE_CHUNK)
    await tx.execute(sql`update ${table} x set ${syncId} = null
      where x.seller_id = ${sellerId}::int and x.${id} in (select unnest(${sql.param(ids)}::int[]))`)
  }
  for (let start = 0; start < decision.setIds.length; start += WRITE_CHUNK) {
    const ids = decision.setIds.slice(start, start + WRITE_CHUNK)
    const syncIds = decision.setSyncIds.slice(start, start + WRITE_CHUNK)
    await tx.execute(sql`update ${table} x set ${syncId} = v.sync_id
      from unnest(${sql.param(ids)}::int[], ${sql.param(syncIds)}::text[]) as v(id, sync_id)
      where x.seller_id = ${sellerId}::int and x.${id} = v.id`)
  }
}

/** Stored outstanding shipment rows of the seller that carry one of the newly matched sync IDs. */
export async function countMatchedShipments (
  tx: Tx, sellerId: number, newly: { retailers: string[], shops: string[], offers: string[] }
): Promise<Matched> {
  const none = newly.retailers.length + newly.shops.length + newly.offers.length === 0
  if (none) return { retailers: 0, shops: 0, offers: 0 }
  const [row] = await tx.execute<Matched>(sql`select
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.retailer_sync_id in (select unnest(${sql.param(newly.retailers)}::text[])))::int as retailers,
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.shop_sync_id in (select unnest(${sql.param(newly.shops)}::text[])))::int as shops,
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.offer_sync_id in (select unnest(${sql.param(newly.offers)}::text[])))::int as offers`)
  return row
}
