import Fastify, { type FastifyInstance } from 'fastify'
import type { BenchDb as Database } from '../lib/database.js'

/*
 * The baseline: a bare Fastify route, no GraphQL, no auth, that answers the same page (every field of
 * 2.1–2.7) from one hand-written SQL statement building the JSON with json_agg. What the service costs
 * beyond this is the price of GraphQL (parsing, validation, execution), auth and the flexible selection.
 * Sync IDs are the order's seller's own (migration 0009): seller_retailers / seller_shops by their primary keys.
 */

const iso = (c: string) => `to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
/** sku.offers[] as 2.7 lists it. */
const offer = (f: string) => `json_build_object('id', ${f}.id, 'skuId', ${f}.sku_id, 'offerSyncId', ${f}.offer_sync_id,
  'purchasePrice', ${f}.purchase_price, 'mrpPriceAmount', ${f}.mrp_price_amount, 'currency', ${f}.currency, 'priceRange', ${f}.price_range)`

const PAGE_SQL = `
with filtered as (
  select o.id, o.created_at from orders o
  where o.seller_id = $1 and not o.is_deleted
    and o.created_at >= coalesce(($4::date)::timestamp at time zone $6::text, '-infinity')
    and o.created_at < coalesce(($5::date + 1)::timestamp at time zone $6::text, 'infinity')
), page as (
  select id, created_at from filtered order by created_at, id limit $2 + 1 offset $3
), picked as materialized (select * from page order by created_at, id limit $2),
line as materialized (select oi.* from picked p join order_items oi on oi.order_id = p.id),
sku_offers as materialized (select sku_id, json_agg(${offer('so')} order by so.id) as j from offers so where sku_id in (select sku_id from line) group by sku_id),
sku_units as materialized (select sku_id, json_agg(json_build_object('id', u.id, 'name', u.name, 'multiplier', u.multiplier, 'isBaseUnit', u.is_base_unit,
  'skuId', u.sku_id) order by u.id) as j from selling_units u where sku_id in (select sku_id from line) group by sku_id),
lines as materialized (
  select l.order_id, json_agg(json_build_object('id', l.id::text, 'skuId', l.sku_id, 'quantity', l.quantity,
    'offer', json_build_object('id', f.id, 'offerSyncId', f.offer_sync_id, 'finalPriceWithTax', f.final_price_with_tax),
    'item', json_build_object('id', i.id, 'itemName', i.item_name, 'itemSyncId', i.item_sync_id),
    'sku', json_build_object('itemId', k.item_id, 'skuNickName', k.sku_nick_name, 'images', to_json(k.images), 'tags', to_json(k.tags),
      'offers', coalesce(so.j, '[]'::json), 'itemSellingUnits', coalesce(su.j, '[]'::json))) order by l.id) as j
  from line l join offers f on f.id = l.offer_id join items i on i.id = l.item_id join skus k on k.id = l.sku_id
  left join sku_offers so on so.sku_id = k.id left join sku_units su on su.sku_id = k.id
  group by l.order_id
)
select
  (select count(*) from filtered)::int as total,
  (select count(*) from page)::int as fetched,
  coalesce((select json_agg(json_build_object(
    'orderId', o.id::text, 'orderNumber', o.order_number, 'serviceOrderNumber', o.service_order_number, 'orderStatus', o.status,
    'deliveryType', o.delivery_type, 'companyId', o.seller_id, 'storeId', o.store_id, 'retailerName', o.retailer_name,
    'retailer', json_build_object('id', r.id, 'name', r.name, 'firstName', r.first_name, 'lastName', r.last_name, 'phone', r.phone,
      'whatsapp', r.whatsapp, 'syncId', rl.sync_id),
    'isActionable', o.is_actionable, 'currencyCode', o.currency_code, 'orderTotal', o.order_total, 'orderTotalFinal', o.order_total_final,
    'orderTaxAmount', o.order_tax_amount, 'orderCessAmount', o.order_cess_amount, 'appliedPoints', o.applied_points,
    'totalExtraCharges', o.total_extra_charges, 'roundOff', o.round_off, 'totalItemsInOrder', o.total_items_in_order, 'isDeleted', o.is_deleted,
    'shop', case when s.id is null then null else json_build_object('id', s.id, 'syncId', sl.sync_id, 'retailerSyncId', srl.sync_id, 'shopName', s.shop_name) end,
    'orderItems', coalesce(li.j, '[]'::json),
    'createdAt', ${iso('o.created_at')}, 'updatedAt', ${iso('o.updated_at')}
  ) order by p.created_at, p.id)
  from picked p join orders o on o.id = p.id join retailers r on r.id = o.retailer_id
  left join seller_retailers rl on rl.seller_id = o.seller_id and rl.retailer_id = o.retailer_id
  left join shops s on s.id = o.shop_id
  left join seller_shops sl on sl.seller_id = o.seller_id and sl.shop_id = s.id
  left join seller_retailers srl on srl.seller_id = o.seller_id and srl.retailer_id = s.retailer_id
  left join lines li on li.order_id = o.id), '[]'::json) as nodes`

interface PageBody { sellerId: number, page?: number, limit?: number, fromDate?: string, toDate?: string }

export async function buildBaselineApp (database: Database, timeZone: string): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  app.post<{ Body: PageBody }>('/orders', async (request) => {
    const { sellerId, page = 1, limit = 20, fromDate = null, toDate = null } = request.body
    const [row] = await database.sql.unsafe(
      PAGE_SQL, [sellerId, limit, (page - 1) * limit, fromDate, toDate, timeZone], { prepare: true }
    )
    const pageInfo = { total: row.total, page, hasNext: row.fetched > limit, limit }
    return { data: { orders: { pageInfo, nodes: row.nodes } } }
  })
  return app
}
