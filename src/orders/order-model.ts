import type { OrderStatus, PaymentMode } from '../db/schema.js'
import { field, type ViewOf } from '../db/read-model.js'

/*
 * The outbound order (docs/api/orders.md) as the orders read hands it out, declared once: each field, the SQL
 * expression over its object's row, its JSON type (db/read-model.ts). The pass-through writes a selection of
 * these (order-json.ts), the standard execution reads all of them through the same statement (read-orders.ts),
 * and codegen maps GraphQL's objects onto the types below. Money and quantities are JSON numbers (the exact
 * numeric), ids of orders and order items digit strings.
 *
 * Row aliases are the reader's (order-json.ts): an order `o`, its retailer `r` and the order's seller's link to
 * it `<retailer>l` (seller_retailers: the seller's own sync ID), its shop `s`, the seller's link to the shop
 * `<shop>l` and to the shop's retailer `<shop>rl`, a price slab `e` (a jsonb element `e.v`).
 */

export const RETAILER = {
  id: field.int('id'),
  name: field.string('name'),
  firstName: field.nullableString('first_name'),
  lastName: field.nullableString('last_name'),
  phone: field.nullableString('phone'),
  whatsapp: field.nullableString('whatsapp'),
  /** This seller's sync ID for the buyer; null when the seller never synced it (fall back to phone). */
  syncId: field.nullableString((r) => `${r}l.sync_id`)
}

export const SHOP = {
  id: field.int('id'),
  syncId: field.nullableString((s) => `${s}l.sync_id`),
  retailerSyncId: field.nullableString((s) => `${s}rl.sync_id`),
  shopName: field.string('shop_name')
}

export const PRICE_SLAB = {
  minQuantity: field.number((e) => `(${e}.v->>'minQuantity')`),
  maxQuantity: field.nullableNumber((e) => `(${e}.v->>'maxQuantity')`),
  price: field.number((e) => `(${e}.v->>'price')`)
}

export const OFFER = {
  id: field.int('id'),
  skuId: field.int('sku_id'),
  offerSyncId: field.nullableString('offer_sync_id'),
  finalPriceWithTax: field.decimal('final_price_with_tax'),
  purchasePrice: field.decimal('purchase_price'),
  mrpPriceAmount: field.decimal('mrp_price_amount'),
  currency: field.string('currency'),
  priceRange: field.many(PRICE_SLAB)
}

export const ITEM = {
  id: field.int('id'),
  itemName: field.string('item_name'),
  itemSyncId: field.nullableString('item_sync_id')
}

export const SELLING_UNIT = {
  id: field.int('id'),
  name: field.string('name'),
  multiplier: field.decimal('multiplier'),
  isBaseUnit: field.bool('is_base_unit'),
  skuId: field.int('sku_id')
}

export const SKU = {
  id: field.int('id'),
  itemId: field.int('item_id'),
  skuNickName: field.string('sku_nick_name'),
  images: field.stringArray('images'),
  tags: field.stringArray('tags'),
  offers: field.many(OFFER),
  itemSellingUnits: field.many(SELLING_UNIT)
}

export const ORDER_ITEM = {
  id: field.string((l) => `${l}.id::text`),
  skuId: field.int('sku_id'),
  quantity: field.decimal('quantity'),
  /** The price charged per unit: the offer's when the line was placed, or its deal's (numeric(14,2)). */
  unitPrice: field.decimal('unit_price'),
  /**
   * unitPrice × quantity, not rounded (numeric(14,2) × numeric(14,3): up to 5 decimals). Written as JavaScript
   * writes the number (field.number), as the product may pass the 15 digits a decimal field round-trips: both
   * executions then give the same answer, and the exact decimal whenever it has 15 digits or fewer.
   */
  lineTotal: field.number((l) => `(${l}.unit_price * ${l}.quantity)`),
  offer: field.one(OFFER),
  item: field.one(ITEM),
  sku: field.one(SKU)
}

export const ORDER = {
  orderId: field.string((o) => `${o}.id::text`),
  orderNumber: field.string('order_number'),
  serviceOrderNumber: field.string('service_order_number'),
  orderStatus: field.string<OrderStatus>('status'),
  deliveryType: field.string('delivery_type'),
  paymentMode: field.string<PaymentMode>('payment_mode'),
  companyId: field.int('seller_id'),
  storeId: field.int('store_id'),
  retailerName: field.string('retailer_name'),
  isActionable: field.bool('is_actionable'),
  currencyCode: field.string('currency_code'),
  orderTotal: field.decimal('order_total'),
  orderTotalFinal: field.decimal('order_total_final'),
  orderTaxAmount: field.decimal('order_tax_amount'),
  orderCessAmount: field.decimal('order_cess_amount'),
  appliedPoints: field.decimal('applied_points'),
  totalExtraCharges: field.decimal('total_extra_charges'),
  roundOff: field.decimal('round_off'),
  totalItemsInOrder: field.int('total_items_in_order'),
  isDeleted: field.bool('is_deleted'),
  createdAt: field.timestamp('created_at'),
  updatedAt: field.timestamp('updated_at'),
  retailer: field.one(RETAILER),
  /** Null when the order has no shop. */
  shop: field.oneOrNull(SHOP),
  orderItems: field.many(ORDER_ITEM)
}

export type RetailerView = ViewOf<typeof RETAILER>
export type ShopView = ViewOf<typeof SHOP>
export type PriceSlabView = ViewOf<typeof PRICE_SLAB>
export type OfferView = ViewOf<typeof OFFER>
export type ItemView = ViewOf<typeof ITEM>
export type SellingUnitView = ViewOf<typeof SELLING_UNIT>
export type SkuView = ViewOf<typeof SKU>
export type OrderItemView = ViewOf<typeof ORDER_ITEM>
export type OrderView = ViewOf<typeof ORDER>
