import { isPlainObject } from '../plain-object.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import { decimalValue, idValue, nameValue } from './fields.js'
import { combined, MAX_STORES_PER_SELLER, PlatformRowErrors as E, type PlatformRowError } from './texts.js'

/*
 * A seller row of PUT /v2/platform/sellers checked on its own, then against the other rows of the same
 * request (a companyId or a store id twice), before anything is read or written. Every field is required:
 * a PUT states the whole seller. Pure.
 */

export interface SellerRow {
  companyId: number
  name: string
  status: 'active' | 'suspended'
  /** Canonical decimal text ("0.02"). */
  takeRate: string
  autoRejectEnabled: boolean
  stores: Array<{ id: number, name: string }>
}

const STATUS = { ACTIVE: 'active', SUSPENDED: 'suspended' } as const

type Checked = { row: SellerRow, error?: undefined } | { row?: undefined, error: PlatformRowError, id: number | null }

function checkStores (value: unknown, problems: PlatformRowError[]): SellerRow['stores'] {
  if (!Array.isArray(value) || value.length > MAX_STORES_PER_SELLER) {
    problems.push(E.stores)
    return []
  }
  const stores: SellerRow['stores'] = []
  const seen = new Set<number>()
  value.forEach((store: unknown, i) => {
    if (!isPlainObject(store)) { problems.push(E.store(i)); return }
    const id = idValue(store.id)
    const name = nameValue(store.name)
    if (store.id === undefined) problems.push(E.missing(`stores[${i}].id`))
    else if (id === undefined) problems.push(E.storeId(i))
    else if (seen.has(id)) problems.push(E.storeIdTwiceInRow(i, id))
    if (store.name === undefined) problems.push(E.missing(`stores[${i}].name`))
    else if (name === undefined) problems.push(E.name(`stores[${i}].name`))
    else if (name === 'bad') problems.push(E.unstorable(`stores[${i}].name`))
    else if (name === 'blank') problems.push(E.blank(`stores[${i}].name`))
    if (id !== undefined && typeof name === 'string' && !seen.has(id)) stores.push({ id, name })
    if (id !== undefined) seen.add(id)
  })
  return stores
}

export function checkSellerRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const problems: PlatformRowError[] = []
  const required = (field: string, ok: boolean, error: PlatformRowError) => {
    if (raw[field] === undefined) problems.push(E.missing(field))
    else if (!ok) problems.push(error)
  }
  const companyId = idValue(raw.companyId)
  required('companyId', companyId !== undefined, E.companyId)
  const name = nameValue(raw.name)
  required('name', name !== undefined, E.name('name'))
  if (name === 'bad') problems.push(E.unstorable('name'))
  if (name === 'blank') problems.push(E.blank('name'))
  const status = typeof raw.status === 'string' && Object.hasOwn(STATUS, raw.status)
    ? STATUS[raw.status as keyof typeof STATUS]
    : undefined
  required('status', status !== undefined, E.status)
  const takeRate = decimalValue(raw.takeRate, 4)
  const rateOk = takeRate !== undefined && !takeRate.startsWith('-') && Number(takeRate) <= 1
  required('takeRate', rateOk, E.takeRate)
  required('autoRejectEnabled', typeof raw.autoRejectEnabled === 'boolean', E.autoRejectEnabled)
  const stores = raw.stores === undefined ? (problems.push(E.missing('stores')), []) : checkStores(raw.stores, problems)
  if (problems.length > 0) return { error: combined(problems), id: companyId ?? null }
  return {
    row: {
      companyId: companyId!,
      name: name as string,
      status: status!,
      takeRate: takeRate!,
      autoRejectEnabled: raw.autoRejectEnabled as boolean,
      stores
    }
  }
}

/**
 * Every row of a request checked: the rows to apply, and the outcome of each refused one. A companyId or
 * a store id already named by an earlier valid row of the request refuses the later row.
 */
export function checkSellerRows (raws: unknown[]): { valid: CheckedRow<SellerRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<SellerRow>[] = []
  const outcomes: (RowOutcome | null)[] = raws.map(() => null)
  const companyAt = new Map<number, number>()
  const storeAt = new Map<number, number>()
  raws.forEach((raw, index) => {
    const checked = checkSellerRow(raw)
    if (checked.error) { outcomes[index] = refused(checked.id, checked.error); return }
    const { row } = checked
    const earlier = companyAt.get(row.companyId)
    if (earlier !== undefined) {
      outcomes[index] = refused(row.companyId, E.companyIdTwice(row.companyId, earlier))
      return
    }
    const twice = row.stores.findIndex((s) => storeAt.has(s.id))
    if (twice >= 0) {
      const id = row.stores[twice].id
      outcomes[index] = refused(row.companyId, E.storeIdTwiceInRequest(twice, id, storeAt.get(id)!))
      return
    }
    companyAt.set(row.companyId, index)
    for (const store of row.stores) storeAt.set(store.id, index)
    valid.push({ index, row })
  })
  return { valid, outcomes }
}
