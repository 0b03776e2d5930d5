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
 * Transaction-scoped advisory locks on every (space, id), taken in one global order (space, then id), so
 * that two batches naming some of the same keys take turns instead of deadlocking. A space is a constant
 * of the route's kind of record; they are disjoint from every other advisory lock of the service.
 */
export async function lockKeys (tx: Tx, keys: Array<{ space: number, ids: number[] }>): Promise<void> {
  const parts = keys.filter((k) => k.ids.length > 0)
    .map((k) => sql`select ${k.space}::int as space, id from unnest(${intArray(k.ids)}) as id`)
  if (parts.length === 0) return
  await tx.execute(sql`select count(pg_advisory_xact_lock(k.space, k.id)) from (
    ${sql.join(parts, sql` union all `)} order by 1, 2) k`)
}

export type SequencedTable = 'sellers' | 'stores' | 'items' | 'skus' | 'offers' | 'selling_units' | 'daily_deals'

/** The ids are the marketplace's; a row made without one (the demo seed) must never draw one of them. */
export async function advanceSequence (tx: Tx, table: SequencedTable): Promise<void> {
  await tx.execute(sql`select setval(pg_get_serial_sequence(${table}, 'id'), m.id)
    from (select max(id) as id from ${sql.identifier(table)}) m
    where m.id > (select last_value from ${sql.identifier(`${table}_id_seq`)})`)
}
