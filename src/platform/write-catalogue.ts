import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { ItemRow, OfferRow, PriceSlabRow, SellingUnitRow, SkuRow } from './catalogue-row.js'
import type { CataloguePlan, CatalogueState, StoredOffer, StoredSku, StoredSlab } from './plan-catalogue.js'
import { advanceSequence, intArray, json, KeySpace, lockKeys } from './batch-sql.js'

/*
 * The set-based statements of a catalogue batch, on the caller's transaction: one statement per kind of
 * write whatever the number of rows (json_to_recordset of the batch's records), none per row. The sync IDs
 * (item_sync_id, offer_sync_id) are the seller's and are never written here.
 */

export function catalogueIds (rows: ItemRow[]) {
  const skus = rows.flatMap((r) => r.skus)
  return {
    companyIds: [...new Set(rows.map((r) => r.companyId))],
    itemIds: rows.map((r) => r.id),
    skuIds: skus.map((s) => s.id),
    offerIds: skus.flatMap((s) => s.offers.map((o) => o.id)),
    unitIds: skus.flatMap((s) => s.itemSellingUnits.map((u) => u.id))
  }
}
export type CatalogueIds = ReturnType<typeof catalogueIds>

/**
 * Locks every record id of the batch in one global order (lockKeys), then reads what is stored under them.
 * Two batches naming the same record take turns: the second reads what the first wrote. The sellers are
 * share-locked in id order before any insert does it for the foreign keys in whatever order, so this batch
 * and a sellers or points batch (which lock sellers for update in id order) cannot deadlock.
 */
export async function lockAndReadCatalogue (tx: Tx, ids: CatalogueIds): Promise<CatalogueState> {
  await lockKeys(tx, [
    { space: KeySpace.item, ids: ids.itemIds },
    { space: KeySpace.sku, ids: ids.skuIds },
    { space: KeySpace.offer, ids: ids.offerIds },
    { space: KeySpace.sellingUnit, ids: ids.unitIds }
  ])
  const sellers = await tx.execute<{ id: number }>(sql`
    select id from sellers where id = any(${intArray(ids.companyIds)}) order by id for key share`)
  const items = await tx.execute<{ id: number, sellerId: number, itemName: string }>(sql`
    select id, seller_id as "sellerId", item_name as "itemName" from items where id = any(${intArray(ids.itemIds)})`)
  const skus = await tx.execute<Omit<StoredSku, 'images' | 'tags'> & { id: number, images: string, tags: string }>(sql`
    select id, seller_id as "sellerId", item_id as "itemId", sku_nick_name as "skuNickName",
      array_to_json(images)::text as images, array_to_json(tags)::text as tags
    from skus where id = any(${intArray(ids.skuIds)})`)
  // Each slab's values as the text jsonb holds (->>), compared in their canonical form by the plan.
  const offers = await tx.execute<Omit<StoredOffer, 'priceRange'> & { id: number, priceRange: string | null }>(sql`
    select id, seller_id as "sellerId", sku_id as "skuId", purchase_price::text as "purchasePrice",
      mrp_price_amount::text as "mrpPriceAmount", final_price_with_tax::text as "finalPriceWithTax", currency,
      case when jsonb_typeof(price_range) = 'array' then (
        select coalesce(json_agg(json_build_array(e->>'minQuantity', e->>'maxQuantity', e->>'price') order by n), '[]')
        from jsonb_array_elements(price_range) with ordinality x(e, n))::text end as "priceRange"
    from offers where id = any(${intArray(ids.offerIds)})`)
  const units = await tx.execute<{ id: number, skuId: number, name: string, multiplier: string, isBaseUnit: boolean }>(sql`
    select id, sku_id as "skuId", name, multiplier::text as multiplier, is_base_unit as "isBaseUnit"
    from selling_units where id = any(${intArray(ids.unitIds)})`)
  return {
    sellers: new Set(sellers.map((s) => s.id)),
    items: new Map(items.map(({ id, ...i }) => [id, i])),
    skus: new Map(skus.map(({ id, images, tags, ...s }) =>
      [id, { ...s, images: JSON.parse(images) as string[], tags: JSON.parse(tags) as string[] }])),
    offers: new Map(offers.map(({ id, priceRange, ...o }) =>
      [id, { ...o, priceRange: priceRange === null ? null : JSON.parse(priceRange) as StoredSlab[] }])),
    units: new Map(units.map(({ id, ...u }) => [id, u]))
  }
}

/**
 * The slabs as jsonb text with JSON numbers written from the canonical decimals themselves, so the stored
 * numbers are exactly the ones sent (never through a float) and the read (->>, a JSON number) gives them back.
 */
function slabsText (slabs: PriceSlabRow[]): string {
  return `[${slabs.map((s) =>
    `{"minQuantity":${s.minQuantity},"maxQuantity":${s.maxQuantity ?? 'null'},"price":${s.price}}`).join(',')}]`
}

const skuRecord = (sku: SkuRow) => ({ id: sku.id, sku_nick_name: sku.skuNickName, images: sku.images, tags: sku.tags })
const offerRecord = (o: OfferRow) => ({
  id: o.id,
  purchase_price: o.purchasePrice,
  mrp_price_amount: o.mrpPriceAmount,
  final_price_with_tax: o.finalPriceWithTax,
  currency: o.currency,
  price_range: slabsText(o.priceRange)
})
const unitRecord = (u: SellingUnitRow) =>
  ({ id: u.id, name: u.name, multiplier: u.multiplier, is_base_unit: u.isBaseUnit })

const SKU = sql`s(id int, seller_id int, item_id int, sku_nick_name text, images text[], tags text[])`
const OFFER = sql`s(id int, seller_id int, sku_id int, purchase_price numeric, mrp_price_amount numeric,
  final_price_with_tax numeric, currency text, price_range text)`
const UNIT = sql`s(id int, sku_id int, name text, multiplier numeric, is_base_unit boolean)`

export async function writeCatalogue (tx: Tx, plan: CataloguePlan): Promise<void> {
  // Parents before children (the foreign keys); an update touches only the columns of the row.
  if (plan.insertItems.length > 0) {
    await tx.execute(sql`insert into items (id, seller_id, item_name)
      select s.id, s.seller_id, s.item_name
      from json_to_recordset(${json(plan.insertItems.map((i) => ({ id: i.id, seller_id: i.companyId, item_name: i.itemName })))})
        as s(id int, seller_id int, item_name text)`)
  }
  if (plan.renameItems.length > 0) {
    await tx.execute(sql`update items t set item_name = s.item_name
      from json_to_recordset(${json(plan.renameItems.map((i) => ({ id: i.id, item_name: i.itemName })))})
        as s(id int, item_name text) where t.id = s.id`)
  }
  if (plan.insertSkus.length > 0) {
    const records = plan.insertSkus.map((s) => ({ ...skuRecord(s.sku), seller_id: s.sellerId, item_id: s.itemId }))
    await tx.execute(sql`insert into skus (id, seller_id, item_id, sku_nick_name, images, tags)
      select s.id, s.seller_id, s.item_id, s.sku_nick_name, s.images, s.tags from json_to_recordset(${json(records)}) as ${SKU}`)
  }
  if (plan.updateSkus.length > 0) {
    await tx.execute(sql`update skus t set sku_nick_name = s.sku_nick_name, images = s.images, tags = s.tags
      from json_to_recordset(${json(plan.updateSkus.map(skuRecord))}) as ${SKU} where t.id = s.id`)
  }
  if (plan.insertOffers.length > 0) {
    const records = plan.insertOffers.map((o) => ({ ...offerRecord(o.offer), seller_id: o.sellerId, sku_id: o.skuId }))
    await tx.execute(sql`insert into offers
        (id, seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax, currency, price_range)
      select s.id, s.seller_id, s.sku_id, s.purchase_price, s.mrp_price_amount, s.final_price_with_tax, s.currency,
        s.price_range::jsonb
      from json_to_recordset(${json(records)}) as ${OFFER}`)
  }
  if (plan.updateOffers.length > 0) {
    await tx.execute(sql`update offers t set purchase_price = s.purchase_price, mrp_price_amount = s.mrp_price_amount,
        final_price_with_tax = s.final_price_with_tax, currency = s.currency, price_range = s.price_range::jsonb
      from json_to_recordset(${json(plan.updateOffers.map(offerRecord))}) as ${OFFER} where t.id = s.id`)
  }
  if (plan.insertUnits.length > 0) {
    const records = plan.insertUnits.map((u) => ({ ...unitRecord(u.unit), sku_id: u.skuId }))
    await tx.execute(sql`insert into selling_units (id, sku_id, name, multiplier, is_base_unit)
      select s.id, s.sku_id, s.name, s.multiplier, s.is_base_unit from json_to_recordset(${json(records)}) as ${UNIT}`)
  }
  if (plan.updateUnits.length > 0) {
    await tx.execute(sql`update selling_units t set name = s.name, multiplier = s.multiplier, is_base_unit = s.is_base_unit
      from json_to_recordset(${json(plan.updateUnits.map(unitRecord))}) as ${UNIT} where t.id = s.id`)
  }
  if (plan.insertItems.length > 0) await advanceSequence(tx, 'items')
  if (plan.insertSkus.length > 0) await advanceSequence(tx, 'skus')
  if (plan.insertOffers.length > 0) await advanceSequence(tx, 'offers')
  if (plan.insertUnits.length > 0) await advanceSequence(tx, 'selling_units')
}
