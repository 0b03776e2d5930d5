import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { encodeCursor, type MoneyListName } from './cursor.js'
import type { MoneyListFilter } from './list-query.js'

/*
 * One page of a finance list: keyset on the row's id (never an offset, so a page deep in a million rows
 * costs what the first one does), read one row more than it shows to know hasNext (paging/page-info.ts's
 * rule). The CSV export walks the same pages (csv.ts).
 */

export interface MoneyPage<Row> { nodes: Row[], pageInfo: { hasNext: boolean, endCursor: string | null } }

/** What a list reads: its statement for a filter, a page of `limit + 1` rows after filter.after. */
export interface MoneyList<Row extends { id: string }> {
  name: MoneyListName
  /** The row's fields in the answer's order: the CSV export's columns. */
  columns: ReadonlyArray<keyof Row & string>
  statement: (filter: MoneyListFilter, fetch: number) => SQL
}

/** A timestamptz as the API writes it: ISO-8601 in UTC with microseconds (the event feed's form). */
export const isoTime = (column: SQL): SQL =>
  sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** The conditions every list shares on its table's alias `t`: the page's start and the time range. */
export function commonConditions (filter: MoneyListFilter): SQL[] {
  return [
    ...(filter.after !== null ? [sql`t.id > ${filter.after}::bigint`] : []),
    ...(filter.from !== null ? [sql`t.created_at >= ${filter.from}::timestamptz`] : []),
    ...(filter.to !== null ? [sql`t.created_at < ${filter.to}::timestamptz`] : [])
  ]
}

export const whereAll = (conditions: SQL[]): SQL =>
  conditions.length === 0 ? sql`true` : sql.join(conditions, sql` and `)

export async function readMoneyPage<Row extends { id: string }> (
  tx: Tx, list: MoneyList<Row>, filter: MoneyListFilter
): Promise<MoneyPage<Row>> {
  const rows = [...await tx.execute<Row>(list.statement(filter, filter.limit + 1))] as Row[]
  const hasNext = rows.length > filter.limit
  const nodes = hasNext ? rows.slice(0, filter.limit) : rows
  const last = nodes.at(-1)
  const endCursor = last !== undefined ? encodeCursor(list.name, last.id) : filter.afterCursor
  return { nodes, pageInfo: { hasNext, endCursor } }
}
