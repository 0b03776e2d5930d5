import { field, type ViewOf } from '../db/read-model.js'
import { ITEM, RETAILER, SHOP, SKU } from '../orders/order-model.js'

/*
 * What the seller's reference lists hand out, declared once on top of the orders read's own models
 * (orders/order-model.ts), so a retailer, shop, item, SKU and offer are written by the same expressions,
 * under the same field names, in both reads:
 * - a retailer linked to the seller (a row of seller_retailers with its retailer): the order's Retailer
 *   and the shops of it that are linked to the same seller;
 * - an item of the seller: the order's Item and its SKUs, each with its offers and selling units.
 *
 * Row aliases are the readers' (retailer-json.ts, item-json.ts): a retailer `r` and the seller's link to
 * it `rl`; a shop `s`, the seller's link to it `sl` and to its retailer `srl`; an item `i`; a SKU `k`.
 */

export const SELLER_RETAILER = {
  ...RETAILER,
  /** The retailer's shops linked to this seller, by id. */
  shops: field.many(SHOP)
}

export const SELLER_ITEM = {
  ...ITEM,
  /** The item's SKUs, by id. */
  skus: field.many(SKU)
}

export type SellerRetailerView = ViewOf<typeof SELLER_RETAILER>
export type SellerItemView = ViewOf<typeof SELLER_ITEM>
