import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { SellersPlan, SellersState, StoredSeller } from './plan-sellers.js'
import { advanceSequence, intArray, json, lockKeys } from './statements.js'

/*
 * The set-based statements of a sellers batch, on the caller's transaction: one statement per kind of
 * write whatever the number of rows (json_to_recordset of the batch's rows), none per row.
 */

/** Advisory lock namespaces: a companyId and a store id may not exist yet, so there is no row to lock. */
const SELLER_KEY_SPACE = 0x5e11e5
const STORE_KEY_SPACE = 0x5707e5

/**
 * Locks every companyId and store id of the batch, in one global order (sellers then stores, ascending),
 * then reads what is stored for them, the sellers' rows locked in id order (as the points batch locks
 * them). Two batches naming the same seller or store take turns: the second reads what the first wrote.
 */
export async function lockAndReadSellers (tx: Tx, companyIds: number[], storeIds: number[]): Promise<SellersState> {
  await lockKeys(tx, [{ space: SELLER_KEY_SPACE, ids: companyIds }, { space: STORE_KEY_SPACE, ids: storeIds }])
  const sellers = await tx.execute<StoredSeller & { id: number }>(sql`
    select id, name, status::text as status, take_rate::text as "takeRate", auto_reject_enabled as "autoRejectEnabled"
    from sellers where id = any(${intArray(companyIds)}) order by id for update`)
  const stores = await tx.execute<{ id: number, sellerId: number, name: string }>(sql`
    select id, seller_id as "sellerId", name from stores where id = any(${intArray(storeIds)})`)
  return {
    sellers: new Map(sellers.map(({ id, ...s }) => [id, s])),
    stores: new Map(stores.map(({ id, ...s }) => [id, s]))
  }
}

const SELLER_RECORD = sql`s(id int, name text, status seller_status, take_rate numeric, auto_reject_enabled boolean)`

export async function writeSellers (tx: Tx, plan: SellersPlan): Promise<void> {
  const { insertSellers, updateSellers, insertStores, renameStores } = plan
  const records = (rows: typeof insertSellers) => json(rows.map((r) => ({
    id: r.companyId, name: r.name, status: r.status, take_rate: r.takeRate, auto_reject_enabled: r.autoRejectEnabled
  })))
  if (insertSellers.length > 0) {
    await tx.execute(sql`insert into sellers (id, name, status, take_rate, auto_reject_enabled)
      select s.id, s.name, s.status, s.take_rate, s.auto_reject_enabled
      from json_to_recordset(${records(insertSellers)}) as ${SELLER_RECORD}`)
  }
  if (updateSellers.length > 0) {
    await tx.execute(sql`update sellers t set name = s.name, status = s.status, take_rate = s.take_rate,
        auto_reject_enabled = s.auto_reject_enabled, updated_at = now()
      from json_to_recordset(${records(updateSellers)}) as ${SELLER_RECORD} where t.id = s.id`)
  }
  if (insertStores.length > 0) {
    await tx.execute(sql`insert into stores (id, seller_id, name)
      select s.id, s.seller_id, s.name
      from json_to_recordset(${json(insertStores.map((s) => ({ id: s.id, seller_id: s.sellerId, name: s.name })))})
        as s(id int, seller_id int, name text)`)
  }
  if (renameStores.length > 0) {
    await tx.execute(sql`update stores t set name = s.name
      from json_to_recordset(${json(renameStores)}) as s(id int, name text) where t.id = s.id`)
  }
  if (insertSellers.length > 0) await advanceSequence(tx, 'sellers')
  if (insertStores.length > 0) await advanceSequence(tx, 'stores')
}
