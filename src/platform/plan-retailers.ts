import { INSERTED, refused, UNCHANGED, UPDATED, type CheckedRow, type RowOutcome } from './batch.js'
import { RETAILER_FIELDS, type RetailerFields, type RetailerRow } from './retailer-row.js'
import { PlatformRowErrors as E } from './texts.js'

/*
 * The decision of a retailers batch, in memory, from the rows and what is stored for them (read under their
 * locks): each row's outcome, and the writes that make it so. Rows are decided in request order, each
 * against what the rows before it left: the first row of a new retailer inserts it, a later row for another
 * seller only adds that seller's links. A link is created with no sync ID and an existing one is never
 * written (its sync ID is the seller's own). A row equal to what is stored writes nothing. Pure.
 */

export type StoredShop = { retailerId: number, shopName: string }

export interface RetailersState {
  /** The companyIds of the batch that are sellers. */
  sellers: Set<number>
  retailers: Map<number, RetailerFields>
  shops: Map<number, StoredShop>
  /** Existing links, `${sellerId}:${retailerId}`. */
  retailerLinks: Set<string>
  /** Existing links, `${sellerId}:${shopId}`. */
  shopLinks: Set<string>
}

export interface RetailersPlan {
  outcomes: Map<number, RowOutcome>
  insertRetailers: Array<RetailerFields & { id: number }>
  updateRetailers: Array<RetailerFields & { id: number }>
  insertShops: Array<{ id: number, retailerId: number, shopName: string }>
  renameShops: Array<{ id: number, shopName: string }>
  linkRetailers: Array<{ sellerId: number, retailerId: number }>
  linkShops: Array<{ sellerId: number, shopId: number }>
}

export const linkKey = (sellerId: number, id: number): string => `${sellerId}:${id}`

const fieldsOf = ({ id, name, firstName, lastName, phone, whatsapp }: RetailerRow): RetailerFields & { id: number } =>
  ({ id, name, firstName, lastName, phone, whatsapp })

export function planRetailers (rows: CheckedRow<RetailerRow>[], state: RetailersState): RetailersPlan {
  const plan: RetailersPlan = {
    outcomes: new Map(),
    insertRetailers: [],
    updateRetailers: [],
    insertShops: [],
    renameShops: [],
    linkRetailers: [],
    linkShops: []
  }
  // What is stored as the rows before this one left it.
  const retailers = new Map(state.retailers)
  const shops = new Map(state.shops)
  const retailerLinks = new Set(state.retailerLinks)
  const shopLinks = new Set(state.shopLinks)
  for (const { index, row } of rows) {
    if (!state.sellers.has(row.companyId)) {
      plan.outcomes.set(index, refused(row.id, E.sellerNotFound(row.companyId)))
      continue
    }
    const foreign = row.shops.findIndex((s) => {
      const stored = shops.get(s.id)
      return stored !== undefined && stored.retailerId !== row.id
    })
    if (foreign >= 0) {
      plan.outcomes.set(index, refused(row.id, E.shopOfAnotherRetailer(foreign, row.shops[foreign].id)))
      continue
    }
    const stored = retailers.get(row.id)
    let written = false
    if (stored === undefined) {
      plan.insertRetailers.push(fieldsOf(row))
    } else if (RETAILER_FIELDS.some((f) => stored[f] !== row[f])) {
      plan.updateRetailers.push(fieldsOf(row))
      written = true
    }
    retailers.set(row.id, fieldsOf(row))
    for (const shop of row.shops) {
      const storedShop = shops.get(shop.id)
      if (storedShop === undefined) {
        plan.insertShops.push({ id: shop.id, retailerId: row.id, shopName: shop.shopName })
        written = true
      } else if (storedShop.shopName !== shop.shopName) {
        plan.renameShops.push({ id: shop.id, shopName: shop.shopName })
        written = true
      }
      shops.set(shop.id, { retailerId: row.id, shopName: shop.shopName })
      if (!shopLinks.has(linkKey(row.companyId, shop.id))) {
        plan.linkShops.push({ sellerId: row.companyId, shopId: shop.id })
        shopLinks.add(linkKey(row.companyId, shop.id))
        written = true
      }
    }
    if (!retailerLinks.has(linkKey(row.companyId, row.id))) {
      plan.linkRetailers.push({ sellerId: row.companyId, retailerId: row.id })
      retailerLinks.add(linkKey(row.companyId, row.id))
      written = true
    }
    plan.outcomes.set(index, stored === undefined ? INSERTED : written ? UPDATED : UNCHANGED)
  }
  return plan
}
