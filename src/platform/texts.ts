import { unstorableTextRule } from '../db/storable-text.js'
import { itemErrors, type CodeOf, type ItemError } from '../item-error.js'

/*
 * The platform routes' texts, each written once with its code (docs/platform/api.md lists them): the request-level
 * ones (a 400 without data) and the per-row ones (data.errors[]). A row's text names the field it is
 * about; a field inside a list names its place (`stores[2].id`).
 */

/** At most this many rows per call (docs/platform/api.md, "The answer"). */
export const MAX_PLATFORM_ROWS = 1000
/** Names, references: long enough for anything a marketplace uses, short enough for a btree key. */
export const TEXT_MAX_LENGTH = 200
/** Stores listed in one seller row. */
export const MAX_STORES_PER_SELLER = 1000
/** serial/integer ids: companyId and store ids are PostgreSQL integers. */
export const MAX_ID = 2_147_483_647
/** The largest points balance numeric(14,2) holds, in hundredths. */
export const MAX_BALANCE_CENTS = 99_999_999_999_999n
// PUT /v2/platform/retailers
/** Shops listed in one retailer row. */
export const MAX_SHOPS_PER_RETAILER = 1000
/**
 * A phone or WhatsApp number in international form: "+" and 6 to 19 digits (7 to 20 characters), nothing
 * else, so a seller and the messaging transports read one spelling of a number ("+919800000001").
 */
export const PHONE_PATTERN = /^\+[0-9]{6,19}$/

/*
 * The lists of a catalogue row, each bounded so that one row stays one sane unit of work; the request's
 * body limit bounds their product. Generous for a wholesale catalogue (a SKU with 100 offers is many).
 */
export const MAX_SKUS_PER_ITEM = 100
export const MAX_OFFERS_PER_SKU = 100
export const MAX_UNITS_PER_SKU = 20
export const MAX_SLABS_PER_OFFER = 20
export const MAX_IMAGES_PER_SKU = 20
export const MAX_TAGS_PER_SKU = 50
/** An image is a URL: longer than a name may be. */
export const IMAGE_MAX_LENGTH = 2048
/** Money is numeric(14,2), a quantity numeric(14,3): the largest of each as text. */
export const MAX_MONEY = '999999999999.99'
export const MAX_QUANTITY = '99999999999.999'

export const PlatformText = {
  sellersUpserted: 'Sellers upserted',
  pointsRecorded: 'Points recorded',
  retailersUpserted: 'Retailers upserted',
  catalogueUpserted: 'Catalogue upserted',
  dealsUpserted: 'Deals upserted',
  notAnArray: (what: string) => `Request body must be a non-empty JSON array of ${what}`,
  tooManyRows: (got: number) => `Too many rows: at most ${MAX_PLATFORM_ROWS} per request, got ${got}`
} as const

export const PlatformCode = {
  notAnArray: 'NOT_AN_ARRAY',
  tooManyRows: 'TOO_MANY_ROWS'
} as const

const textRule = `a non-empty string of at most ${TEXT_MAX_LENGTH} characters`
const idRule = `a positive integer of at most ${MAX_ID}`
const numericForm = '(a JSON number or a numeric string)'
const moneyRule = `a number from 0 to ${MAX_MONEY} with at most 2 decimals ${numericForm}`
const quantityRule = (least: string) => `a number ${least} to ${MAX_QUANTITY} with at most 3 decimals ${numericForm}`

export const PlatformRowErrors = itemErrors({
  notAnObject: ['ROW_NOT_OBJECT', 'Row must be a JSON object'],
  missing: ['FIELD_REQUIRED', (field: string) => `${field} is required`],
  unstorable: ['UNSTORABLE_TEXT', (field: string) => unstorableTextRule(field)],
  companyId: ['INVALID_COMPANY_ID', `companyId must be ${idRule}`],
  companyIdTwice: ['DUPLICATE_COMPANY_ID',
    (companyId: number, index: number) => `companyId ${companyId} already appears in the row at index ${index}`],
  name: ['INVALID_NAME', (field: string) => `${field} must be ${textRule}`],
  blank: ['BLANK_TEXT', (field: string) => `${field} must not be blank: it has no character other than whitespace`],
  status: ['INVALID_SELLER_STATUS', 'status must be "ACTIVE" or "SUSPENDED"'],
  takeRate: ['INVALID_TAKE_RATE',
    'takeRate must be a number from 0 to 1 with at most 4 decimals (a JSON number or a numeric string such as "0.02")'],
  autoRejectEnabled: ['INVALID_AUTO_REJECT', 'autoRejectEnabled must be true or false'],
  stores: ['INVALID_STORES', `stores must be an array of at most ${MAX_STORES_PER_SELLER} objects {id, name}`],
  store: ['INVALID_STORES', (i: number) => `stores[${i}] must be a JSON object {id, name}`],
  storeId: ['INVALID_STORE_ID', (i: number) => `stores[${i}].id must be ${idRule}`],
  storeIdTwiceInRow: ['DUPLICATE_STORE_ID', (i: number, id: number) => `stores[${i}].id ${id} appears twice in this row`],
  storeIdTwiceInRequest: ['DUPLICATE_STORE_ID',
    (i: number, id: number, index: number) => `stores[${i}].id ${id} already appears in the row at index ${index}`],
  storeOfAnotherSeller: ['STORE_OF_ANOTHER_SELLER', (i: number, id: number) => `stores[${i}].id ${id} belongs to another seller`],
  amount: ['INVALID_AMOUNT',
    'amount must be a non-zero number with at most 2 decimals and less than 1000000000000 in size ' +
    '(a JSON number or a numeric string such as "250.00"; negative for an adjustment)'],
  reference: ['INVALID_REFERENCE', `reference must be ${textRule}`],
  sellerNotFound: ['SELLER_NOT_FOUND', (companyId: number) => `companyId ${companyId} is not a known seller`],
  referenceConflict: ['REFERENCE_CONFLICT', (reference: string, companyId: number, amount: string) =>
    `reference ${JSON.stringify(reference)} was already used for companyId ${companyId} with amount ${amount}`],
  belowZero: ['POINTS_BELOW_ZERO', (amount: string, balance: string) =>
    `amount ${amount} would take the seller's points balance below zero (balance ${balance})`],
  tooLarge: ['POINTS_BALANCE_TOO_LARGE', (amount: string, balance: string) =>
    `amount ${amount} would take the seller's points balance past 999999999999.99 (balance ${balance})`],
  // PUT /v2/platform/retailers
  retailerId: ['INVALID_RETAILER_ID', `id must be ${idRule}`],
  nullableName: ['INVALID_NAME', (field: string) => `${field} must be null or ${textRule}`],
  phone: ['INVALID_PHONE',
    (field: string) => `${field} must be null or "+" followed by 6 to 19 digits (7 to 20 characters, e.g. "+919800000001")`],
  shops: ['INVALID_SHOPS', `shops must be an array of at most ${MAX_SHOPS_PER_RETAILER} objects {id, shopName}`],
  shop: ['INVALID_SHOPS', (i: number) => `shops[${i}] must be a JSON object {id, shopName}`],
  shopId: ['INVALID_SHOP_ID', (i: number) => `shops[${i}].id must be ${idRule}`],
  shopIdTwiceInRow: ['DUPLICATE_SHOP_ID', (i: number, id: number) => `shops[${i}].id ${id} appears twice in this row`],
  shopIdTwiceInRequest: ['DUPLICATE_SHOP_ID', (i: number, id: number, index: number) =>
    `shops[${i}].id ${id} already appears under another retailer in the row at index ${index}`],
  retailerLinkTwice: ['DUPLICATE_RETAILER', (id: number, companyId: number, index: number) =>
    `id ${id} with companyId ${companyId} already appears in the row at index ${index}`],
  retailerMismatch: ['RETAILER_MISMATCH', (id: number, index: number, fields: string) =>
    `id ${id} already appears in the row at index ${index} with another ${fields}: ` +
    'the rows of one retailer must agree on name, firstName, lastName, phone, whatsapp and shops'],
  shopOfAnotherRetailer: ['SHOP_OF_ANOTHER_RETAILER',
    (i: number, id: number) => `shops[${i}].id ${id} belongs to another retailer`],

  // Catalogue and deals. `field` is the path of the value in the row (`skus[1].offers[0].id`).
  id: ['INVALID_ID', (field: string) => `${field} must be ${idRule}`],
  list: ['INVALID_LIST', (field: string, max: number, what: string) => `${field} must be an array of at most ${max} ${what}`],
  element: ['INVALID_LIST', (field: string) => `${field} must be a JSON object`],
  image: ['INVALID_IMAGE', (field: string) => `${field} must be a non-empty string of at most ${IMAGE_MAX_LENGTH} characters`],
  tag: ['INVALID_TAG', (field: string) => `${field} must be ${textRule}`],
  money: ['INVALID_MONEY', (field: string) => `${field} must be ${moneyRule}`],
  quantity: ['INVALID_QUANTITY', (field: string) => `${field} must be ${quantityRule('from 0')}`],
  positiveQuantity: ['INVALID_QUANTITY', (field: string) => `${field} must be ${quantityRule('greater than 0 and up')}`],
  slabBounds: ['INVALID_PRICE_RANGE', (field: string) => `${field}.maxQuantity must be null or at least ${field}.minQuantity`],
  currency: ['INVALID_CURRENCY', (field: string) => `${field} must be a 3-letter uppercase currency code such as "INR"`],
  baseUnit: ['INVALID_BASE_UNIT', (field: string) => `${field} must be true or false`],
  baseUnitTwice: ['DUPLICATE_BASE_UNIT', (field: string, earlier: string) =>
    `${field} is true, but ${earlier} is already the base unit of this SKU: a SKU has at most one`],
  itemIdTwice: ['DUPLICATE_ITEM_ID', (id: number, index: number) => `id ${id} already appears in the row at index ${index}`],
  skuIdTwiceInRow: ['DUPLICATE_SKU_ID', (field: string, id: number) => `${field} ${id} appears twice in this row`],
  skuIdTwiceInRequest: ['DUPLICATE_SKU_ID', (field: string, id: number, index: number) =>
    `${field} ${id} already appears in the row at index ${index}`],
  offerIdTwiceInRow: ['DUPLICATE_OFFER_ID', (field: string, id: number) => `${field} ${id} appears twice in this row`],
  offerIdTwiceInRequest: ['DUPLICATE_OFFER_ID', (field: string, id: number, index: number) =>
    `${field} ${id} already appears in the row at index ${index}`],
  unitIdTwiceInRow: ['DUPLICATE_SELLING_UNIT_ID', (field: string, id: number) => `${field} ${id} appears twice in this row`],
  unitIdTwiceInRequest: ['DUPLICATE_SELLING_UNIT_ID', (field: string, id: number, index: number) =>
    `${field} ${id} already appears in the row at index ${index}`],
  itemOfAnotherSeller: ['ITEM_OF_ANOTHER_SELLER', (id: number) => `id ${id} belongs to another seller`],
  skuOfAnotherItem: ['SKU_OF_ANOTHER_ITEM', (field: string, id: number) => `${field} ${id} belongs to another item`],
  offerOfAnotherSku: ['OFFER_OF_ANOTHER_SKU', (field: string, id: number) => `${field} ${id} belongs to another SKU`],
  unitOfAnotherSku: ['SELLING_UNIT_OF_ANOTHER_SKU', (field: string, id: number) => `${field} ${id} belongs to another SKU`],
  dealDate: ['INVALID_DATE', 'dealDate must be a date that exists, written YYYY-MM-DD (such as "2024-06-30")'],
  dealIdTwice: ['DUPLICATE_DEAL_ID', (id: number, index: number) => `id ${id} already appears in the row at index ${index}`],
  dealOfAnotherSeller: ['DEAL_OF_ANOTHER_SELLER', (id: number) => `id ${id} belongs to another seller`],
  offerNotFound: ['OFFER_NOT_FOUND', (offerId: number, companyId: number) =>
    `offerId ${offerId} is not an offer of companyId ${companyId}`],
  belowGrabbed: ['DEAL_BELOW_GRABBED', (maxQuantity: string, grabbed: string) =>
    `maxQuantity ${maxQuantity} is below the quantity already grabbed of this deal (${grabbed})`],
  offerOfGrabbedDeal: ['DEAL_OFFER_LOCKED', (from: number, to: number) =>
    `offerId cannot change from ${from} to ${to}: the deal has already been grabbed by an order`]
})
export type PlatformRowErrorCode = CodeOf<typeof PlatformRowErrors>
export type PlatformRowError = ItemError<PlatformRowErrorCode>

/** Several broken fields of one row: every sentence, in field order, with the first one's code. */
export function combined<E extends ItemError> (problems: E[]): E {
  return { code: problems[0]!.code, text: problems.map((p) => p.text).join('; ') } as E
}
