/*
 * The lists' cursor (docs/platform/money.md): the id of the page's last row, opaque to the client and
 * bound to its list, so a cursor of the refunds is refused by the payouts rather than read as another id.
 * As the event feed's, an empty page's endCursor is the `after` it was asked with, so it can always be stored.
 */

export type MoneyListName = 'refunds' | 'payouts' | 'ledger'

const ID = /^[1-9][0-9]{0,18}$/
const MAX_BIGINT = 9223372036854775807n

export function encodeCursor (list: MoneyListName, id: string): string {
  return Buffer.from(`${list}:${id}`, 'utf8').toString('base64url')
}

/** The id a cursor of `list` stands for, or null when it is not one this list gave out. */
export function decodeCursor (list: MoneyListName, cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  // Only the canonical spelling: a cursor differing in its padding bits is not one this list gave out.
  if (Buffer.from(text, 'utf8').toString('base64url') !== cursor) return null
  const [name, id, ...rest] = text.split(':')
  if (name !== list || id === undefined || rest.length > 0 || !ID.test(id) || BigInt(id) > MAX_BIGINT) return null
  return id
}
