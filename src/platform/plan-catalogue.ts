import { INSERTED, refused, UNCHANGED, UPDATED, type CheckedRow, type RowOutcome } from './batch.js'
import type { ItemRow, OfferRow, PriceSlabRow, SellingUnitRow, SkuRow } from './catalogue-row.js'
import { decimalValue } from './fields.js'
import { combined, PlatformRowErrors as E, type PlatformRowError } from './texts.js'

/*
 * The decision of a catalogue batch, in memory, from the rows and what is stored under their ids (read
 * under their locks): each row's outcome, and the writes that make it so. A record equal to what is stored
 * writes nothing, so a re-sent batch writes nothing at all. Records are added or updated, never removed:
 * a SKU, offer or selling unit left out of a row stays as it is. Ids never move: a stored record under
 * another seller or another parent refuses the row, without saying whose it is. Pure.
 */

export interface StoredItem { sellerId: number, itemName: string }
export interface StoredSku { sellerId: number, itemId: number, skuNickName: string, images: string[], tags: string[] }
/** A stored slab's values as their stored texts (jsonb ->>), in slab order. */
export type StoredSlab = [minQuantity: string | null, maxQuantity: string | null, price: string | null]
export interface StoredOffer {
  sellerId: number
  skuId: number
  purchasePrice: string
  mrpPriceAmount: string
  finalPriceWithTax: string
  currency: string
  /** null: the stored price_range is not a list of slabs (never written by this route). */
  priceRange: StoredSlab[] | null
}
export interface StoredUnit { skuId: number, name: string, multiplier: string, isBaseUnit: boolean }

export interface CatalogueState {
  /** The companyIds of the batch that are sellers. */
  sellers: Set<number>
  items: Map<number, StoredItem>
  skus: Map<number, StoredSku>
  offers: Map<number, StoredOffer>
  units: Map<number, StoredUnit>
}

export interface CataloguePlan {
  outcomes: Map<number, RowOutcome>
  insertItems: ItemRow[]
  renameItems: ItemRow[]
  insertSkus: Array<{ sellerId: number, itemId: number, sku: SkuRow }>
  updateSkus: SkuRow[]
  insertOffers: Array<{ sellerId: number, skuId: number, offer: OfferRow }>
  updateOffers: OfferRow[]
  insertUnits: Array<{ skuId: number, unit: SellingUnitRow }>
  updateUnits: SellingUnitRow[]
}

const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((v, i) => v === b[i])
/** A stored decimal in the row check's canonical form: "10.00" and 10 are one value. */
const money = (stored: string | null) => stored === null ? null : decimalValue(stored, 2)
const quantity = (stored: string | null) => stored === null ? null : decimalValue(stored, 3)

function sameSlabs (row: PriceSlabRow[], stored: StoredSlab[] | null): boolean {
  return stored !== null && row.length === stored.length && row.every((slab, i) => {
    const [min, max, price] = stored[i]
    return slab.minQuantity === quantity(min) && slab.maxQuantity === quantity(max) && slab.price === money(price)
  })
}

function sameOffer (row: OfferRow, stored: StoredOffer): boolean {
  return row.purchasePrice === money(stored.purchasePrice) && row.mrpPriceAmount === money(stored.mrpPriceAmount) &&
    row.finalPriceWithTax === money(stored.finalPriceWithTax) && row.currency === stored.currency &&
    sameSlabs(row.priceRange, stored.priceRange)
}

const sameSku = (row: SkuRow, stored: StoredSku) =>
  row.skuNickName === stored.skuNickName && same(row.images, stored.images) && same(row.tags, stored.tags)

const sameUnit = (row: SellingUnitRow, stored: StoredUnit) => row.name === stored.name &&
  row.multiplier === quantity(stored.multiplier) && row.isBaseUnit === stored.isBaseUnit

/** Every record of the row stored under another seller or parent; empty when the row may be applied. */
function foreignRecords (row: ItemRow, state: CatalogueState): PlatformRowError[] {
  const item = state.items.get(row.id)
  if (item !== undefined && item.sellerId !== row.companyId) return [E.itemOfAnotherSeller(row.id)]
  const problems: PlatformRowError[] = []
  row.skus.forEach((sku, s) => {
    const storedSku = state.skus.get(sku.id)
    if (storedSku !== undefined && (storedSku.itemId !== row.id || storedSku.sellerId !== row.companyId)) {
      problems.push(E.skuOfAnotherItem(`skus[${s}].id`, sku.id))
    }
    sku.itemSellingUnits.forEach((unit, i) => {
      const stored = state.units.get(unit.id)
      if (stored !== undefined && stored.skuId !== sku.id) {
        problems.push(E.unitOfAnotherSku(`skus[${s}].itemSellingUnits[${i}].id`, unit.id))
      }
    })
    sku.offers.forEach((offer, i) => {
      const stored = state.offers.get(offer.id)
      if (stored !== undefined && (stored.skuId !== sku.id || stored.sellerId !== row.companyId)) {
        problems.push(E.offerOfAnotherSku(`skus[${s}].offers[${i}].id`, offer.id))
      }
    })
  })
  return problems
}

/** How many SKU, offer and selling-unit writes the plan holds so far. */
const recordWrites = (p: CataloguePlan) => p.insertSkus.length + p.updateSkus.length + p.insertOffers.length +
  p.updateOffers.length + p.insertUnits.length + p.updateUnits.length

export function planCatalogue (rows: CheckedRow<ItemRow>[], state: CatalogueState): CataloguePlan {
  const plan: CataloguePlan = {
    outcomes: new Map(),
    insertItems: [],
    renameItems: [],
    insertSkus: [],
    updateSkus: [],
    insertOffers: [],
    updateOffers: [],
    insertUnits: [],
    updateUnits: []
  }
  for (const { index, row } of rows) {
    if (!state.sellers.has(row.companyId)) {
      plan.outcomes.set(index, refused(row.id, E.sellerNotFound(row.companyId)))
      continue
    }
    const foreign = foreignRecords(row, state)
    if (foreign.length > 0) {
      plan.outcomes.set(index, refused(row.id, combined(foreign)))
      continue
    }
    const writesBefore = recordWrites(plan)
    for (const sku of row.skus) {
      const storedSku = state.skus.get(sku.id)
      if (storedSku === undefined) plan.insertSkus.push({ sellerId: row.companyId, itemId: row.id, sku })
      else if (!sameSku(sku, storedSku)) plan.updateSkus.push(sku)
      for (const unit of sku.itemSellingUnits) {
        const stored = state.units.get(unit.id)
        if (stored === undefined) plan.insertUnits.push({ skuId: sku.id, unit })
        else if (!sameUnit(unit, stored)) plan.updateUnits.push(unit)
      }
      for (const offer of sku.offers) {
        const stored = state.offers.get(offer.id)
        if (stored === undefined) plan.insertOffers.push({ sellerId: row.companyId, skuId: sku.id, offer })
        else if (!sameOffer(offer, stored)) plan.updateOffers.push(offer)
      }
    }
    const item = state.items.get(row.id)
    const recordsChanged = recordWrites(plan) > writesBefore
    if (item === undefined) {
      plan.insertItems.push(row)
      plan.outcomes.set(index, INSERTED)
    } else if (item.itemName !== row.itemName) {
      plan.renameItems.push(row)
      plan.outcomes.set(index, UPDATED)
    } else {
      plan.outcomes.set(index, recordsChanged ? UPDATED : UNCHANGED)
    }
  }
  return plan
}
