import { sql, type SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from '../db/client.js'
import {
  ALONE, arrayAggText, planObject, PlanNotCovered, surroundOf, type JsonEntry, type SurroundText
} from '../db/json-text.js'
import { scalarTexts } from '../db/read-model.js'
import { runJsonQuery, type JsonAnswer } from '../db/statements.js'
import { pageInfoText, parseConnection, type Connection } from '../paging/page-info.js'
import type { OutstandingShipmentFilter } from './outstanding-list-input.js'
import { OUTSTANDING_SHIPMENT, type OutstandingShipmentView } from './outstanding-model.js'

/*
 * What a seller has synced, so a client can check a sync without a support ticket: a page of its own
 * rows, oldest first (then id), so a page walk stays stable while new keys arrive. PostgreSQL writes the
 * exact JSON text of what the query selected (an OutstandingShipmentConnection) in one statement: the
 * pass-through splices it into the answer (graphql/pass-through.ts), the standard execution selects
 * every field and parses it.
 */

const dialect = new PgDialect()

export function outstandingConnectionStatement (
  sellerId: number, filter: OutstandingShipmentFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): SQL {
  const conditions = [sql`s.seller_id = ${sellerId}::int`]
  if (filter.retailerSyncId !== null) conditions.push(sql`s.retailer_sync_id = ${filter.retailerSyncId}::text`)
  if (filter.offerSyncId !== null) conditions.push(sql`s.offer_sync_id = ${filter.offerSyncId}::text`)
  const where = sql.join(conditions, sql` and `)
  const connection = planObject(entries, 'OutstandingShipmentConnection', {}, (field, sub) => {
    if (field === 'nodes') {
      const node = planObject(sub, 'OutstandingShipment', scalarTexts(OUTSTANDING_SHIPMENT, 'p'),
        (name) => { throw new PlanNotCovered(`OutstandingShipment.${name}`) })
      return sql`(select ${arrayAggText(node, sql.raw('p.created_at, p.id'))}
        from (select * from page order by created_at, id limit ${filter.limit}::int) p)`
    }
    if (field === 'pageInfo') {
      return pageInfoText(sub, {
        total: sql`(select count(*) from outstanding_shipments s where ${where})`,
        page: sql`${filter.page}::int`,
        limit: sql`${filter.limit}::int`,
        fetched: sql.raw('f.n')
      })
    }
    throw new PlanNotCovered(`OutstandingShipmentConnection.${field}`)
  }, surroundOf(around))
  // The nodes as the answer has them, for the GraphQL cost's bill.
  const lengths = countLists ? sql`, json_build_object('nodes', least(f.n, ${filter.limit}::int))::text as lengths` : sql``
  return sql`with page as materialized (
      select s.* from outstanding_shipments s where ${where}
      order by s.created_at, s.id limit ${filter.limit}::int + 1 offset ${(filter.page - 1) * filter.limit}::bigint
    ), fetched as (select count(*) as n from page)
    select ${connection} as body${lengths} from fetched f`
}

export async function readOutstandingConnectionText (
  tx: Tx, sellerId: number, filter: OutstandingShipmentFilter, entries: JsonEntry[], around: SurroundText,
  countLists = false
): Promise<JsonAnswer> {
  const statement = outstandingConnectionStatement(sellerId, filter, entries, around, countLists)
  return await runJsonQuery(tx, dialect.sqlToQuery(statement))
}

/** For the standard execution: `entries` with pageInfo (always) and nodes (when selected) with every field. */
export async function readOutstandingShipments (tx: Tx, sellerId: number, filter: OutstandingShipmentFilter,
  entries: JsonEntry[]): Promise<Connection<OutstandingShipmentView>> {
  return parseConnection((await readOutstandingConnectionText(tx, sellerId, filter, entries, ALONE)).body)
}
