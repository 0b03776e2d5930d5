import { isPlainObject } from '../plain-object.js'
import { toCents } from '../status-update/points.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import { decimalValue, idValue, nameValue } from './fields.js'
import { combined, MAX_BALANCE_CENTS, PlatformRowErrors as E, type PlatformRowError } from './texts.js'

/*
 * A row of POST /v2/platform/sellers/points checked on its own, before anything is read: companyId,
 * a non-zero amount of at most 2 decimals that numeric(14,2) holds, and the marketplace's reference.
 * Pure. The same (companyId, reference) twice in one request is decided with the stored entries
 * (plan-points.ts): the same amount again is unchanged, as a re-send is.
 */

export interface PointsRow {
  companyId: number
  /** In hundredths. */
  cents: bigint
  reference: string
}

type Checked = { row: PointsRow, error?: undefined } | { row?: undefined, error: PlatformRowError, id: string | null }

export function checkPointsRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const problems: PlatformRowError[] = []
  const companyId = idValue(raw.companyId)
  if (raw.companyId === undefined) problems.push(E.missing('companyId'))
  else if (companyId === undefined) problems.push(E.companyId)
  const amount = decimalValue(raw.amount, 2)
  const cents = amount === undefined ? undefined : toCents(amount)
  if (raw.amount === undefined) problems.push(E.missing('amount'))
  else if (cents === undefined || cents === 0n || cents > MAX_BALANCE_CENTS || -cents > MAX_BALANCE_CENTS) {
    problems.push(E.amount)
  }
  const reference = nameValue(raw.reference)
  if (raw.reference === undefined) problems.push(E.missing('reference'))
  else if (reference === undefined) problems.push(E.reference)
  else if (reference === 'bad') problems.push(E.unstorable('reference'))
  else if (reference === 'blank') problems.push(E.blank('reference'))
  // The row's own id in its error: the reference as sent (not an unstorable one).
  const id = reference === 'blank' ? raw.reference as string : typeof reference === 'string' && reference !== 'bad' ? reference : null
  if (problems.length > 0) return { error: combined(problems), id }
  return { row: { companyId: companyId!, cents: cents!, reference: reference as string } }
}

export function checkPointsRows (raws: unknown[]): { valid: CheckedRow<PointsRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<PointsRow>[] = []
  const outcomes = raws.map((raw, index): RowOutcome | null => {
    const checked = checkPointsRow(raw)
    if (checked.error) return refused(checked.id, checked.error)
    valid.push({ index, row: checked.row })
    return null
  })
  return { valid, outcomes }
}
