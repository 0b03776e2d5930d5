import { Type, type Static } from '@sinclair/typebox'
import {
  IMAGE_MAX_LENGTH, MAX_ID, MAX_IMAGES_PER_SKU, MAX_OFFERS_PER_SKU, MAX_PLATFORM_ROWS, MAX_SHOPS_PER_RETAILER,
  MAX_SKUS_PER_ITEM, MAX_SLABS_PER_OFFER, MAX_STORES_PER_SELLER, MAX_TAGS_PER_SKU, MAX_UNITS_PER_SKU, PHONE_PATTERN,
  TEXT_MAX_LENGTH
} from './texts.js'

/*
 * TypeBox schemas of the platform routes (docs/platform/api.md): the rows, the request arrays and the one
 * answer shape every platform bulk route shares. Rows are checked one by one in code (seller-row.ts,
 * points-row.ts, catalogue-row.ts, deal-row.ts) so that a bad row is that row's error and never the
 * request's; these schemas document the contract (OpenAPI, the client's types, the schema gate).
 */

const Id = Type.Integer({ minimum: 1, maximum: MAX_ID })
const Text = Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH })
const NumericText = (pattern: string, description: string) =>
  Type.Union([Type.Number(), Type.String({ pattern })], { description })

export const PlatformStoreSchema = Type.Object({
  id: Id,
  name: Text
}, { title: 'PlatformStore', description: 'A store of the seller, by the marketplace\'s id: added or renamed, never removed' })

export const PlatformSellerSchema = Type.Object({
  companyId: Id,
  name: Text,
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED')]),
  takeRate: NumericText('^[+]?(?:\\d+\\.?\\d*|\\.\\d+)$',
    'Fraction of orderTotalFinal taken in points at acceptance, 0 to 1, at most 4 decimals (0.02 = 2 %)'),
  autoRejectEnabled: Type.Boolean(),
  stores: Type.Array(PlatformStoreSchema, { maxItems: MAX_STORES_PER_SELLER })
}, { title: 'PlatformSeller', description: 'A seller (company) and its stores, keyed by companyId' })
export type PlatformSeller = Static<typeof PlatformSellerSchema>

export const PlatformPointsSchema = Type.Object({
  companyId: Id,
  amount: NumericText('^[+-]?(?:\\d+\\.?\\d*|\\.\\d+)$',
    'A top-up (> 0) or an adjustment (< 0, never below a zero balance); at most 2 decimals'),
  reference: Type.String({
    minLength: 1,
    maxLength: TEXT_MAX_LENGTH,
    description: 'The marketplace\'s own reference: the same reference and amount again is unchanged'
  })
}, { title: 'PlatformPoints', description: 'A ledger entry of a seller\'s points, keyed by (companyId, reference)' })
export type PlatformPoints = Static<typeof PlatformPointsSchema>

// PUT /v2/platform/retailers
export const PlatformShopSchema = Type.Object({
  id: Id,
  shopName: Text
}, { title: 'PlatformShop', description: 'A shop of the retailer, by the marketplace\'s id: added or renamed, never removed' })

const Phone = Type.Union([Type.String({ pattern: PHONE_PATTERN.source, minLength: 7, maxLength: 20 }), Type.Null()], {
  description: '"+" and 6 to 19 digits, or null'
})

export const PlatformRetailerSchema = Type.Object({
  id: Id,
  companyId: Type.Integer({
    minimum: 1, maximum: MAX_ID, description: 'The seller the retailer is linked to; another companyId links it to that seller too'
  }),
  name: Text,
  firstName: Type.Union([Text, Type.Null()]),
  lastName: Type.Union([Text, Type.Null()]),
  phone: Phone,
  whatsapp: Phone,
  shops: Type.Array(PlatformShopSchema, { maxItems: MAX_SHOPS_PER_RETAILER })
}, {
  title: 'PlatformRetailer',
  description: 'A retailer (a buyer of the marketplace) and its shops, keyed by id, and its link to the seller companyId. ' +
    'Every field is required; firstName, lastName, phone and whatsapp may be null'
})
export type PlatformRetailer = Static<typeof PlatformRetailerSchema>
const UNSIGNED = '^[+]?(?:\\d+\\.?\\d*|\\.\\d+)$'
const Money = (description: string) => NumericText(UNSIGNED, `${description}; 0 to 999999999999.99, at most 2 decimals`)
const Quantity = (description: string) => NumericText(UNSIGNED, `${description}; at most 3 decimals`)

export const PlatformPriceSlabSchema = Type.Object({
  minQuantity: Quantity('From this quantity'),
  maxQuantity: Type.Union([Quantity('Up to this quantity, at least minQuantity'), Type.Null()]),
  price: Money('The unit price in this slab')
}, { title: 'PlatformPriceSlab', description: 'A quantity slab of the offer\'s price; maxQuantity null: no upper bound' })

export const PlatformOfferSchema = Type.Object({
  id: Id,
  purchasePrice: Money('Price the retailer pays'),
  mrpPriceAmount: Money('Maximum retail price'),
  finalPriceWithTax: Money('Price with tax'),
  currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, such as INR' }),
  priceRange: Type.Array(PlatformPriceSlabSchema, { maxItems: MAX_SLABS_PER_OFFER })
}, { title: 'PlatformOffer', description: 'An offer of the SKU, by the marketplace\'s id (its sync ID is the seller\'s)' })

export const PlatformSellingUnitSchema = Type.Object({
  id: Id,
  name: Text,
  multiplier: Quantity('How many base units this unit holds, greater than 0'),
  isBaseUnit: Type.Boolean({ description: 'At most one unit of a SKU is its base unit' })
}, { title: 'PlatformSellingUnit' })

export const PlatformSkuSchema = Type.Object({
  id: Id,
  skuNickName: Text,
  images: Type.Array(Type.String({ minLength: 1, maxLength: IMAGE_MAX_LENGTH }), { maxItems: MAX_IMAGES_PER_SKU }),
  tags: Type.Array(Text, { maxItems: MAX_TAGS_PER_SKU }),
  itemSellingUnits: Type.Array(PlatformSellingUnitSchema, { maxItems: MAX_UNITS_PER_SKU }),
  offers: Type.Array(PlatformOfferSchema, { maxItems: MAX_OFFERS_PER_SKU })
}, { title: 'PlatformSku' })

export const PlatformItemSchema = Type.Object({
  id: Id,
  companyId: Id,
  itemName: Text,
  skus: Type.Array(PlatformSkuSchema, { maxItems: MAX_SKUS_PER_ITEM })
}, {
  title: 'PlatformItem',
  description: 'An item of a seller\'s catalogue with its SKUs, their selling units and offers, each keyed by the ' +
    'marketplace\'s id: added or updated, never removed by leaving it out; an id never moves to another seller or parent'
})
export type PlatformItem = Static<typeof PlatformItemSchema>

export const PlatformDealSchema = Type.Object({
  id: Id,
  companyId: Id,
  offerId: Type.Integer({ minimum: 1, maximum: MAX_ID, description: 'An offer of the seller companyId' }),
  dealDate: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'The day of the deal, YYYY-MM-DD (a date that exists)' }),
  dealPrice: Money('The deal\'s unit price'),
  maxQuantity: Quantity('How much may be grabbed on the day, greater than 0 and never below what is already grabbed')
}, { title: 'PlatformDeal', description: 'A daily deal on an offer, keyed by id; its grabbed quantity is the orders\'' })
export type PlatformDeal = Static<typeof PlatformDealSchema>

const rowsOf = <T extends ReturnType<typeof Type.Object>>(row: T, title: string, description: string) =>
  Type.Array(row, { title, description, minItems: 1, maxItems: MAX_PLATFORM_ROWS })

export const PlatformSellersRequestSchema = rowsOf(PlatformSellerSchema, 'PlatformSellersRequest',
  `1 to ${MAX_PLATFORM_ROWS} seller rows; each is checked on its own and a bad row is reported by index`)
export const PlatformPointsRequestSchema = rowsOf(PlatformPointsSchema, 'PlatformPointsRequest',
  `1 to ${MAX_PLATFORM_ROWS} points rows; each is checked on its own and a bad row is reported by index`)
export const PlatformRetailersRequestSchema = rowsOf(PlatformRetailerSchema, 'PlatformRetailersRequest',
  `1 to ${MAX_PLATFORM_ROWS} retailer rows; each is checked on its own and a bad row is reported by index`)

export const PlatformCatalogueRequestSchema = rowsOf(PlatformItemSchema, 'PlatformCatalogueRequest',
  `1 to ${MAX_PLATFORM_ROWS} item rows; each is checked on its own (the whole item: one bad offer refuses it) ` +
  'and a bad row is reported by index')
export const PlatformDealsRequestSchema = rowsOf(PlatformDealSchema, 'PlatformDealsRequest',
  `1 to ${MAX_PLATFORM_ROWS} deal rows; each is checked on its own and a bad row is reported by index`)

export const PlatformRowErrorSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the row in the request array, from 0' }),
  id: Type.Union([Type.Integer(), Type.String(), Type.Null()], {
    description: 'The row\'s own id when it has a usable one (a seller\'s companyId, a points row\'s reference, ' +
      'a retailer\'s, an item\'s or a deal\'s id), else null'
  }),
  error: Type.String({ description: 'Every broken field of the row, one sentence each, naming the field' }),
  code: Type.String({ description: 'The first problem\'s code (docs/platform/api.md lists them)' })
}, { title: 'PlatformRowError' })
export type PlatformRowErrorData = Static<typeof PlatformRowErrorSchema>

export const PlatformBatchDataSchema = Type.Object({
  received: Type.Integer({ minimum: 0, description: 'Rows in the request, valid or not' }),
  inserted: Type.Integer({ minimum: 0 }),
  updated: Type.Integer({ minimum: 0 }),
  unchanged: Type.Integer({ minimum: 0, description: 'Rows that matched what is stored: nothing was written for them' }),
  failed: Type.Integer({ minimum: 0, description: 'Rows listed in errors: a refused row changes nothing' }),
  errors: Type.Array(PlatformRowErrorSchema, { description: 'One per refused row, in row order' })
}, { title: 'PlatformBatchData' })
export type PlatformBatchData = Static<typeof PlatformBatchDataSchema>
