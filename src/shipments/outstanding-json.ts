import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from '../db/client.js'
import { arrayAggText, intText, numberText, planObject, PlanNotCovered, stringText, surroundOf, type JsonEntry, type SurroundText } from '../db/json-text.js'
import { runJsonQuery } from '../db/statements.js'
import type { OutstandingShipmentFilter } from './outstanding-list-input.js'

/*
 * A page of outstanding shipments as the exact JSON text of what the query selected (an
 * OutstandingShipmentConnection): the same rows, order and total as read-outstanding.ts, written by
 * PostgreSQL in one statement for the GraphQL pass-through (graphql/pass-through.ts).
 */

const dialect = new PgDialect()

const iso = (column: string): SQL => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`)

export function outstandingConnectionStatement (sellerId: number, filter: OutstandingShipmentFilter, entries: JsonEntry[], around: SurroundText): SQL {
  const conditions = [sql`s.seller_id = ${sellerId}::int`]
  if (filter.retailerSyncId !== null) conditions.push(sql`s.retailer_sync_id = ${filter.retailerSyncId}::text`)
  if (filter.offerSyncId !== null) conditions.push(sql`s.offer_sync_id = ${filter.offerSyncId}::text`)
  const where = sql.join(conditions, sql` and `)
  const connection = planObject(entries, 'OutstandingShipmentConnection', {}, (field, sub) => {
    if (field === 'nodes') {
      const node = planObject(sub, 'OutstandingShipment', {
        retailerSyncId: stringText(sql.raw('p.retailer_sync_id')),
        shopSyncId: stringText(sql.raw('p.shop_sync_id')),
        offerSyncId: stringText(sql.raw('p.offer_sync_id')),
        outstandingQuantity: numberText(sql.raw('p.outstanding_quantity')),
        createdAt: stringText(iso('p.created_at')),
        updatedAt: stringText(iso('p.updated_at'))
      }, (name) => { throw new PlanNotCovered(`OutstandingShipment.${name}`) })
      return sql`(select ${arrayAggText(node, sql.raw('p.created_at, p.id'))} from page p)`
    }
    if (field === 'pageInfo') {
      return planObject(sub, 'PageInfo', {
        total: intText(sql.raw('c.n')),
        page: sql`${filter.page}::int::text`,
        hasNext: sql`(case when ${filter.page}::bigint * ${filter.limit}::int < c.n then 'true' else 'false' end)`,
        limit: sql`${filter.limit}::int::text`
      }, (name) => { throw new PlanNotCovered(`PageInfo.${name}`) })
    }
    throw new PlanNotCovered(`OutstandingShipmentConnection.${field}`)
  }, surroundOf(around))
  return sql`with page as materialized (
      select s.* from outstanding_shipments s where ${where}
      order by s.created_at, s.id limit ${filter.limit}::int offset ${(filter.page - 1) * filter.limit}::bigint
    ), counted as (select count(*) as n from outstanding_shipments s where ${where})
    select ${connection} as body from counted c`
}

export async function readOutstandingConnectionText (tx: Tx, sellerId: number, filter: OutstandingShipmentFilter, entries: JsonEntry[],
  around: SurroundText): Promise<Buffer> {
  return await runJsonQuery(tx, dialect.sqlToQuery(outstandingConnectionStatement(sellerId, filter, entries, around)))
}
