import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { prepared } from '../db/statements.js'
import { MAX_LIMIT } from '../paging/page-window.js'
import type { OrderListFilter } from './order-list-input.js'
import type { OrderView } from './order-view.js'

/*
 * A page of a seller's orders in ONE SQL statement: the page of ids, the total and the JSON tree of the
 * nodes (retailer, shop, items with offer, item and SKU) are all built by PostgreSQL, so a request costs
 * the same number of statements whatever the page size, and PostgreSQL reads one snapshot for all of it.
 * (Measured against per-field batched loaders: see bench/README.md.) Nested objects the query did not
 * select are left out of the SQL altogether; the scalar fields of a selected object are always built,
 * which keeps the number of distinct statements small (a few hundred shapes at most, each prepared once
 * per connection).
 */

/** Who reads: a seller, maybe narrowed to some of its stores. */
export interface OrderReader { sellerId: number, storeIds: number[] | null }

/** Which parts of an order the caller asked for. */
export interface OrderSelection {
  total: boolean
  /** False when only pageInfo was asked for: no node is built at all. */
  nodes: boolean
  retailer: boolean
  shop: boolean
  orderItems: false | {
    offer: boolean
    item: boolean
    sku: false | { offers: boolean, itemSellingUnits: boolean }
  }
}

export interface OrderPage {
  /** Null when the selection did not ask for it. */
  total: number | null
  page: number
  limit: number
  hasNext: boolean
  /** Nested objects that were not selected are absent. */
  nodes: OrderView[]
}

/** UTC with microseconds: exact enough to hand back as updatedSince. */
const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const offerJson = (f: string) => `json_build_object('id', ${f}.id, 'skuId', ${f}.sku_id, 'offerSyncId', ${f}.offer_sync_id,
  'finalPriceWithTax', ${f}.final_price_with_tax, 'purchasePrice', ${f}.purchase_price, 'mrpPriceAmount', ${f}.mrp_price_amount,
  'currency', ${f}.currency, 'priceRange', ${f}.price_range)`

/*
 * The nested parts are built set-wise, once per page, not once per order: the page's lines in one join,
 * each SKU of the page once (with its offers and selling units), then grouped per order. Correlated
 * sub-selects per order and line were measured 2–3× slower (the executor restarts each one per row).
 * Each part is MATERIALIZED: with a prepared statement's generic plan (the page size is a parameter)
 * the planner expects a handful of rows and would otherwise re-run an inlined aggregate per outer row.
 */
function nestedCtes (selection: OrderSelection): { ctes: string[], joins: string[], fields: string[] } {
  const ctes: string[] = []
  const joins: string[] = []
  const fields: string[] = []
  if (selection.retailer) {
    joins.push('join retailers r on r.id = o.retailer_id')
    fields.push(`'retailer', json_build_object('id', r.id, 'name', r.name, 'firstName', r.first_name, 'lastName', r.last_name,
      'phone', r.phone, 'whatsapp', r.whatsapp, 'syncId', r.sync_id)`)
  }
  if (selection.shop) {
    joins.push('left join shops s on s.id = o.shop_id left join retailers sr on sr.id = s.retailer_id')
    fields.push(`'shop', case when s.id is null then null
      else json_build_object('id', s.id, 'syncId', s.sync_id, 'retailerSyncId', sr.sync_id, 'shopName', s.shop_name) end`)
  }
  const items = selection.orderItems
  if (items) {
    ctes.push('line as materialized (select oi.* from picked p join order_items oi on oi.order_id = p.id)')
    const lineFields = ['\'id\', l.id::text, \'skuId\', l.sku_id, \'quantity\', l.quantity']
    const lineJoins: string[] = []
    if (items.offer) { lineFields.push(`'offer', ${offerJson('f')}`); lineJoins.push('join offers f on f.id = l.offer_id') }
    if (items.item) {
      lineFields.push('\'item\', json_build_object(\'id\', i.id, \'itemName\', i.item_name, \'itemSyncId\', i.item_sync_id)')
      lineJoins.push('join items i on i.id = l.item_id')
    }
    if (items.sku) {
      const skuFields = ['\'itemId\', k.item_id, \'skuNickName\', k.sku_nick_name, \'images\', to_json(k.images), \'tags\', to_json(k.tags)']
      const skuJoins: string[] = []
      if (items.sku.offers) {
        ctes.push(`sku_offers as materialized (select so.sku_id, json_agg(${offerJson('so')} order by so.id) as j
          from offers so where so.sku_id in (select sku_id from line) group by so.sku_id)`)
        skuFields.push('\'offers\', coalesce(sof.j, \'[]\'::json)')
        skuJoins.push('left join sku_offers sof on sof.sku_id = k.id')
      }
      if (items.sku.itemSellingUnits) {
        ctes.push(`sku_units as materialized (select u.sku_id, json_agg(json_build_object('id', u.id, 'name', u.name, 'multiplier', u.multiplier,
          'isBaseUnit', u.is_base_unit, 'skuId', u.sku_id) order by u.id) as j
          from selling_units u where u.sku_id in (select sku_id from line) group by u.sku_id)`)
        skuFields.push('\'itemSellingUnits\', coalesce(su.j, \'[]\'::json)')
        skuJoins.push('left join sku_units su on su.sku_id = k.id')
      }
      ctes.push(`sku as materialized (select k.id, json_build_object(${skuFields.join(', ')}) as j
        from skus k ${skuJoins.join(' ')} where k.id in (select sku_id from line))`)
      lineFields.push('\'sku\', sk.j')
      lineJoins.push('join sku sk on sk.id = l.sku_id')
    }
    ctes.push(`lines as materialized (select l.order_id, json_agg(json_build_object(${lineFields.join(', ')}) order by l.id) as j
      from line l ${lineJoins.join(' ')} group by l.order_id)`)
    joins.push('left join lines li on li.order_id = o.id')
    fields.push('\'orderItems\', coalesce(li.j, \'[]\'::json)')
  }
  return { ctes, joins, fields }
}

function nodesJson (selection: OrderSelection): { ctes: string[], select: string } {
  const nested = nestedCtes(selection)
  const fields = [
    `'orderId', o.id::text, 'orderNumber', o.order_number, 'serviceOrderNumber', o.service_order_number, 'orderStatus', o.status,
    'deliveryType', o.delivery_type, 'companyId', o.seller_id, 'storeId', o.store_id, 'retailerName', o.retailer_name,
    'isActionable', o.is_actionable, 'currencyCode', o.currency_code, 'orderTotal', o.order_total, 'orderTotalFinal', o.order_total_final,
    'orderTaxAmount', o.order_tax_amount, 'orderCessAmount', o.order_cess_amount, 'appliedPoints', o.applied_points,
    'totalExtraCharges', o.total_extra_charges, 'roundOff', o.round_off, 'totalItemsInOrder', o.total_items_in_order,
    'isDeleted', o.is_deleted, 'createdAt', ${iso('o.created_at')}, 'updatedAt', ${iso('o.updated_at')}`,
    ...nested.fields
  ]
  return {
    ctes: nested.ctes,
    select: `coalesce((select json_agg(json_build_object(${fields.join(', ')}) order by p.created_at, p.id)
      from picked p join orders o on o.id = p.id ${nested.joins.join(' ')}), '[]'::json)`
  }
}

/**
 * The conditions of "this reader's live orders matching the filter". Only the conditions in use are
 * written, so each prepared statement gets a plan that walks orders_seller_created_idx (or
 * orders_seller_updated_idx for updatedSince) instead of a generic plan full of `$n is null or …`.
 */
function whereClause (reader: OrderReader, filter: OrderListFilter, timeZone: string): SQL {
  const conditions = [sql`o.seller_id = ${reader.sellerId}::int`, sql`not o.is_deleted`]
  if (reader.storeIds) conditions.push(sql`o.store_id = any(${sql.param(reader.storeIds)}::int[])`)
  // Whole days in the business time zone, DST included: [fromDate 00:00, toDate + 1 day 00:00).
  if (filter.fromDate !== null) conditions.push(sql`o.created_at >= (${filter.fromDate}::date)::timestamp at time zone ${timeZone}::text`)
  if (filter.toDate !== null) conditions.push(sql`o.created_at < (${filter.toDate}::date + 1)::timestamp at time zone ${timeZone}::text`)
  if (filter.updatedSince !== null) conditions.push(sql`o.updated_at > ${filter.updatedSince}::timestamptz`)
  return sql.join(conditions, sql` and `)
}

/**
 * How many orders match. Without a date or updatedSince filter that is the reader's live orders: the sum
 * of a few order_counts rows (kept by triggers, same snapshot), whatever the seller's size. With one,
 * an index-only count over the range, which grows with the range, not with the table.
 */
function countStatement (reader: OrderReader, filter: OrderListFilter, where: SQL): SQL {
  if (filter.fromDate !== null || filter.toDate !== null || filter.updatedSince !== null) {
    return sql`select count(*) from orders o where ${where}`
  }
  const stores = reader.storeIds ? sql` and c.store_id = any(${sql.param(reader.storeIds)}::int[])` : sql``
  return sql`select coalesce(sum(c.live_orders), 0) from order_counts c where c.seller_id = ${reader.sellerId}::int${stores}`
}

/**
 * What every page statement starts from: the page's ids (`picked`, in page order), how many rows were
 * fetched (`fetched f`: one more than the page tells whether another follows), and the total.
 */
export interface PageSource {
  /** `with page …, fetched …, picked …` (continue with `, name as (…)`). */
  ctes: SQL
  /** The total of matching orders, as an SQL expression over `f` (counts only when it must). */
  total: SQL
  /** The page size, as an SQL expression. */
  limit: SQL
}

export function pageSource (reader: OrderReader, filter: OrderListFilter, timeZone: string): PageSource {
  const where = whereClause(reader, filter, timeZone)
  const limit = sql`${filter.limit}::int`
  // Computed by PostgreSQL, not here, so the statement can be a template (order-json.ts).
  const offset = sql`((${filter.page}::bigint - 1) * ${filter.limit}::int)`
  // The page size is a parameter, so the generic plan of a prepared statement cannot see that a page is
  // small: it took `picked` for a tenth of the seller's orders and, at 1,000,000 orders, hash-joined the
  // whole retailers and shops tables to it (25 ms of a 45 ms page). The outer constant LIMIT (never below
  // the page: a limit is at most MAX_LIMIT) tells it, and it joins each order's rows by index again.
  return {
    ctes: sql`with page as (
      select o.id, o.created_at from orders o where ${where}
      order by o.created_at, o.id limit ${limit} + 1 offset ${offset}
    ), fetched as (select count(*) as n from page),
    picked as materialized (select id, created_at from (
      select id, created_at from page order by created_at, id limit ${limit}
    ) w limit ${sql.raw(String(MAX_LIMIT))})`,
    // On the last page the total is known without counting (offset + rows), so the count runs only when
    // there is a next page or the page is past the end; PostgreSQL evaluates the uncorrelated sub-select
    // only in the branch that needs it.
    total: sql`case when f.n <= ${limit} and (f.n > 0 or ${offset} = 0) then ${offset} + f.n
        else (${countStatement(reader, filter, where)}) end`,
    limit
  }
}

/** The one statement of a page; exported so the benchmark can EXPLAIN exactly what runs. */
export function orderPageStatement (reader: OrderReader, filter: OrderListFilter, selection: OrderSelection, timeZone: string): SQL {
  const source = pageSource(reader, filter, timeZone)
  const total = selection.total ? source.total : sql`null`
  const nodes = selection.nodes ? nodesJson(selection) : { ctes: [], select: '\'[]\'::json' }
  return sql`${source.ctes}
    ${sql.raw(nodes.ctes.map((c) => `, ${c}`).join('\n    '))}
    select f.n::int as fetched, (${total})::int as total, ${sql.raw(nodes.select)} as nodes
    from fetched f`
}

type PageRow = { fetched: number, total: number | null, nodes: OrderView[] }

export async function readOrderPage (
  tx: Tx, reader: OrderReader, filter: OrderListFilter, selection: OrderSelection, timeZone: string
): Promise<OrderPage> {
  const [row] = await prepared<PageRow>(tx, orderPageStatement(reader, filter, selection, timeZone))
  return {
    total: row.total,
    page: filter.page,
    limit: filter.limit,
    hasNext: row.fetched > filter.limit,
    nodes: row.nodes
  }
}
