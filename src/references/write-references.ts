import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { REFERENCE_TABLES } from './reference-tables.js'
import type { TypeLookup, TypeOutcome } from './reference-work.js'
import type { Matched } from './schemas.js'
import type { ReferenceType } from './texts.js'

/*
 * The references sync's statements, set-based: per type one read of what is stored (the rows' records and
 * the holders of the rows' sync IDs, as one JSON text, whatever the number of rows), then per chunk one
 * statement that sets the changed sync IDs and one that clears those that become null: each record is
 * written once. The type's unique constraint on (seller, sync ID) is deferred to the commit, so a swap or a
 * rotation never meets it half-way; the decision (decide.ts) made sure the end state holds it. One statement
 * counts the newly matched shipments.
 */

/**
 * [id, sync ID] pairs as JSON texts of RECORDS_PER_TEXT pairs each: the driver reads a NULL element of a
 * text[] as the string "NULL", one text is parsed faster than rows, and a text of 4,096 pairs is parsed in
 * about a millisecond (one text of 50,000 held the event loop 10–15 ms; bench/results/2026-11-27-references-sync.md).
 */
type StoredRow = { records: string }
const RECORDS_PER_TEXT = 4096

/**
 * One scan of the seller's records of the type that are either a row's record or hold a row's sync ID. The
 * planner takes the indexes for a few rows and one pass over the seller's records with hashed lookups for
 * many (100,000 rows: 0.13 s, against 0.35 s for a join per question; bench/results/2026-11-26-references-sync.md).
 * Answers the records as JSON texts, parsed by the decision (stored-references.ts). The rows' ids and sync IDs
 * come as array literals (db/array-literal.ts).
 */
export async function readStoredTexts (tx: Tx, sellerId: number, lookup: TypeLookup): Promise<string[]> {
  const { table, id, syncId } = REFERENCE_TABLES[lookup.type]
  const rows = await tx.execute<StoredRow>(sql`
select json_agg(json_build_array(x.id, x.sync_id))::text as records
from (
  select x.${id} as id, x.${syncId} as sync_id, row_number() over () - 1 as n
  from ${table} x
  where x.seller_id = ${sellerId}::int
    and (x.${id} = any(${lookup.ids}::int[]) or x.${syncId} = any(${lookup.syncIds}::text[]))
) x
group by x.n / ${RECORDS_PER_TEXT}`)
  return rows.map((row) => row.records)
}

/** Writes the type's changed sync IDs, each record once, its uniqueness checked on commit. */
export async function writeReferences (
  tx: Tx, sellerId: number, type: ReferenceType, outcome: TypeOutcome
): Promise<void> {
  const { table, id, syncId, unique } = REFERENCE_TABLES[type]
  if (outcome.clear.length + outcome.set.length === 0) return
  await tx.execute(sql`set constraints ${unique} deferred`)
  for (const ids of outcome.clear) {
    await tx.execute(sql`update ${table} x set ${syncId} = null
      where x.seller_id = ${sellerId}::int and x.${id} in (select unnest(${ids}::int[]))`)
  }
  for (const { ids, syncIds } of outcome.set) {
    await tx.execute(sql`update ${table} x set ${syncId} = v.sync_id
      from unnest(${ids}::int[], ${syncIds}::text[]) as v(id, sync_id)
      where x.seller_id = ${sellerId}::int and x.${id} = v.id`)
  }
}

/**
 * Stored outstanding shipment rows of the seller that carry one of the newly matched sync IDs (text[]
 * literals; absent: none of that type).
 */
export async function countMatchedShipments (
  tx: Tx, sellerId: number, newly: { retailers?: string, shops?: string, offers?: string }
): Promise<Matched> {
  if (newly.retailers === undefined && newly.shops === undefined && newly.offers === undefined) {
    return { retailers: 0, shops: 0, offers: 0 }
  }
  const none = '{}'
  const [row] = await tx.execute<Matched>(sql`select
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.retailer_sync_id in (select unnest(${newly.retailers ?? none}::text[])))::int as retailers,
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.shop_sync_id in (select unnest(${newly.shops ?? none}::text[])))::int as shops,
  (select count(*) from outstanding_shipments s where s.seller_id = ${sellerId}::int
     and s.offer_sync_id in (select unnest(${newly.offers ?? none}::text[])))::int as offers`)
  return row
}
