import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { DealRow } from './deal-row.js'
import type { DealsPlan, DealsState, StoredDeal } from './plan-deals.js'
import { advanceSequence, intArray, json, KeySpace, lockKeys } from './batch-sql.js'

/*
 * The set-based statements of a deals batch, on the caller's transaction: one statement per kind of write
 * whatever the number of rows, none per row. grabbed_quantity is never written here: it is the orders'.
 */

/**
 * Locks the batch's deal ids (lockKeys), share-locks its sellers and offers in id order (before an insert
 * does it for the foreign keys in whatever order: no deadlock with a batch that locks them for update),
 * then reads the stored deals locked for update: an order grabbing one of them waits for this batch, so the
 * grabbed quantity a row is checked against cannot move before it commits.
 */
export async function lockAndReadDeals (tx: Tx, rows: DealRow[]): Promise<DealsState> {
  const ids = rows.map((r) => r.id)
  await lockKeys(tx, [{ space: KeySpace.deal, ids }])
  const sellers = await tx.execute<{ id: number }>(sql`select id from sellers
    where id = any(${intArray([...new Set(rows.map((r) => r.companyId))])}) order by id for key share`)
  const offers = await tx.execute<{ id: number, sellerId: number }>(sql`select id, seller_id as "sellerId" from offers
    where id = any(${intArray([...new Set(rows.map((r) => r.offerId))])}) order by id for key share`)
  const deals = await tx.execute<Omit<StoredDeal, 'onOrders'> & { id: number }>(sql`
    select id, seller_id as "sellerId", offer_id as "offerId", to_char(deal_date, 'YYYY-MM-DD') as "dealDate",
      deal_price::text as "dealPrice", max_quantity::text as "maxQuantity", grabbed_quantity::text as "grabbedQuantity"
    from daily_deals where id = any(${intArray(ids)}) order by id for update`)
  const stored = new Map(deals.map(({ id, ...d }) => [id, { ...d, onOrders: Number(d.grabbedQuantity) > 0 }]))
  // Whether an order line names a deal is asked only for the deals a row would move to another offer
  // (order_items has no index on deal_id: the common re-send never pays for the scan).
  const moving = rows.filter((r) => {
    const deal = stored.get(r.id)
    return deal !== undefined && deal.offerId !== r.offerId && !deal.onOrders
  }).map((r) => r.id)
  if (moving.length > 0) {
    const named = await tx.execute<{ id: number }>(sql`
      select distinct deal_id as id from order_items where deal_id = any(${intArray(moving)})`)
    for (const { id } of named) stored.get(id)!.onOrders = true
  }
  return {
    sellers: new Set(sellers.map((s) => s.id)),
    offerSellers: new Map(offers.map((o) => [o.id, o.sellerId])),
    deals: stored
  }
}

const DEAL = sql`s(id int, seller_id int, offer_id int, deal_date date, deal_price numeric, max_quantity numeric)`
const records = (rows: DealRow[]) => json(rows.map((r) => ({
  id: r.id,
  seller_id: r.companyId,
  offer_id: r.offerId,
  deal_date: r.dealDate,
  deal_price: r.dealPrice,
  max_quantity: r.maxQuantity
})))

export async function writeDeals (tx: Tx, plan: DealsPlan): Promise<void> {
  if (plan.insert.length > 0) {
    await tx.execute(sql`insert into daily_deals (id, seller_id, offer_id, deal_date, deal_price, max_quantity)
      select s.id, s.seller_id, s.offer_id, s.deal_date, s.deal_price, s.max_quantity
      from json_to_recordset(${records(plan.insert)}) as ${DEAL}`)
    await advanceSequence(tx, 'daily_deals')
  }
  if (plan.update.length > 0) {
    await tx.execute(sql`update daily_deals t set offer_id = s.offer_id, deal_date = s.deal_date,
        deal_price = s.deal_price, max_quantity = s.max_quantity, updated_at = now()
      from json_to_recordset(${records(plan.update)}) as ${DEAL} where t.id = s.id`)
  }
}
