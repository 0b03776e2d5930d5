import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from './client.js'

/*
 * Statements through the one handle. `tx.execute<Row>(sql`…`)` types a statement's rows where it is
 * written but sends it unprepared (Drizzle prepares only named queries); this is the prepared form, for a
 * statement shape run again and again (the order page, each job's reads and writes): postgres.js then
 * parses and plans it once per connection instead of every time.
 */

const dialect = new PgDialect()

export async function prepared<Row extends Record<string, unknown> = Record<string, unknown>> (tx: Tx, statement: SQL): Promise<Row[]> {
  // Any name makes Drizzle ask postgres.js to prepare; postgres.js caches by the statement's text.
  const prepared = tx._.session.prepareQuery(dialect.sqlToQuery(statement), undefined, 'prepared', false)
  return await prepared.execute() as Row[]
}

/**
 * Statements whose text depends on what the caller asked for (the pass-through's selections): the first
 * 256 distinct texts of the process are prepared, the rest sent unprepared. A caller inventing new
 * shapes can then never grow each connection's set of prepared statements without bound; the shapes
 * real clients send again and again are among the first seen.
 */
const PREPARED_SHAPES = 256
const preparedShapes = new Set<string>()

export async function runReadStatement<Row extends Record<string, unknown> = Record<string, unknown>> (tx: Tx, statement: SQL): Promise<Row[]> {
  const text = dialect.sqlToQuery(statement).sql
  if (preparedShapes.has(text) || preparedShapes.size < PREPARED_SHAPES) {
    preparedShapes.add(text)
    return prepared<Row>(tx, statement)
  }
  return await tx.execute<Row>(statement) as Row[]
}
