// Hand-made orders for the read tests: one catalogue line per seller, orders at chosen instants and sync IDs.
import type { TestDatabase as Database } from './build.js'
import {
  items, offers, orderItems, orders, retailers, sellerRetailers, sellerShops, sellingUnits, shops, skus
} from '../../src/db/schema.js'

/*
 * Hand-made orders for the read tests: one catalogue line per seller and orders at chosen instants, with
 * chosen retailer/shop sync IDs, so each test states exactly the case it checks.
 */

export interface Catalogue { sellerId: number, storeIds: number[], itemId: number, skuId: number, offerId: number }

let counter = 0

export async function createCatalogue (database: Database, seller: { sellerId: number, storeIds: number[] }, tag = 'X'): Promise<Catalogue> {
  const { db } = database
  const [item] = await db.insert(items).values({ sellerId: seller.sellerId, itemName: `Item ${tag}`, itemSyncId: `ITEM-${tag}` }).returning({ id: items.id })
  const [sku] = await db.insert(skus).values({ sellerId: seller.sellerId, itemId: item.id, skuNickName: `Sku ${tag}`, images: [`https://img/${tag}.jpg`], tags: ['tea', tag] }).returning({ id: skus.id })
  const [offer] = await db.insert(offers).values({
    sellerId: seller.sellerId,
    skuId: sku.id,
    offerSyncId: `VAR-${tag}`,
    purchasePrice: '80.10',
    mrpPriceAmount: '120.00',
    finalPriceWithTax: '105.25',
    priceRange: [{ minQuantity: 1, maxQuantity: 9, price: 105.25 }, { minQuantity: 10, maxQuantity: null, price: 99.5 }]
  }).returning({ id: offers.id })
  await db.insert(sellingUnits).values([
    { skuId: sku.id, name: 'Piece', multiplier: '1', isBaseUnit: true },
    { skuId: sku.id, name: 'Case', multiplier: '12.5', isBaseUnit: false }
  ])
  return { ...seller, itemId: item.id, skuId: sku.id, offerId: offer.id }
}

export async function createRetailer (database: Database, sellerId: number,
  values: { syncId?: string | null, shopSyncId?: string | null, withShop?: boolean } = {}
): Promise<{ retailerId: number, shopId: number | null }> {
  const { db } = database
  const [retailer] = await db.insert(retailers).values({
    name: 'Asha Rao', firstName: 'Asha', lastName: 'Rao', phone: '+919800000001', whatsapp: null
  }).returning({ id: retailers.id })
  await db.insert(sellerRetailers).values({ sellerId, retailerId: retailer.id, syncId: values.syncId ?? null })
  if (values.withShop === false) return { retailerId: retailer.id, shopId: null }
  const [shop] = await db.insert(shops).values({ retailerId: retailer.id, shopName: 'Rao Kirana' }).returning({ id: shops.id })
  await db.insert(sellerShops).values({ sellerId, shopId: shop.id, syncId: values.shopSyncId ?? null })
  return { retailerId: retailer.id, shopId: shop.id }
}

export interface OrderValues {
  createdAt?: Date
  updatedAt?: Date
  storeId?: number
  retailerId: number
  shopId: number | null
  isDeleted?: boolean
  quantity?: string
}

/** One order with one line of the catalogue's offer; returns its id. */
export async function createOrder (database: Database, catalogue: Catalogue, values: OrderValues): Promise<number> {
  const { db } = database
  const n = ++counter
  const [order] = await db.insert(orders).values({
    sellerId: catalogue.sellerId,
    storeId: values.storeId ?? catalogue.storeIds[0],
    retailerId: values.retailerId,
    shopId: values.shopId,
    orderNumber: `ORD-T${process.pid}-${n}-${Math.random().toString(36).slice(2, 8)}`,
    serviceOrderNumber: `OXT${n}`,
    retailerName: 'Asha Rao',
    orderTotal: '210.50',
    orderTotalFinal: '211.00',
    orderTaxAmount: '10.02',
    totalItemsInOrder: 1,
    paymentMode: 'CASH_ON_DELIVERY',
    isDeleted: values.isDeleted ?? false,
    ...(values.createdAt ? { createdAt: values.createdAt } : {}),
    ...(values.updatedAt ?? values.createdAt ? { updatedAt: values.updatedAt ?? values.createdAt } : {})
  }).returning({ id: orders.id })
  await db.insert(orderItems).values({
    orderId: order.id, itemId: catalogue.itemId, skuId: catalogue.skuId, offerId: catalogue.offerId, quantity: values.quantity ?? '2.5', unitPrice: '84.20'
  })
  return order.id
}
