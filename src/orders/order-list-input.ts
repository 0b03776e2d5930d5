import { InvalidInputError } from '../errors.js'
import { parsePageWindow, type PageWindow } from '../paging/page-window.js'

/*
 * The orders read's input, checked and defaulted as docs/api/orders.md says. Every rejection names
 * the field, so a client can tell which of its values to fix.
 */

/** What a caller may ask for (OrderListInput); any field may be missing or null. */
export interface OrderListQuery {
  page?: number | null
  limit?: number | null
  fromDate?: string | null
  toDate?: string | null
  updatedSince?: string | null
}

export interface OrderListFilter extends PageWindow {
  /** YYYY-MM-DD, inclusive, a whole day in the business time zone. */
  fromDate: string | null
  toDate: string | null
  /** An ISO-8601 instant with an offset, passed to PostgreSQL as written (microseconds kept). */
  updatedSince: string | null
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-](\d{2}):?(\d{2}))$/i

function isCalendarDate (y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
  return d <= days
}

function parseDate (field: 'fromDate' | 'toDate', value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const m = DATE.exec(value)
  if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
    throw new InvalidInputError(field, `${field} must be a calendar date in the form YYYY-MM-DD, got ${JSON.stringify(value)}`)
  }
  return value
}

function parseTimestamp (field: string, value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const m = TIMESTAMP.exec(value)
  const valid = m !== null && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])) &&
    Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6] ?? 0) <= 59 &&
    // Real offsets run from -12:00 to +14:00; anything wider PostgreSQL would refuse.
    Number(m[7] ?? 0) <= 14 && Number(m[8] ?? 0) <= 59
  if (!valid) {
    throw new InvalidInputError(field, `${field} must be an ISO-8601 timestamp with a time zone, like 2026-11-01T10:00:00Z, got ${JSON.stringify(value)}`)
  }
  return value
}

export function parseOrderListInput (input: OrderListQuery | null | undefined): OrderListFilter {
  const window = parsePageWindow(input)
  const fromDate = parseDate('fromDate', input?.fromDate)
  const toDate = parseDate('toDate', input?.toDate)
  // Same format, so the strings compare as the dates do.
  if (fromDate !== null && toDate !== null && fromDate > toDate) {
    throw new InvalidInputError('fromDate', `fromDate (${fromDate}) must not be after toDate (${toDate})`)
  }
  return {
    ...window,
    fromDate,
    toDate,
    updatedSince: parseTimestamp('updatedSince', input?.updatedSince)
  }
}
