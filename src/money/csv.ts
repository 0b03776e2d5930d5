import type { Tx } from '../db/client.js'
import type { MoneyListFilter } from './list-query.js'
import { readMoneyPage, type MoneyList } from './page.js'

/*
 * A finance list as CSV (`Accept: text/csv`), for the spreadsheet finance works in: the header row, then
 * every row of the filtered list (all pages from `after`, not only one), read from the database a batch
 * at a time by the list's own keyset and written as each batch arrives, so a 100,000-row export never
 * sits in memory. RFC 4180: CRLF line ends, a cell with a comma, quote or line break quoted, its quotes
 * doubled. A cell a spreadsheet would run as a formula (starting = + - @, or a tab or carriage return)
 * gets a leading ' (OWASP's advice on CSV injection): a reference is finance's text, but it came over an API.
 */

/** Rows read per statement while exporting. */
export const CSV_BATCH = 1000

const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

export function csvCell (value: string | number | null): string {
  if (value === null) return ''
  let text = String(value)
  // A number we wrote (an amount "-120.50") is data, not a formula: only text is guarded.
  if (typeof value === 'string' && FORMULA_START.test(text) && !/^-[0-9]+(\.[0-9]+)?$/.test(text)) text = `'${text}`
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const csvLine = (cells: ReadonlyArray<string | number | null>): string => cells.map(csvCell).join(',') + '\r\n'

/** The CSV text of a list, header first, a batch of rows per chunk. */
export async function * csvRows<Row extends { id: string }> (
  tx: Tx, list: MoneyList<Row>, filter: MoneyListFilter, columns = list.columns, batch = CSV_BATCH
): AsyncGenerator<string> {
  yield csvLine(columns)
  let page = { ...filter, limit: batch }
  for (;;) {
    const { nodes, pageInfo } = await readMoneyPage(tx, list, page)
    if (nodes.length > 0) yield nodes.map((row) => csvLine(columns.map((c) => row[c] as string | number | null))).join('')
    if (!pageInfo.hasNext) return
    page = { ...page, after: nodes.at(-1)!.id, afterCursor: pageInfo.endCursor }
  }
}
