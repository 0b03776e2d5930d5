import { isPlainObject } from '../plain-object.js'
import { refused, type CheckedRow, type RowOutcome } from './batch.js'
import {
  currencyValue, idValue, imageValue, moneyValue, nameValue, positiveQuantityValue, quantityValue, textValue
} from './fields.js'
import {
  combined, MAX_IMAGES_PER_SKU, MAX_OFFERS_PER_SKU, MAX_SKUS_PER_ITEM, MAX_SLABS_PER_OFFER, MAX_TAGS_PER_SKU,
  MAX_UNITS_PER_SKU, PlatformRowErrors as E, type PlatformRowError
} from './texts.js'

/*
 * An item row of PUT /v2/platform/catalogue checked on its own, then against the other rows of the same
 * request (an id of any level twice), before anything is read or written. The row is the unit: one bad
 * offer refuses the whole item, and the text lists every broken field by its path in the row
 * (`skus[1].offers[0].purchasePrice`). Money and quantities are kept as canonical decimal texts, so
 * `10` and `"10.00"` are the same value. Pure.
 */

export interface SellingUnitRow { id: number, name: string, multiplier: string, isBaseUnit: boolean }
/** A price slab; maxQuantity null: no upper bound. */
export interface PriceSlabRow { minQuantity: string, maxQuantity: string | null, price: string }
export interface OfferRow {
  id: number
  purchasePrice: string
  mrpPriceAmount: string
  finalPriceWithTax: string
  currency: string
  priceRange: PriceSlabRow[]
}
export interface SkuRow {
  id: number
  skuNickName: string
  images: string[]
  tags: string[]
  itemSellingUnits: SellingUnitRow[]
  offers: OfferRow[]
}
export interface ItemRow { id: number, companyId: number, itemName: string, skus: SkuRow[] }

type Checked = { row: ItemRow, error?: undefined } | { row?: undefined, error: PlatformRowError, id: number | null }
type Fields = Record<string, unknown>

/** The problems of one row, collected field by field in the row's order. */
class RowCheck {
  readonly problems: PlatformRowError[] = []
  /** Ids seen in this row, per level, with the path of their first place. */
  private readonly seen = {
    sku: new Map<number, string>(), offer: new Map<number, string>(), unit: new Map<number, string>()
  }

  /** A required value read by `parse`, or undefined after its problem (missing, or broken: `error`). */
  value<T> (raw: Fields, key: string, path: string, parse: (v: unknown) => T | undefined,
    error: (path: string) => PlatformRowError): T | undefined {
    if (raw[key] === undefined) { this.problems.push(E.missing(path)); return undefined }
    const value = parse(raw[key])
    if (value === undefined) this.problems.push(error(path))
    return value
  }

  /** A name (itemName, skuNickName, a selling unit's name): blank names refused too. */
  text (raw: Fields, key: string, path: string): string | undefined {
    const value = this.value(raw, key, path, nameValue, E.name)
    if (value === 'bad') this.problems.push(E.unstorable(path))
    else if (value === 'blank') this.problems.push(E.blank(path))
    else return value
    return undefined
  }

  /** Each element of a required, bounded list: `each` answers it checked, or undefined. */
  list<T> (raw: Fields, key: string, path: string, max: number, what: string,
    each: (element: unknown, path: string) => T | undefined): T[] | undefined {
    const value = raw[key]
    if (value === undefined) { this.problems.push(E.missing(path)); return undefined }
    if (!Array.isArray(value) || value.length > max) { this.problems.push(E.list(path, max, what)); return undefined }
    const out: T[] = []
    value.forEach((element: unknown, i) => {
      const checked = each(element, `${path}[${i}]`)
      if (checked !== undefined) out.push(checked)
    })
    return out.length === value.length ? out : undefined
  }

  object<T> (element: unknown, path: string, each: (raw: Fields) => T | undefined): T | undefined {
    if (!isPlainObject(element)) { this.problems.push(E.element(path)); return undefined }
    return each(element)
  }

  /** An id of a level, once per row. */
  id (raw: Fields, path: string, level: 'sku' | 'offer' | 'unit'): number | undefined {
    const id = this.value(raw, 'id', `${path}.id`, idValue, E.id)
    if (id === undefined) return undefined
    if (this.seen[level].has(id)) {
      const twice = { sku: E.skuIdTwiceInRow, offer: E.offerIdTwiceInRow, unit: E.unitIdTwiceInRow }[level]
      this.problems.push(twice(`${path}.id`, id))
      return undefined
    }
    this.seen[level].set(id, path)
    return id
  }
}

function checkUnit (c: RowCheck, element: unknown, path: string): SellingUnitRow | undefined {
  return c.object(element, path, (raw) => {
    const id = c.id(raw, path, 'unit')
    const name = c.text(raw, 'name', `${path}.name`)
    const multiplier = c.value(raw, 'multiplier', `${path}.multiplier`, positiveQuantityValue, E.positiveQuantity)
    const isBaseUnit = c.value(raw, 'isBaseUnit', `${path}.isBaseUnit`,
      (v) => typeof v === 'boolean' ? v : undefined, E.baseUnit)
    if (id === undefined || name === undefined || multiplier === undefined || isBaseUnit === undefined) return undefined
    return { id, name, multiplier, isBaseUnit }
  })
}

function checkSlab (c: RowCheck, element: unknown, path: string): PriceSlabRow | undefined {
  return c.object(element, path, (raw) => {
    const minQuantity = c.value(raw, 'minQuantity', `${path}.minQuantity`, quantityValue, E.quantity)
    // null is a value here (no upper bound), so it is checked apart from "missing".
    const maxQuantity = raw.maxQuantity === null
      ? null
      : c.value(raw, 'maxQuantity', `${path}.maxQuantity`, quantityValue, E.quantity)
    const price = c.value(raw, 'price', `${path}.price`, moneyValue, E.money)
    if (minQuantity === undefined || maxQuantity === undefined || price === undefined) return undefined
    if (maxQuantity !== null && Number(maxQuantity) < Number(minQuantity)) {
      c.problems.push(E.slabBounds(path))
      return undefined
    }
    return { minQuantity, maxQuantity, price }
  })
}

function checkOffer (c: RowCheck, element: unknown, path: string): OfferRow | undefined {
  return c.object(element, path, (raw) => {
    const id = c.id(raw, path, 'offer')
    const purchasePrice = c.value(raw, 'purchasePrice', `${path}.purchasePrice`, moneyValue, E.money)
    const mrpPriceAmount = c.value(raw, 'mrpPriceAmount', `${path}.mrpPriceAmount`, moneyValue, E.money)
    const finalPriceWithTax = c.value(raw, 'finalPriceWithTax', `${path}.finalPriceWithTax`, moneyValue, E.money)
    const currency = c.value(raw, 'currency', `${path}.currency`, currencyValue, E.currency)
    const priceRange = c.list(raw, 'priceRange', `${path}.priceRange`, MAX_SLABS_PER_OFFER,
      'objects {minQuantity, maxQuantity, price}', (slab, at) => checkSlab(c, slab, at))
    if (id === undefined || purchasePrice === undefined || mrpPriceAmount === undefined ||
      finalPriceWithTax === undefined || currency === undefined || priceRange === undefined) return undefined
    return { id, purchasePrice, mrpPriceAmount, finalPriceWithTax, currency, priceRange }
  })
}

function checkSku (c: RowCheck, element: unknown, path: string): SkuRow | undefined {
  return c.object(element, path, (raw) => {
    const id = c.id(raw, path, 'sku')
    const skuNickName = c.text(raw, 'skuNickName', `${path}.skuNickName`)
    const strings = (key: string, max: number, parse: typeof imageValue, error: (p: string) => PlatformRowError) =>
      c.list(raw, key, `${path}.${key}`, max, 'strings', (value, at) => {
        const text = parse(value)
        if (text === undefined) c.problems.push(error(at))
        if (text === 'bad') c.problems.push(E.unstorable(at))
        return text === 'bad' ? undefined : text
      })
    const images = strings('images', MAX_IMAGES_PER_SKU, imageValue, E.image)
    const tags = strings('tags', MAX_TAGS_PER_SKU, textValue, E.tag)
    const units = c.list(raw, 'itemSellingUnits', `${path}.itemSellingUnits`, MAX_UNITS_PER_SKU,
      'objects {id, name, multiplier, isBaseUnit}', (unit, at) => checkUnit(c, unit, at))
    const base = units?.filter((u) => u.isBaseUnit) ?? []
    if (base.length > 1) {
      const at = (u: SellingUnitRow) => `${path}.itemSellingUnits[${units!.indexOf(u)}]`
      c.problems.push(E.baseUnitTwice(`${at(base[1])}.isBaseUnit`, at(base[0])))
    }
    const offers = c.list(raw, 'offers', `${path}.offers`, MAX_OFFERS_PER_SKU,
      'objects {id, purchasePrice, mrpPriceAmount, finalPriceWithTax, currency, priceRange}',
      (offer, at) => checkOffer(c, offer, at))
    if (id === undefined || skuNickName === undefined || images === undefined || tags === undefined ||
      units === undefined || offers === undefined || base.length > 1) return undefined
    return { id, skuNickName, images, tags, itemSellingUnits: units, offers }
  })
}

export function checkItemRow (raw: unknown): Checked {
  if (!isPlainObject(raw)) return { error: E.notAnObject, id: null }
  const c = new RowCheck()
  const id = c.value(raw, 'id', 'id', idValue, E.id)
  const companyId = c.value(raw, 'companyId', 'companyId', idValue, () => E.companyId)
  const itemName = c.text(raw, 'itemName', 'itemName')
  const skus = c.list(raw, 'skus', 'skus', MAX_SKUS_PER_ITEM,
    'objects {id, skuNickName, images, tags, itemSellingUnits, offers}', (sku, at) => checkSku(c, sku, at))
  if (c.problems.length > 0) return { error: combined(c.problems), id: id ?? null }
  return { row: { id: id!, companyId: companyId!, itemName: itemName!, skus: skus! } }
}

/** Every record id of a row, by level, with its path. */
function recordIds (row: ItemRow): Array<{ level: 'sku' | 'offer' | 'unit', path: string, id: number }> {
  return row.skus.flatMap((sku, s) => [
    { level: 'sku' as const, path: `skus[${s}].id`, id: sku.id },
    ...sku.itemSellingUnits.map((u, i) => ({ level: 'unit' as const, path: `skus[${s}].itemSellingUnits[${i}].id`, id: u.id })),
    ...sku.offers.map((o, i) => ({ level: 'offer' as const, path: `skus[${s}].offers[${i}].id`, id: o.id }))
  ])
}

/**
 * Every row of a request checked: the rows to apply, and the outcome of each refused one. An item id, or
 * a SKU, offer or selling unit id, already named by an earlier valid row of the request refuses the later
 * row (naming the earlier row's index): one id is one record, so two rows cannot both state it.
 */
export function checkItemRows (raws: unknown[]): { valid: CheckedRow<ItemRow>[], outcomes: (RowOutcome | null)[] } {
  const valid: CheckedRow<ItemRow>[] = []
  const outcomes: (RowOutcome | null)[] = raws.map(() => null)
  const itemAt = new Map<number, number>()
  const at = { sku: new Map<number, number>(), offer: new Map<number, number>(), unit: new Map<number, number>() }
  const twice = { sku: E.skuIdTwiceInRequest, offer: E.offerIdTwiceInRequest, unit: E.unitIdTwiceInRequest }
  raws.forEach((raw, index) => {
    const checked = checkItemRow(raw)
    if (checked.error) { outcomes[index] = refused(checked.id, checked.error); return }
    const { row } = checked
    const earlier = itemAt.get(row.id)
    if (earlier !== undefined) { outcomes[index] = refused(row.id, E.itemIdTwice(row.id, earlier)); return }
    const ids = recordIds(row)
    const repeated = ids.filter((r) => at[r.level].has(r.id))
      .map((r) => twice[r.level](r.path, r.id, at[r.level].get(r.id)!))
    if (repeated.length > 0) { outcomes[index] = refused(row.id, combined(repeated)); return }
    itemAt.set(row.id, index)
    for (const r of ids) at[r.level].set(r.id, index)
    valid.push({ index, row })
  })
  return { valid, outcomes }
}
