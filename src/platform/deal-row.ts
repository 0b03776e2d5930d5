import { isPlainObject } from '../plain-object.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import { dateValue, idValue, moneyValue, positiveQuantityValue } from './fields.js'
import { combined, PlatformRowErrors as E, type PlatformRowError } from './texts.js'

/*
 * A deal row of PUT /v2/platform/deals checked on its own, then against the other rows of the same request
 * (a deal id twice), before anything is read or written. Every field is required: a PUT states the whole
 * deal. The grabbed quantity is the orders' and is no field of the row. Pure.
 */

export interface DealRow {
  id: number
  companyId: number
  offerId: number
  /** YYYY-MM-DD. */
  dealDate: string
  /** Canonical decimal texts. */
  dealPrice: string
  maxQuantity: string
}

type Checked = { row: DealRow, error?: undefined } | { row?: undefined, error: PlatformRowError, id: number | null }

export function checkDealRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const problems: PlatformRowError[] = []
  const value = <T>(field: string, parse: (v: unknown) => T | undefined, error: PlatformRowError): T | undefined => {
    if (raw[field] === undefined) { problems.push(E.missing(field)); return undefined }
    const parsed = parse(raw[field])
    if (parsed === undefined) problems.push(error)
    return parsed
  }
  const id = value('id', idValue, E.id('id'))
  const companyId = value('companyId', idValue, E.companyId)
  const offerId = value('offerId', idValue, E.id('offerId'))
  const dealDate = value('dealDate', dateValue, E.dealDate)
  const dealPrice = value('dealPrice', moneyValue, E.money('dealPrice'))
  const maxQuantity = value('maxQuantity', positiveQuantityValue, E.positiveQuantity('maxQuantity'))
  if (problems.length > 0) return { error: combined(problems), id: id ?? null }
  const row = { id, companyId, offerId, dealDate, dealPrice, maxQuantity }
  return { row: row as DealRow }
}

/** Every row of a request checked; a deal id already named by an earlier valid row refuses the later row. */
export function checkDealRows (raws: unknown[]): { valid: CheckedRow<DealRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<DealRow>[] = []
  const outcomes: (RowOutcome | null)[] = raws.map(() => null)
  const dealAt = new Map<number, number>()
  raws.forEach((raw, index) => {
    const checked = checkDealRow(raw)
    if (checked.error) { outcomes[index] = refused(checked.id, checked.error); return }
    const { row } = checked
    const earlier = dealAt.get(row.id)
    if (earlier !== undefined) { outcomes[index] = refused(row.id, E.dealIdTwice(row.id, earlier)); return }
    dealAt.set(row.id, index)
    valid.push({ index, row })
  })
  return { valid, outcomes }
}
