import { unstorableTextRule } from '../db/storable-text.js'
import { itemErrors } from '../item-error.js'

/*
 * The finance routes' texts (docs/platform/money.md), each written once with its code: the lists' query
 * refusals (a 400 without data, naming the parameter) and the settle rows' errors (data.errors[]).
 */

/** A list page: 1 to this many rows. */
export const MAX_MONEY_PAGE = 1000
export const DEFAULT_MONEY_PAGE = 100
/** A finance reference: as long as the points' references (platform/texts.ts TEXT_MAX_LENGTH). */
export const REFERENCE_MAX_LENGTH = 200
/** refunds.id and payout_schedules.id are PostgreSQL serials. */
export const MAX_SETTLE_ID = 2_147_483_647
/** A settledAt a little ahead of the server's clock is the client's clock, not a date in the future. */
export const SETTLED_AT_GRACE_MS = 5 * 60_000

export const MoneyText = {
  refundsSettled: 'Refunds settled',
  payoutsSettled: 'Payouts settled',
  refundsListed: 'Refunds',
  payoutsListed: 'Payouts',
  ledgerListed: 'Ledger entries',
  /** `allowed`: the parameters the list reads, comma-separated. */
  unknownParameter: (name: string, allowed: string) => `Unknown query parameter ${JSON.stringify(name)}: this list reads ${allowed}`,
  repeatedParameter: (name: string) => `Query parameter ${name} is given more than once`,
  /** `allowed`: the list's statuses, comma-separated. */
  status: (allowed: string) => `status must be one of ${allowed}`,
  companyId: `companyId must be a positive integer of at most ${MAX_SETTLE_ID}`,
  time: (name: string) => `${name} must be an ISO-8601 date and time with a time zone, such as "2026-11-28T00:00:00Z", or a date YYYY-MM-DD (midnight UTC)`,
  range: 'from must not be later than to',
  limit: `limit must be an integer from 1 to ${MAX_MONEY_PAGE}`,
  after: 'after must be the endCursor of a page of this same list, as it was given'
} as const

export const MoneyCode = {
  unknownParameter: 'UNKNOWN_PARAMETER',
  repeatedParameter: 'REPEATED_PARAMETER',
  status: 'INVALID_STATUS_FILTER',
  companyId: 'INVALID_COMPANY_ID',
  time: 'INVALID_TIME',
  range: 'INVALID_TIME_RANGE',
  limit: 'INVALID_LIMIT',
  after: 'INVALID_CURSOR'
} as const

/** The ledger of a seller that does not exist: a 404. */
export const MoneyNotFoundText = {
  sellerNotFound: (companyId: number) => `Seller ${companyId} not found`
} as const

export const MoneyNotFoundCode = {
  sellerNotFound: 'SELLER_NOT_FOUND'
} as const

export const SettleRowErrors = itemErrors({
  notAnObject: ['ROW_NOT_OBJECT', 'Row must be a JSON object {id, reference, settledAt}'],
  id: ['INVALID_ID', `id must be a positive integer of at most ${MAX_SETTLE_ID}, as a string of digits or a JSON number`],
  idTwice: ['DUPLICATE_ID', (id: string, index: number) => `id ${id} already appears in the row at index ${index}`],
  reference: ['INVALID_REFERENCE', `reference must be a non-empty string of at most ${REFERENCE_MAX_LENGTH} characters`],
  unstorable: ['UNSTORABLE_TEXT', unstorableTextRule('reference')],
  settledAt: ['INVALID_SETTLED_AT', 'settledAt must be an ISO-8601 date and time with a time zone, such as "2026-11-28T10:15:00+05:30", not in the future'],
  refundNotFound: ['REFUND_NOT_FOUND', (id: string) => `Refund ${id} not found`],
  payoutNotFound: ['PAYOUT_NOT_FOUND', (id: string) => `Payout ${id} not found`],
  refundNotManual: ['REFUND_NOT_MANUAL',
    (id: string, status: string) => `Refund ${id} is ${status}: only a MANUAL refund is settled by finance`],
  payoutNotScheduled: ['PAYOUT_NOT_SCHEDULED',
    (id: string, status: string) => `Payout ${id} is ${status}: only a SCHEDULED payout can be paid`],
  alreadySettled: ['ALREADY_SETTLED',
    (id: string, reference: string | null) => reference === null
      ? `${id} was settled without a finance reference: it cannot be given one now`
      : `${id} was already settled with reference ${JSON.stringify(reference)}`]
})
