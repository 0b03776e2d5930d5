import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { nextTurn, ROWS_PER_TURN } from '../event-loop-turn.js'
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
 * [id, sync ID] pairs as one JSON text: the driver reads a NULL element of a text[] as the string "NULL",
 * and one text is parsed faster than rows.
 */
type StoredRow = { records: string }
type StoredRecord = [number, string | null]

/**
 * One scan of the seller's records of the type that are either a row's record or hold a row's sync ID. The
 * planner takes the indexes for a few rows and one pass over the seller's records with hashed lookups for
 * many (100,000 rows: 0.13 s, against 0.35 s for a join per question; bench/README). Answers the records as
 * one JSON text, parsed by `storedReferences` when the caller is ready for them (a sync asks for every type
 * at once, and holds one type's maps at a time).
 */
export async function readStoredText (
  tx: Tx, sellerId: number, type: ReferenceType, ids: number[], syncIds: string[]
): Promise<string> {
  const { table, id, syncId } = REFERENCE_TABLES[type]
  const [row] = await tx.execute<StoredRow>(sql`
select coalesce(json_agg(json_build_array(x.${id}, x.${syncId})), '[]')::text as records
from ${table} x
where x.seller_id = ${sellerId}::int
  and (x.${id} = any(${sql.param(ids)}::int[]) or x.${syncId} = any(${sql.param(syncIds)}::text[]))`)
  return row.records
}

/** The records `readStoredText` answered, as the decision looks them up. */
export async function storedReferences (text: string): Promise<StoredReferences> {
  const records = JSON.parse(text) as StoredRecord[]
  await nextTurn()
  // A holder that no row names is in `current` too, and a sync ID no row asks for in `holders`: both are
  // the seller's records as stored, and the decision only looks up what the rows name.
  const current = new Map<number, string | null>()
  const holders = new Map<string, number>()
  for (let i = 0; i < records.length; i++) {
    if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn()
    const [recordId, value] = records[i]
    current.set(recordId, value)
    if (value !== null) holders.set(value, recordId)
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
