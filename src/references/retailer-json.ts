import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from '../db/client.js'
import {
  ALONE, arrayAggText, elementsAggText, listText, planObject, PlanNotCovered, surroundOf,
  type JsonEntry, type SurroundText
} from '../db/json-text.js'
import { scalarTexts } from '../db/read-model.js'
import { runJsonQuery, type JsonAnswer } from '../db/statements.js'
import { RETAILER, SHOP } from '../orders/order-model.js'
import { pageInfoText, pageTotal, parseConnection, type Connection } from '../paging/page-info.js'
import type { ReferenceListFilter } from './reference-list-input.js'
import type { SellerRetailerView } from './reference-model.js'

/*
 * A page of the retailers linked to a seller (seller_retailers), by retailer id, each with the shops of
 * it linked to the same seller: what the seller needs to map the marketplace's buyers onto its own
 * records. PostgreSQL writes the exact JSON text of what the query selected (a RetailerConnection) in
 * one statement, as the orders read does; the standard execution selects every field and parses it.
 *
 * Scoped by construction: the page is the seller's own links, the shops are joined through the seller's
 * own shop links, and every sync ID is the seller's (its link's), never another seller's.
 *
 * `unmapped`: the retailers whose link has no sync ID, or which have a linked shop without one — found once
 * set-wise from the two `(seller_id, sync_id)` unique indexes (their `sync_id is null` ranges), so the
 * filter costs what is unmapped, not what the seller has.
 */

const dialect = new PgDialect()

/**
 * The unmapped retailers' ids, once per statement (the page and the count both read it): the links without
 * a sync ID, and the linked retailers of linked shops without one, each from its `sync_id is null` index
 * range. Every id in it is a linked retailer of the seller, so the count is the set's size: counting it
 * through the links probed the links' primary key once per unmapped id (12,298 buffers for 2,500 unmapped
 * of 25,000 links; bench/results/2026-11-25-reference-lists.md); the shops' branch probes only for shop links
 * without one.
 */
function unmappedCte (seller: SQL): SQL {
  return sql`unmapped as materialized (
    select u.retailer_id from seller_retailers u where u.seller_id = ${seller} and u.sync_id is null
    union
    select s.retailer_id from seller_shops us join shops s on s.id = us.shop_id
      join seller_retailers l on l.seller_id = ${seller} and l.retailer_id = s.retailer_id
    where us.seller_id = ${seller} and us.sync_id is null
  ), `
}

function where (seller: SQL, unmapped: boolean): SQL {
  const own = sql`l.seller_id = ${seller}`
  return unmapped ? sql`${own} and l.retailer_id in (select retailer_id from unmapped)` : own
}

/** The shops of the page's retailers linked to the seller (`sl`), each as text, grouped per retailer. */
function shopsCte (name: string, entries: JsonEntry[], seller: SQL): SQL {
  const shop = planObject(entries, 'Shop', scalarTexts(SHOP, 's'), (field) => { throw new PlanNotCovered(`Shop.${field}`) })
  // The page row is the seller's link to the shop's retailer: `srl`, whose sync_id is Shop.retailerSyncId.
  return sql`${sql.raw(name)} as materialized (select s.retailer_id, ${elementsAggText(shop, sql.raw('s.id'))} as t
    from picked srl join shops s on s.retailer_id = srl.retailer_id
    join seller_shops sl on sl.seller_id = ${seller} and sl.shop_id = s.id
    group by s.retailer_id)`
}

export function retailerConnectionStatement (
  sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): SQL {
  const seller = sql`${sellerId}::int`
  const limit = sql`${filter.limit}::int`
  const offset = sql`${(filter.page - 1) * filter.limit}::bigint`
  const condition = where(seller, filter.unmapped)
  const ctes: SQL[] = []
  let n = 0
  const connection = planObject(entries, 'RetailerConnection', {}, (field, sub) => {
    if (field === 'nodes') {
      const joins: SQL[] = []
      const node = planObject(sub, 'SellerRetailer', scalarTexts(RETAILER, 'r'), (name, shopEntries) => {
        if (name !== 'shops') throw new PlanNotCovered(`SellerRetailer.${name}`)
        const cte = `shops_${++n}`
        ctes.push(shopsCte(cte, shopEntries, seller))
        joins.push(sql.raw(`left join ${cte} on ${cte}.retailer_id = r.id`))
        return listText(sql.raw(`${cte}.t`))
      })
      return sql`(select ${arrayAggText(node, sql.raw('r.id'))}
        from picked rl join retailers r on r.id = rl.retailer_id ${sql.join(joins, sql` `)})`
    }
    if (field === 'pageInfo') {
      return pageInfoText(sub, {
        total: pageTotal(sql.raw('f.n'), limit, offset, filter.unmapped
          ? sql`select count(*) from unmapped`
          : sql`select count(*) from seller_retailers l where ${condition}`),
        page: sql`${filter.page}::int`,
        limit,
        fetched: sql.raw('f.n')
      })
    }
    throw new PlanNotCovered(`RetailerConnection.${field}`)
  }, surroundOf(around))
  // The lists as the answer has them, for the GraphQL cost's bill.
  const lengths = countLists
    ? sql`, json_build_object('nodes', (select count(*) from picked), 'nodes/shops', (select count(*) from picked p
        join shops s on s.retailer_id = p.retailer_id join seller_shops sl on sl.seller_id = ${seller} and sl.shop_id = s.id))::text as lengths`
    : sql``
  const more = ctes.map((cte) => sql`, ${cte}`)
  // The page is read with one row more than it shows (hasNext); `picked` is what it shows.
  return sql`with ${filter.unmapped ? unmappedCte(seller) : sql``}page as materialized (
      select l.retailer_id, l.sync_id from seller_retailers l where ${condition}
      order by l.retailer_id limit ${limit} + 1 offset ${offset}
    ), fetched as (select count(*) as n from page),
    picked as materialized (select * from page order by retailer_id limit ${limit}) ${sql.join(more, sql` `)}
    select ${connection} as body${lengths} from fetched f`
}

export async function readRetailerConnectionText (
  tx: Tx, sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): Promise<JsonAnswer> {
  const statement = retailerConnectionStatement(sellerId, filter, entries, around, countLists)
  return await runJsonQuery(tx, dialect.sqlToQuery(statement))
}

/** For the standard execution: `entries` with pageInfo (always) and nodes (when selected) with every field. */
export async function readRetailerPage (
  tx: Tx, sellerId: number, filter: ReferenceListFilter, entries: JsonEntry[]
): Promise<Connection<SellerRetailerView>> {
  return parseConnection((await readRetailerConnectionText(tx, sellerId, filter, entries, ALONE)).body)
}
