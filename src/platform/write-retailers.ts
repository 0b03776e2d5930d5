import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { advanceSequence, intArray, json, KeySpace, lockKeys } from './batch-sql.js'
import { linkKey, type RetailersPlan, type RetailersState, type StoredShop } from './plan-retailers.js'
import type { RetailerFields } from './retailer-row.js'

/*
 * The set-based statements of a retailers batch, on the caller's transaction: one statement per kind of
 * write whatever the number of rows (json_to_recordset of the batch's rows), none per row.
 */

/**
 * Locks every companyId, retailer id and shop id of the batch in the global order of batch-sql.ts (so a
 * sellers batch naming the same companyId takes turns with this one instead of deadlocking), then reads
 * what is stored for them. The sellers' rows are held `for key share` in id order: the links about to
 * reference them need them to stay, and nothing that only shares them waits on this batch.
 */
export async function lockAndReadRetailers (
  tx: Tx, keys: { companyIds: number[], retailerIds: number[], shopIds: number[] }
): Promise<RetailersState> {
  const companyIds = [...new Set(keys.companyIds)]
  const retailerIds = [...new Set(keys.retailerIds)]
  const shopIds = [...new Set(keys.shopIds)]
  await lockKeys(tx, [
    { space: KeySpace.seller, ids: companyIds },
    { space: KeySpace.retailer, ids: retailerIds },
    { space: KeySpace.shop, ids: shopIds }
  ])
  const sellers = await tx.execute<{ id: number }>(sql`
    select id from sellers where id = any(${intArray(companyIds)}) order by id for key share`)
  const retailers = await tx.execute<RetailerFields & { id: number }>(sql`
    select id, name, first_name as "firstName", last_name as "lastName", phone, whatsapp
    from retailers where id = any(${intArray(retailerIds)})`)
  const shops = await tx.execute<StoredShop & { id: number }>(sql`
    select id, retailer_id as "retailerId", shop_name as "shopName" from shops where id = any(${intArray(shopIds)})`)
  const retailerLinks = await tx.execute<{ sellerId: number, retailerId: number }>(sql`
    select seller_id as "sellerId", retailer_id as "retailerId" from seller_retailers
    where seller_id = any(${intArray(companyIds)}) and retailer_id = any(${intArray(retailerIds)})`)
  const shopLinks = await tx.execute<{ sellerId: number, shopId: number }>(sql`
    select seller_id as "sellerId", shop_id as "shopId" from seller_shops
    where seller_id = any(${intArray(companyIds)}) and shop_id = any(${intArray(shopIds)})`)
  return {
    sellers: new Set(sellers.map((s) => s.id)),
    retailers: new Map(retailers.map(({ id, ...r }) => [id, r])),
    shops: new Map(shops.map(({ id, ...s }) => [id, s])),
    retailerLinks: new Set(retailerLinks.map((l) => linkKey(l.sellerId, l.retailerId))),
    shopLinks: new Set(shopLinks.map((l) => linkKey(l.sellerId, l.shopId)))
  }
}

const RETAILER_RECORD = sql`r(id int, name text, first_name text, last_name text, phone text, whatsapp text)`

export async function writeRetailers (tx: Tx, plan: RetailersPlan): Promise<void> {
  const { insertRetailers, updateRetailers, insertShops, renameShops, linkRetailers, linkShops } = plan
  const records = (rows: typeof insertRetailers) => json(rows.map((r) => ({
    id: r.id, name: r.name, first_name: r.firstName, last_name: r.lastName, phone: r.phone, whatsapp: r.whatsapp
  })))
  if (insertRetailers.length > 0) {
    await tx.execute(sql`insert into retailers (id, name, first_name, last_name, phone, whatsapp)
      select r.id, r.name, r.first_name, r.last_name, r.phone, r.whatsapp
      from json_to_recordset(${records(insertRetailers)}) as ${RETAILER_RECORD}`)
  }
  if (updateRetailers.length > 0) {
    await tx.execute(sql`update retailers t set name = r.name, first_name = r.first_name, last_name = r.last_name,
        phone = r.phone, whatsapp = r.whatsapp
      from json_to_recordset(${records(updateRetailers)}) as ${RETAILER_RECORD} where t.id = r.id`)
  }
  if (insertShops.length > 0) {
    const rows = insertShops.map((s) => ({ id: s.id, retailer_id: s.retailerId, shop_name: s.shopName }))
    await tx.execute(sql`insert into shops (id, retailer_id, shop_name)
      select s.id, s.retailer_id, s.shop_name
      from json_to_recordset(${json(rows)}) as s(id int, retailer_id int, shop_name text)`)
  }
  if (renameShops.length > 0) {
    await tx.execute(sql`update shops t set shop_name = s.shop_name
      from json_to_recordset(${json(renameShops.map((s) => ({ id: s.id, shop_name: s.shopName })))})
        as s(id int, shop_name text) where t.id = s.id`)
  }
  // sync_id is left out: a new link has none, and `do nothing` never rewrites an existing one (a link
  // made meanwhile by a writer that does not take these locks, such as the seed, stays as it is). The
  // arbiter is named: the sync ID's unique constraint is deferrable (drizzle/0010) and cannot be one.
  if (linkRetailers.length > 0) {
    const rows = linkRetailers.map((l) => ({ seller_id: l.sellerId, retailer_id: l.retailerId }))
    await tx.execute(sql`insert into seller_retailers (seller_id, retailer_id)
      select l.seller_id, l.retailer_id from json_to_recordset(${json(rows)}) as l(seller_id int, retailer_id int)
      on conflict (seller_id, retailer_id) do nothing`)
  }
  if (linkShops.length > 0) {
    const rows = linkShops.map((l) => ({ seller_id: l.sellerId, shop_id: l.shopId }))
    await tx.execute(sql`insert into seller_shops (seller_id, shop_id)
      select l.seller_id, l.shop_id from json_to_recordset(${json(rows)}) as l(seller_id int, shop_id int)
      on conflict (seller_id, shop_id) do nothing`)
  }
  if (insertRetailers.length > 0) await advanceSequence(tx, 'retailers')
  if (insertShops.length > 0) await advanceSequence(tx, 'shops')
}
