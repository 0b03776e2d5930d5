import { isPlainObject } from '../plain-object.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import { idValue, nameValue } from './fields.js'
import {
  combined, MAX_SHOPS_PER_RETAILER, PHONE_PATTERN, PlatformRowErrors as E, type PlatformRowError
} from './texts.js'

/*
 * A retailer row of PUT /v2/platform/retailers checked on its own, then against the other rows of the same
 * request, before anything is read or written. Every field is required, firstName, lastName, phone and
 * whatsapp may be null: a PUT states the whole retailer (null clears a field, as a missing field could
 * not say). Pure.
 */

/** The retailer's own fields: the same for every seller it is linked to. */
export type RetailerFields = {
  name: string
  firstName: string | null
  lastName: string | null
  phone: string | null
  whatsapp: string | null
}

export interface RetailerRow extends RetailerFields {
  id: number
  companyId: number
  shops: Array<{ id: number, shopName: string }>
}

export const RETAILER_FIELDS = ['name', 'firstName', 'lastName', 'phone', 'whatsapp'] as const

type Checked = { row: RetailerRow, error?: undefined } | { row?: undefined, error: PlatformRowError, id: number | null }

function checkShops (value: unknown, problems: PlatformRowError[]): RetailerRow['shops'] {
  if (!Array.isArray(value) || value.length > MAX_SHOPS_PER_RETAILER) {
    problems.push(E.shops)
    return []
  }
  const shops: RetailerRow['shops'] = []
  const seen = new Set<number>()
  value.forEach((shop: unknown, i) => {
    if (!isPlainObject(shop)) { problems.push(E.shop(i)); return }
    const id = idValue(shop.id)
    const shopName = nameValue(shop.shopName)
    if (shop.id === undefined) problems.push(E.missing(`shops[${i}].id`))
    else if (id === undefined) problems.push(E.shopId(i))
    else if (seen.has(id)) problems.push(E.shopIdTwiceInRow(i, id))
    if (shop.shopName === undefined) problems.push(E.missing(`shops[${i}].shopName`))
    else if (shopName === undefined) problems.push(E.name(`shops[${i}].shopName`))
    else if (shopName === 'bad') problems.push(E.unstorable(`shops[${i}].shopName`))
    else if (shopName === 'blank') problems.push(E.blank(`shops[${i}].shopName`))
    if (id !== undefined && typeof shopName === 'string' && !seen.has(id)) shops.push({ id, shopName })
    if (id !== undefined) seen.add(id)
  })
  return shops
}

export function checkRetailerRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const problems: PlatformRowError[] = []
  const required = (field: string, ok: boolean, error: PlatformRowError) => {
    if (raw[field] === undefined) problems.push(E.missing(field))
    else if (!ok) problems.push(error)
  }
  const id = idValue(raw.id)
  required('id', id !== undefined, E.retailerId)
  const companyId = idValue(raw.companyId)
  required('companyId', companyId !== undefined, E.companyId)
  const name = nameValue(raw.name)
  required('name', name !== undefined, E.name('name'))
  if (name === 'bad') problems.push(E.unstorable('name'))
  if (name === 'blank') problems.push(E.blank('name'))
  const nullableName = (field: 'firstName' | 'lastName'): string | null => {
    const value = raw[field] === null ? null : nameValue(raw[field])
    required(field, value !== undefined, E.nullableName(field))
    if (value === 'bad') problems.push(E.unstorable(field))
    if (value === 'blank') problems.push(E.blank(field))
    return value ?? null
  }
  const firstName = nullableName('firstName')
  const lastName = nullableName('lastName')
  const number = (field: 'phone' | 'whatsapp'): string | null => {
    const value = raw[field]
    required(field, value === null || (typeof value === 'string' && PHONE_PATTERN.test(value)), E.phone(field))
    return typeof value === 'string' ? value : null
  }
  const phone = number('phone')
  const whatsapp = number('whatsapp')
  const shops = raw.shops === undefined ? (problems.push(E.missing('shops')), []) : checkShops(raw.shops, problems)
  if (problems.length > 0) return { error: combined(problems), id: id ?? null }
  return {
    row: { id: id!, companyId: companyId!, name: name as string, firstName, lastName, phone, whatsapp, shops }
  }
}

const byId = (a: { id: number }, b: { id: number }) => a.id - b.id

/** The fields (and `shops`) in which two rows of one retailer differ; shops compare as a set. */
export function differences (a: RetailerRow, b: RetailerRow): string[] {
  const fields: string[] = RETAILER_FIELDS.filter((f) => a[f] !== b[f])
  const shops = (r: RetailerRow) => JSON.stringify([...r.shops].sort(byId))
  if (shops(a) !== shops(b)) fields.push('shops')
  return fields
}

/**
 * Every row of a request checked: the rows to apply, and the outcome of each refused one. Against the
 * earlier valid rows: the same (id, companyId) again is refused; the same id for another companyId (one
 * retailer linked to several sellers) must state the same retailer; a shop id under another retailer is
 * refused. The later row is the one refused, naming the earlier one's index.
 */
export function checkRetailerRows (
  raws: unknown[]
): { valid: CheckedRow<RetailerRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<RetailerRow>[] = []
  const outcomes: (RowOutcome | null)[] = raws.map(() => null)
  const linkAt = new Map<string, number>()
  const retailerAt = new Map<number, CheckedRow<RetailerRow>>()
  const shopAt = new Map<number, { retailerId: number, index: number }>()
  raws.forEach((raw, index) => {
    const checked = checkRetailerRow(raw)
    if (checked.error) { outcomes[index] = refused(checked.id, checked.error); return }
    const { row } = checked
    const link = `${row.companyId}:${row.id}`
    const earlierLink = linkAt.get(link)
    if (earlierLink !== undefined) {
      outcomes[index] = refused(row.id, E.retailerLinkTwice(row.id, row.companyId, earlierLink))
      return
    }
    const first = retailerAt.get(row.id)
    const differ = first === undefined ? [] : differences(first.row, row)
    if (first !== undefined && differ.length > 0) {
      outcomes[index] = refused(row.id, E.retailerMismatch(row.id, first.index, differ.join(', ')))
      return
    }
    const foreign = row.shops.findIndex((s) => {
      const earlier = shopAt.get(s.id)
      return earlier !== undefined && earlier.retailerId !== row.id
    })
    if (foreign >= 0) {
      const shopId = row.shops[foreign].id
      outcomes[index] = refused(row.id, E.shopIdTwiceInRequest(foreign, shopId, shopAt.get(shopId)!.index))
      return
    }
    linkAt.set(link, index)
    if (first === undefined) retailerAt.set(row.id, { index, row })
    for (const shop of row.shops) if (!shopAt.has(shop.id)) shopAt.set(shop.id, { retailerId: row.id, index })
    valid.push({ index, row })
  })
  return { valid, outcomes }
}
