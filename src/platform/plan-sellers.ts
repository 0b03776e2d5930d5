import { INSERTED, refused, UNCHANGED, UPDATED, type CheckedRow, type RowOutcome } from './batch.js'
import { decimalValue } from './fields.js'
import type { SellerRow } from './seller-row.js'
import { PlatformRowErrors as E } from './texts.js'

/*
 * The decision of a sellers batch, in memory, from the rows and what is stored for them (read under their
 * locks): each row's outcome, and the writes that make it so. A row equal to what is stored writes
 * nothing, so a re-sent batch leaves every row (and its updated_at) as it was. Pure.
 */

export type StoredSeller = { name: string, status: string, takeRate: string, autoRejectEnabled: boolean }
export type StoredStore = { sellerId: number, name: string }

export interface SellersState {
  sellers: Map<number, StoredSeller>
  stores: Map<number, StoredStore>
}

export interface SellersPlan {
  outcomes: Map<number, RowOutcome>
  insertSellers: SellerRow[]
  /** Sellers whose own fields or stores changed (updated_at moves). */
  updateSellers: SellerRow[]
  insertStores: Array<{ id: number, sellerId: number, name: string }>
  renameStores: Array<{ id: number, name: string }>
}

function sameSeller (row: SellerRow, stored: StoredSeller): boolean {
  return row.name === stored.name && row.status === stored.status &&
    row.takeRate === decimalValue(stored.takeRate, 4) && row.autoRejectEnabled === stored.autoRejectEnabled
}

export function planSellers (rows: CheckedRow<SellerRow>[], state: SellersState): SellersPlan {
  const plan: SellersPlan = {
    outcomes: new Map(), insertSellers: [], updateSellers: [], insertStores: [], renameStores: []
  }
  for (const { index, row } of rows) {
    const foreign = row.stores.findIndex((s) => {
      const stored = state.stores.get(s.id)
      return stored !== undefined && stored.sellerId !== row.companyId
    })
    if (foreign >= 0) {
      plan.outcomes.set(index, refused(row.companyId, E.storeOfAnotherSeller(foreign, row.stores[foreign].id)))
      continue
    }
    const newStores = row.stores.filter((s) => !state.stores.has(s.id))
    const renamed = row.stores.filter((s) => {
      const stored = state.stores.get(s.id)
      return stored !== undefined && stored.name !== s.name
    })
    plan.insertStores.push(...newStores.map((s) => ({ id: s.id, sellerId: row.companyId, name: s.name })))
    plan.renameStores.push(...renamed)
    const stored = state.sellers.get(row.companyId)
    if (stored === undefined) {
      plan.insertSellers.push(row)
      plan.outcomes.set(index, INSERTED)
    } else if (sameSeller(row, stored) && newStores.length === 0 && renamed.length === 0) {
      plan.outcomes.set(index, UNCHANGED)
    } else {
      plan.updateSellers.push(row)
      plan.outcomes.set(index, UPDATED)
    }
  }
  return plan
}
