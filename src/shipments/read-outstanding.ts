import { and, asc, count, eq, sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import { outstandingShipments } from '../db/schema.js'
import type { OutstandingShipmentFilter } from './outstanding-list-input.js'

/*
 * What a seller has synced, so a client can check a sync without a support ticket: its own rows only,
 * oldest first (then id), so a page walk stays stable while new keys arrive.
 */

/** One stored key and its quantity (the GraphQL OutstandingShipment maps onto it). */
export interface OutstandingShipmentView {
  retailerSyncId: string
  shopSyncId: string | null
  offerSyncId: string
  /** Exact, as stored (SQL numeric as text). */
  outstandingQuantity: string
  /** ISO-8601, UTC, microseconds. */
  createdAt: string
  updatedAt: string
}

export interface OutstandingShipmentPage {
  total: number
  page: number
  limit: number
  hasNext: boolean
  nodes: OutstandingShipmentView[]
}

const iso = (column: AnyPgColumn) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

export async function readOutstandingShipments (
  tx: Tx, sellerId: number, filter: OutstandingShipmentFilter
): Promise<OutstandingShipmentPage> {
  const where = and(
    eq(outstandingShipments.sellerId, sellerId),
    filter.retailerSyncId === null ? undefined : eq(outstandingShipments.retailerSyncId, filter.retailerSyncId),
    filter.offerSyncId === null ? undefined : eq(outstandingShipments.offerSyncId, filter.offerSyncId)
  )
  const [nodes, [{ total }]] = await Promise.all([
    tx.select({
      retailerSyncId: outstandingShipments.retailerSyncId,
      shopSyncId: outstandingShipments.shopSyncId,
      offerSyncId: outstandingShipments.offerSyncId,
      outstandingQuantity: outstandingShipments.outstandingQuantity,
      createdAt: iso(outstandingShipments.createdAt),
      updatedAt: iso(outstandingShipments.updatedAt)
    }).from(outstandingShipments).where(where)
      .orderBy(asc(outstandingShipments.createdAt), asc(outstandingShipments.id))
      .limit(filter.limit).offset((filter.page - 1) * filter.limit),
    tx.select({ total: count() }).from(outstandingShipments).where(where)
  ])
  return { total, page: filter.page, limit: filter.limit, hasNext: filter.page * filter.limit < total, nodes }
}
