import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { nextTurn, ROWS_PER_TURN } from '../event-loop-turn.js'
import type { StoredReferences, TypeDecision } from './decide.js'
import { REFERENCE_TABLES } from './reference-tables.js'
import type { Matched } from './schemas.js'
import type { ReferenceType } from './texts.js'

/*
 * The references sync's statements, set-based: per type one read of what is stored (the rows' records and
 * the holders of the rows' sync IDs, as one JSON text each, whatever the number of rows), then per chunk one
 * statement that sets the changed sync IDs and one that clears those that become null: each record is
 * written once. The type's unique constraint on (seller, sync ID) is deferred to the commit, so a swap or a
 * rotation never meets it half-way; the decision (decide.ts) made sure the end state holds it. One statement
 * counts the newly matched shipments.
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
    select x.${id} as id, x.${syncId} as sync_id from unnest(${sql.param(ids)}::int[]) as v(id)
    join ${table} x on x.${id} = v.id and x.seller_id = ${sellerId}::int),
  holder as (
    select x.${id} as id, x.${syncId} as sync_id from unnest(${sql.param(syncIds)}::text[]) as v(sync_id)
    join ${table} x on x.${syncId} = v.sync_id and x.seller_id = ${sellerId}::int)
select
  coalesce((select json_agg(json_build_array(id, sync_id)) from target), '[]')::text as targets,
  coalesce((select json_agg(json_build_array(id, sync_id)) from holder), '[]')::text as holders`)
  const current = new Map<number, string | null>()
  await eachPair(row.targets, (recordId: number, value: string | null) => current.set(recordId, value))
  const holders = new Map<string, number>()
  await eachPair(row.holders, (recordId: number, value: string) => holders.set(value, recordId))
  return { current, holders }
}

/** Hands on each [id, sync ID] pair of a JSON text, letting other requests have turns in between. */
async function eachPair<V> (json: string, onPair: (id: number, value: V) => void): Promise<void> {
  const pairs = JSON.parse(json) as Array<[number, V]>
  await nextTurn()
  for (let i = 0; i < pairs.length; i++) {
    if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn()
    onPair(pairs[i][0], pairs[i][1])
  }
}

/** Writes the type's changed sync IDs, each record once, its uniqueness checked on commit. */
export async function writeReferences (
  tx: Tx, sellerId: number, type: ReferenceType, decision: TypeDecision
): Promise<void> {
  const { table, id, syncId, unique } = REFERENCE_TABLES[type]
  if (decision.clearIds.length + decision.setIds.length === 0) return
  await tx.execute(sql`set constraints ${unique} deferred`)
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
