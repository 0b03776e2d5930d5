import { sql } from 'drizzle-orm'
import { intArrayLiteral, textArrayLiteral } from '../db/array-literal.js'
import type { Tx } from '../db/client.js'
import { nextTurn } from '../event-loop-turn.js'
import type { StoredReferences, TypeDecision } from './decide.js'
import { REFERENCE_TABLES } from './reference-tables.js'
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

/** Rows per write statement: parameter arrays small enough to die young. */
export const WRITE_CHUNK = 10_000

/**
 * [id, sync ID] pairs as JSON texts of RECORDS_PER_TEXT pairs each: the driver reads a NULL element of a
 * text[] as the string "NULL", one text is parsed faster than rows, and a text of 4,096 pairs is parsed in
 * about a millisecond (one text of 50,000 held the event loop 10–15 ms; bench/README, References sync).
 */
type StoredRow = { records: string }
type StoredRecord = [number, string | null]
const RECORDS_PER_TEXT = 4096

/**
 * One scan of the seller's records of the type that are either a row's record or hold a row's sync ID. The
 * planner takes the indexes for a few rows and one pass over the seller's records with hashed lookups for
 * many (100,000 rows: 0.13 s, against 0.35 s for a join per question; bench/README). Answers the records as
 * JSON texts, parsed by `storedReferences` when the caller is ready for them (a sync asks for every type at
 * once, and holds one type's maps at a time).
 */
export async function readStoredTexts (
  tx: Tx, sellerId: number, type: ReferenceType, ids: number[], syncIds: string[]
): Promise<string[]> {
  const { table, id, syncId } = REFERENCE_TABLES[type]
  const idList = await intArrayLiteral(ids)
  const syncIdList = await textArrayLiteral(syncIds)
  const rows = await tx.execute<StoredRow>(sql`
select json_agg(json_build_array(x.id, x.sync_id))::text as records
from (
  select x.${id} as id, x.${syncId} as sync_id, row_number() over () - 1 as n
  from ${table} x
  where x.seller_id = ${sellerId}::int
    and (x.${id} = any(${idList}::int[]) or x.${syncId} = any(${syncIdList}::text[]))
) x
group by x.n / ${RECORDS_PER_TEXT}`)
  return rows.map((row) => row.records)
}

/** The records `readStoredTexts` answered, as the decision looks them up. */
export async function storedReferences (texts: string[]): Promise<StoredReferences> {
  // A holder that no row names is in `current` too, and a sync ID no row asks for in `holders`: both are
  // the seller's records as stored, and the decision only looks up what the rows name.
  const current = new Map<number, string | null>()
  const holders = new Map<string, number>()
  for (const text of texts) {
    await nextTurn()
    const records = JSON.parse(text) as StoredRecord[]
    for (const [recordId, value] of records) {
      current.set(recordId, value)
      if (value !== null) holders.set(value, recordId)
    }
  }
  return { current, holders }
}

/** Writes the type's changed sync IDs, each record once, its uniqueness checked on commit. */
export async function writeReferences (
  tx: Tx, sellerId: number, type: ReferenceType, decision: TypeDecision
): Promise<void> {
  const { table, id, syncId, unique } = REFERENCE_TABLES[type]
  if (decision.clearIds.length + decision.setIds.length === 0) return
  await tx.execute(sql`set constraints ${unique} deferred`)
  for (let start = 0; start < decision.clearIds.length; start += WRITE_CHUNK) {
    const ids = await intArrayLiteral(decision.clearIds.slice(start, start + WRITE_CHUNK))
    await tx.execute(sql`update ${table} x set ${syncId} = null
      where x.seller_id = ${sellerId}::int and x.${id} in (select unnest(${ids}::int[]))`)
  }
  for (let start = 0; start < decision.setIds.length; start += WRITE_CHUNK) {
    const ids = await intArrayLiteral(decision.setIds.slice(start, start + WRITE_CHUNK))
    const syncIds = await textArrayLiteral(decision.setSyncIds.slice(start, start + WRITE_CHUNK))
    await tx.execute(sql`update ${table} x set ${syncId} = v.sync_id
      from unnest(${ids}::int[], ${syncIds}::text[]) as v(id, sync_id)
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
