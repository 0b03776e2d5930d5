import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from '../db/client.js'
import {
  ALONE, arrayAggText, elementsAggText, listText, planObject, PlanNotCovered, surroundOf,
  type JsonEntry, type SurroundText
} from '../db/json-text.js'
import { scalarTexts } from '../db/read-model.js'
import { runJsonQuery, type JsonAnswer } from '../db/statements.js'
import { offerText } from '../orders/order-json.js'
import { ITEM, SELLING_UNIT, SKU } from '../orders/order-model.js'
import { pageInfoText, pageTotal, parseConnection, type Connection } from '../paging/page-info.js'
import type { ReferenceListFilter } from './reference-list-input.js'
import type { SellerItemView } from './reference-model.js'

/*
 * A page of a seller's items, by id, each with its SKUs and their offers (prices as the orders read
 * writes them) and selling units: what the seller needs to map the catalogue onto its own. One statement,
 * PostgreSQL writing the exact JSON text of the selection (an ItemConnection), as the orders read does;
 * nested lists are built set-wise once per page (the page's SKUs, their offers, their selling units), each
 * part MATERIALIZED, never once per item.
 *
 * `unmapped`: the items without an item sync ID, or with an offer without an offer sync ID — found from
 * the `(seller_id, item_sync_id)` and `(seller_id, offer_sync_id)` unique indexes' `is null` ranges.
 */

const dialect = new PgDialect()

/**
 * The unmapped items' ids, once per statement (the page and the count both read it): the items without an
 * item sync ID, and the items of offers without an offer sync ID, each from its `is null` index range.
 */
function unmappedCte (seller: SQL): SQL {
  return sql`unmapped as materialized (
    select u.id from items u where u.seller_id = ${seller} and u.item_sync_id is null
    union
    select k.item_id from offers f join skus k on k.id = f.sku_id where f.seller_id = ${seller} and f.offer_sync_id is null
  ), `
}

function where (seller: SQL, unmapped: boolean): SQL {
  const own = sql`i.seller_id = ${seller}`
  return unmapped ? sql`${own} and i.id in (select id from unmapped)` : own
}

const noNested = (type: string) => (name: string): SQL => { throw new PlanNotCovered(`${type}.${name}`) }

/** A CTE of the page's SKUs for one sub-selection of `skus`, as text grouped per item; returns its name. */
function skusCte (entries: JsonEntry[], ctes: SQL[], name: (prefix: string) => string): string {
  const cte = name('skus')
  const joins: SQL[] = []
  const text = planObject(entries, 'Sku', scalarTexts(SKU, 'k'), (field, sub) => {
    const alias = name(field === 'offers' ? 'offers' : 'units')
    if (field === 'offers') {
      ctes.push(sql`${sql.raw(alias)} as materialized (select f.sku_id, ${elementsAggText(offerText(sub, 'f'), sql.raw('f.id'))} as t
        from page_skus pk join offers f on f.sku_id = pk.id group by f.sku_id)`)
    } else if (field === 'itemSellingUnits') {
      const unit = planObject(sub, 'ItemSellingUnit', scalarTexts(SELLING_UNIT, 'u'), noNested('ItemSellingUnit'))
      ctes.push(sql`${sql.raw(alias)} as materialized (select u.sku_id, ${elementsAggText(unit, sql.raw('u.id'))} as t
        from page_skus pk join selling_units u on u.sku_id = pk.id group by u.sku_id)`)
    } else {
      throw new PlanNotCovered(`Sku.${field}`)
    }
    joins.push(sql.raw(`left join ${alias} on ${alias}.sku_id = k.id`))
    return listText(sql.raw(`${alias}.t`))
  })
  ctes.push(sql`${sql.raw(cte)} as materialized (select k.item_id, ${elementsAggText(text, sql.raw('k.id'))} as t
    from page_skus k ${sql.join(joins, sql` `)} group by k.item_id)`)
  return cte
}

/** The page's SKUs, their offers' price slabs, their selling units: what the cost bills, counted as answered. */
const LIST_LENGTHS: Record<string, string> = {
  nodes: 'select count(*) from picked',
  'nodes/skus': 'select count(*) from page_skus',
  'nodes/skus/offers': 'select count(*) from page_skus k join offers f on f.sku_id = k.id',
  'nodes/skus/offers/priceRange':
    'select coalesce(sum(jsonb_array_length(f.price_range)), 0) from page_skus k join offers f on f.sku_id = k.id',
  'nodes/skus/itemSellingUnits': 'select count(*) from page_skus k join selling_units u on u.sku_id = k.id'
}

function listPaths (entries: JsonEntry[], prefix = ''): string[] {
  const paths = new Set<string>()
  for (const { value } of entries) {
    if (value.kind !== 'field' || value.entries === undefined) continue
    const path = prefix === '' ? value.name : `${prefix}/${value.name}`
    if (Object.hasOwn(LIST_LENGTHS, path)) paths.add(path)
    for (const below of listPaths(value.entries, path)) paths.add(below)
  }
  return [...paths].sort()
}

export function itemConnectionStatement (
  sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): SQL {
  const seller = sql`${sellerId}::int`
  const limit = sql`${filter.limit}::int`
  const offset = sql`${(filter.page - 1) * filter.limit}::bigint`
  const condition = where(seller, filter.unmapped)
  const ctes: SQL[] = []
  let n = 0
  const name = (prefix: string): string => `${prefix}_${++n}`
  const connection = planObject(entries, 'ItemConnection', {}, (field, sub) => {
    if (field === 'nodes') {
      const joins: SQL[] = []
      const node = planObject(sub, 'SellerItem', scalarTexts(ITEM, 'i'), (nested, skuEntries) => {
        if (nested !== 'skus') throw new PlanNotCovered(`SellerItem.${nested}`)
        const cte = skusCte(skuEntries, ctes, name)
        joins.push(sql.raw(`left join ${cte} on ${cte}.item_id = i.id`))
        return listText(sql.raw(`${cte}.t`))
      })
      return sql`(select ${arrayAggText(node, sql.raw('i.id'))} from picked i ${sql.join(joins, sql` `)})`
    }
    if (field === 'pageInfo') {
      return pageInfoText(sub, {
        total: pageTotal(sql.raw('f.n'), limit, offset, sql`select count(*) from items i where ${condition}`),
        page: sql`${filter.page}::int`,
        limit,
        fetched: sql.raw('f.n')
      })
    }
    throw new PlanNotCovered(`ItemConnection.${field}`)
  }, surroundOf(around))
  const counted = countLists ? listPaths(entries).map((path) => sql.raw(`'${path}', (${LIST_LENGTHS[path]})`)) : []
  const lengths = countLists ? sql`, json_build_object(${sql.join(counted, sql`, `)})::text as lengths` : sql``
  const more = ctes.map((cte) => sql`, ${cte}`)
  // The page is read with one row more than it shows (hasNext); `picked` is what it shows.
  return sql`with ${filter.unmapped ? unmappedCte(seller) : sql``}page as materialized (
      select i.id, i.item_name, i.item_sync_id from items i where ${condition}
      order by i.id limit ${limit} + 1 offset ${offset}
    ), fetched as (select count(*) as n from page),
    picked as materialized (select * from page order by id limit ${limit}),
    page_skus as materialized (select k.* from picked p join skus k on k.item_id = p.id) ${sql.join(more, sql` `)}
    select ${connection} as body${lengths} from fetched f`
}

export async function readItemConnectionText (
  tx: Tx, sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): Promise<JsonAnswer> {
  const statement = itemConnectionStatement(sellerId, filter, entries, around, countLists)
  return await runJsonQuery(tx, dialect.sqlToQuery(statement))
}

/** For the standard execution: `entries` with pageInfo (always) and nodes (when selected) with every field. */
export async function readItemPage (
  tx: Tx, sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[]
): Promise<Connection<SellerItemView>> {
  return parseConnection((await readItemConnectionText(tx, sellerId, filter, entries, ALONE)).body)
}
