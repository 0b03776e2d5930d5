import { getTableColumns, sql, type SQL } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import type { Tx } from './client.js'

/*
 * Set-based bulk insert of a table's own rows (its Drizzle insert type): one array parameter per column,
 * `insert … select … from unnest(…)`. It avoids the 65,534-parameter limit of multi-row VALUES and is
 * about twice as fast. (COPY was tried for the seed: postgres.js never settles a COPY that the server
 * rejects, so a bad row hung the process.) Columns and their SQL types come from the Drizzle schema.
 */

/**
 * Every value travels as text and is cast in SQL: postgres.js infers array parameter types from the JS
 * values and gets booleans and dates wrong, while text always round-trips exactly.
 */
function asText (value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** A column read back from its text; array columns (text[]) cannot ride in unnest (it flattens them). */
function fromText (column: PgColumn, i: number): SQL {
  // A serial column is its integer type once the value is given.
  const type = sql.raw(column.getSQLType().replace(/^bigserial$/, 'bigint').replace(/^serial$/, 'integer'))
  const c = sql.raw(`c${i}`)
  return column.getSQLType().endsWith('[]')
    ? sql`(select coalesce(array_agg(e), '{}') from jsonb_array_elements_text(${c}::jsonb) e)::${type}`
    : sql`${c}::${type}`
}

export async function insertRows<T extends PgTable> (tx: Tx, table: T, rows: ReadonlyArray<T['$inferInsert']>, chunkSize = 5000): Promise<number> {
  if (rows.length === 0) return 0
  const all = getTableColumns(table) as Record<string, PgColumn>
  // The columns the rows set (every row of one call sets the same ones).
  const keys = Object.keys(rows[0]).filter((key) => key in all)
  const columns = keys.map((key) => all[key])
  const head = sql`insert into ${table} (${sql.join(columns.map((c) => sql.identifier(c.name)), sql`, `)})
    select ${sql.join(columns.map((c, i) => fromText(c, i + 1)), sql`, `)}`
  const names = sql.raw(columns.map((_, i) => `c${i + 1}`).join(', '))
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.slice(start, start + chunkSize) as Array<Record<string, unknown>>
    const arrays = keys.map((key) => sql`${sql.param(chunk.map((row) => asText(row[key])))}::text[]`)
    await tx.execute(sql`${head} from unnest(${sql.join(arrays, sql`, `)}) as u(${names})`)
  }
  return rows.length
}
