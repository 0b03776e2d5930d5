import type { OrderStatus } from '../db/schema.js'

/*
 * An order as the orders read hands it out: the outbound order of spec 2.1–2.7, built as JSON by
 * PostgreSQL (read-orders.ts). Money and quantities are numbers here (PostgreSQL renders the exact
 * numeric; the contract has them as JSON numbers), ids of orders and order items digit strings. A
 * nested object is present only when the reader asked for it (OrderSelection). The GraphQL schema maps
 * its Order onto this type (codegen mappers).
 */

export interface RetailerView {
  id: number
  name: string
  firstName: string | null
  lastName: string | null
  phone: string | null
  whatsapp: string | null
  /** The buyer's sync ID; null when the retailer was never synced (fall back to phone). */
  syncId: string | null
}

export interface ShopView {
  id: number
  syncId: string | null
  retailerSyncId: string | null
  shopName: string
}

export interface PriceSlabView { minQuantity: number, maxQuantity: number | null, price: number }

export interface OfferView {
  id: number
  skuId: number
  offerSyncId: string | null
  finalPriceWithTax: number
  purchasePrice: number
  mrpPriceAmount: number
  currency: string
  priceRange: PriceSlabView[]
}

export interface ItemView { id: number, itemName: string, itemSyncId: string | null }

export interface SellingUnitView { id: number, name: string, multiplier: number, isBaseUnit: boolean, skuId: number }

export interface SkuView {
  itemId: number
  skuNickName: string
  images: string[]
  tags: string[]
  offers?: OfferView[]
  itemSellingUnits?: SellingUnitView[]
}

export interface OrderItemView {
  id: string
  skuId: number
  quantity: number
  offer?: OfferView
  item?: ItemView
  sku?: SkuView
}

export interface OrderView {
  orderId: string
  orderNumber: string
  serviceOrderNumber: string
  orderStatus: OrderStatus
  deliveryType: string
  companyId: number
  storeId: number
  retailerName: string
  isActionable: boolean
  currencyCode: string
  orderTotal: number
  orderTotalFinal: number
  orderTaxAmount: number
  orderCessAmount: number
  appliedPoints: number
  totalExtraCharges: number
  roundOff: number
  totalItemsInOrder: number
  isDeleted: boolean
  /** ISO-8601, UTC, microseconds. */
  createdAt: string
  updatedAt: string
  retailer?: RetailerView
  /** Null when the order has no shop; absent when not asked for. */
  shop?: ShopView | null
  orderItems?: OrderItemView[]
}
