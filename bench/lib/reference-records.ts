import type postgres from 'postgres'

/** A record of a seller that a references sync maps: its type and marketplace id. */
export interface ReferenceRecord { type: string, id: number }

/**
 * The seller's records a references sync maps (linked retailers and shops, items, offers), topped up with
 * new items and offers (on its first SKU) until there are `rows` of them; the first `rows`, by type and id.
 * Used by bench:references.
 */
export async function topUpReferenceRecords (sql: postgres.Sql, seller: number, rows: number):
Promise<ReferenceRecord[]> {
  const [{ n }] = await sql`select
    (select count(*)::int from seller_retailers where seller_id = ${seller}) +
    (select count(*)::int from seller_shops where seller_id = ${seller}) +
    (select count(*)::int from items where seller_id = ${seller}) +
    (select count(*)::int from offers where seller_id = ${seller}) as n`
  const missing = Math.max(0, rows - Number(n))
  const items = Math.ceil(missing / 2)
  await sql`insert into items (seller_id, item_name) select ${seller}, 'Bench item ' || g from generate_series(1, ${items}) g`
  const [sku] = await sql`select id from skus where seller_id = ${seller} order by id limit 1`
  await sql`insert into offers (seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    select ${seller}, ${sku.id}, 1, 2, 2 from generate_series(1, ${missing - items}) g`
  return await sql<ReferenceRecord[]>`
    select 'RETAILER' as type, retailer_id as id from seller_retailers where seller_id = ${seller}
    union all select 'SHOP', shop_id from seller_shops where seller_id = ${seller}
    union all select 'ITEM', id from items where seller_id = ${seller}
    union all select 'OFFER', id from offers where seller_id = ${seller}
    order by 1, 2 limit ${rows}`
}
