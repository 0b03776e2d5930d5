import { badRequest } from '../errors.js'
import { decodeCursor, type MoneyListName } from './cursor.js'
import { DEFAULT_MONEY_PAGE, MAX_MONEY_PAGE, MAX_SETTLE_ID, MoneyCode, MoneyText } from './texts.js'

/*
 * A finance list's query string (`?status=&companyId=&from=&to=&after=&limit=`), checked whole before
 * anything is read: each refusal is a 400 naming its parameter, so a typo never silently lists everything.
 * `from` is inclusive, `to` exclusive, both on the row's creation time.
 */

export interface MoneyListFilter {
  status: string | null
  companyId: number | null
  /** ISO-8601 UTC instants. */
  from: string | null
  to: string | null
  /** The id the page starts after; null: from the first row. */
  after: string | null
  /** The cursor as the client sent it: an empty page's endCursor. */
  afterCursor: string | null
  limit: number
}

export interface ListShape {
  list: MoneyListName
  /** The statuses `status` may name; empty: the list has no status filter. */
  statuses: readonly string[]
  /** Whether companyId is a filter (it is the path of a seller's ledger). */
  companyFilter: boolean
}

const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/
const DATE_TIME = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})$/

/** An instant as ISO-8601 UTC, or null when the text is not one (a day that does not exist included). */
export function instantOf (text: string): string | null {
  const date = DATE.exec(text)
  const match = date ?? DATE_TIME.exec(text)
  if (match === null) return null
  const [, y, m, d] = match
  // The day must exist: 2026-02-30 is refused rather than read as March 2nd.
  const day = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)))
  const exists = day.getUTCFullYear() === Number(y) && day.getUTCMonth() === Number(m) - 1 &&
    day.getUTCDate() === Number(d)
  if (Number(y) < 1 || !exists) return null
  const [hour, minute, second] = [match[4], match[5], match[6]?.slice(1, 3) ?? '0'].map(Number)
  if (date === null && (hour > 23 || minute > 59 || second > 59)) return null
  const ms = Date.parse(date === null ? text : `${text}T00:00:00Z`)
  return Number.isNaN(ms) ? null : new Date(ms).toISOString()
}

function single (query: Record<string, unknown>, name: string): string | null {
  const value = query[name]
  if (value === undefined) return null
  if (typeof value !== 'string') throw badRequest(MoneyCode.repeatedParameter, MoneyText.repeatedParameter(name))
  return value
}

export function parseListQuery (query: unknown, shape: ListShape): MoneyListFilter {
  const q = (query !== null && typeof query === 'object' ? query : {}) as Record<string, unknown>
  const allowed = [
    ...(shape.statuses.length > 0 ? ['status'] : []), ...(shape.companyFilter ? ['companyId'] : []), 'from', 'to', 'after', 'limit'
  ]
  const unknown = Object.keys(q).find((name) => !allowed.includes(name))
  if (unknown !== undefined) {
    throw badRequest(MoneyCode.unknownParameter, MoneyText.unknownParameter(unknown.slice(0, 100), allowed.join(', ')))
  }

  const status = single(q, 'status')
  if (status !== null && !shape.statuses.includes(status)) {
    throw badRequest(MoneyCode.status, MoneyText.status(shape.statuses.join(', ')))
  }

  const company = single(q, 'companyId')
  if (company !== null && (!/^[1-9][0-9]{0,9}$/.test(company) || Number(company) > MAX_SETTLE_ID)) {
    throw badRequest(MoneyCode.companyId, MoneyText.companyId)
  }

  const [from, to] = (['from', 'to'] as const).map((name) => {
    const text = single(q, name)
    if (text === null) return null
    const instant = instantOf(text)
    if (instant === null) throw badRequest(MoneyCode.time, MoneyText.time(name))
    return instant
  })
  if (from !== null && to !== null && from > to) throw badRequest(MoneyCode.range, MoneyText.range)

  const limitText = single(q, 'limit')
  if (limitText !== null && (!/^[1-9][0-9]{0,3}$/.test(limitText) || Number(limitText) > MAX_MONEY_PAGE)) {
    throw badRequest(MoneyCode.limit, MoneyText.limit)
  }

  const afterCursor = single(q, 'after')
  const after = afterCursor === null ? null : decodeCursor(shape.list, afterCursor)
  if (afterCursor !== null && after === null) throw badRequest(MoneyCode.after, MoneyText.after)

  return {
    status,
    companyId: company === null ? null : Number(company),
    from,
    to,
    after,
    afterCursor,
    limit: limitText === null ? DEFAULT_MONEY_PAGE : Number(limitText)
  }
}
