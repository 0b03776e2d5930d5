import type postgres from 'postgres'

/*
 * Set-based bulk insert: one array parameter per column, `insert … select * from unnest(…)`. It avoids
 * the 65,534-parameter limit of multi-row VALUES and is about twice as fast. (COPY was tried for the
 * seed: postgres.js never settles a COPY that the server rejects, so a bad row hung the process.)
 */

export type BulkValue = string | number | boolean | null | undefined | Date | object

type Sql = postgres.Sql | postgres.TransactionSql

/** A column's SQL type, as `format_type` gives it (e.g. `numeric(14,2)`, `text[]`). */
export async function columnTypes (sql: Sql, table: string): Promise<Map<string, string>> {
  const rows = await sql`
    select a.attname as name, format_type(a.atttypid, a.atttypmod) as type
    from pg_attribute a where a.attrelid = ${table}::regclass and a.attnum > 0 and not a.attisdropped`
  return new Map(rows.map((r) => [r.name as string, r.type as string]))
}

/**
 * Every parameter travels as text[] and is cast in SQL: postgres.js infers array parameter types from
 * the JS values and gets booleans and dates wrong, while text always round-trips exactly.
 */
function toParam (v: BulkValue): string | null {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return v.toISOString()
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** Array columns (text[]) cannot ride in unnest (it flattens them): they go as JSON and are rebuilt. */
function selectExpr (column: string, type: string, i: number): { param: string, expr: string } {
  if (type.endsWith('[]')) {
    return { param: `$${i}::text[]`, expr: `(select coalesce(array_agg(e), '{}') from jsonb_array_elements_text(c${i}::jsonb) e)::${type}` }
  }
  return { param: `$${i}::text[]`, expr: `c${i}::${type}` }
}

export async function insertRows (
  sql: Sql, table: string, columns: string[], rows: BulkValue[][],
  options: { types?: Map<string, string>, chunkSize?: number } = {}
): Promise<number> {
  if (rows.length === 0) return 0
  const types = options.types ?? await columnTypes(sql, table)
  const parts = columns.map((c, i) => {
    const type = types.get(c)
    if (!type) throw new Error(`insertRows: ${table} has no column ${c}`)
    return selectExpr(c, type, i + 1)
  })
  const text = `insert into ${table} (${columns.map((c) => `"${c}"`).join(', ')})
    select ${parts.map((p) => p.expr).join(', ')}
    from unnest(${parts.map((p) => p.param).join(', ')}) as u(${columns.map((_, i) => `c${i + 1}`).join(', ')})`
  const chunkSize = options.chunkSize ?? 5000
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.slice(start, start + chunkSize)
    const params = columns.map((_, ci) => chunk.map((row) => toParam(row[ci])))
    await sql.unsafe(text, params as never[])
  }
  return rows.length
}
