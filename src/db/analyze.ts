import { sql } from 'drizzle-orm'
import type { Db, Tx } from './client.js'

/*
 * ANALYZE after a bulk load. A table filled by a bulk write has no planner statistics until autovacuum
 * gets to it (never, on a server where it has not run yet): the planner then guesses from the table's
 * size alone, and every orders page cost ~180 ms even at limit 1, 8–13 ms once analyzed. So a bulk load
 * analyzes the tables it wrote, once it has committed: the demo seed (src/seed/seed.ts) always, and a
 * platform batch (src/platform/run-batch.ts) when it wrote at least BULK_LOAD_ROWS rows.
 */

/**
 * Rows written (inserted or updated, every table together) by one platform call from which that call is a
 * bulk load and analyzes each table it wrote. Well above an ordinary batch (100 orders of 5 lines write
 * ~1,300 rows), reached by a full batch of 1,000 orders of 10 lines or a large catalogue. ANALYZE reads a
 * sample of at most 30,000 rows per table (default_statistics_target 100): tens of milliseconds per table
 * whatever its size, small beside the cost of writing 10,000 rows.
 */
export const BULK_LOAD_ROWS = 10_000

/**
 * The tables of the application's schemas this transaction wrote rows to (quoted, schema-qualified), when it
 * wrote at least `least` rows in all; none otherwise. Read from pg_stat_xact_user_tables, the current
 * transaction's own counts: call it as the transaction's last statement.
 */
export async function tablesBulkLoaded (tx: Tx, least = BULK_LOAD_ROWS): Promise<string[]> {
  const rows = await tx.execute<{ name: string, total: string }>(sql`
    select format('%I.%I', schemaname, relname) as name, sum(n_tup_ins + n_tup_upd) over () as total
    from pg_stat_xact_user_tables
    where schemaname = any (current_schemas(false)) and n_tup_ins + n_tup_upd > 0
    order by 1`)
  return rows.length > 0 && Number(rows[0].total) >= least ? rows.map((r) => r.name) : []
}

/** ANALYZE these tables (names as tablesBulkLoaded gives them: quoted by the server), outside any transaction. */
export async function analyzeTables (db: Db, tables: readonly string[]): Promise<void> {
  if (tables.length === 0) return
  await db.execute(sql.raw(`analyze ${tables.join(', ')}`))
}
