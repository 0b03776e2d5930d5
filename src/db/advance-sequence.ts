import { sql } from 'drizzle-orm'
import type { Tx } from './client.js'

/** Tables whose ids the marketplace sends (its own ids, stored as the row's id). */
export type SequencedTable = 'sellers' | 'stores' | 'retailers' | 'shops' | 'items' | 'skus' | 'offers' |
  'selling_units' | 'daily_deals' | 'orders' | 'order_items'

/**
 * Moves a table's id sequence past the largest id stored. The ids are the marketplace's; a row made
 * without one (the demo seed) must never draw one of them.
 */
export async function advanceSequence (tx: Tx, table: SequencedTable): Promise<void> {
  await tx.execute(sql`select setval(pg_get_serial_sequence(${table}, 'id'), m.id)
    from (select max(id) as id from ${sql.identifier(table)}) m
    where m.id > (select last_value from ${sql.identifier(`${table}_id_seq`)})`)
}
