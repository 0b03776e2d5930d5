import { sql, type SQL } from 'drizzle-orm'
import type { ReferenceType } from './texts.js'

/*
 * Where each type's sync ID lives for a seller: retailers and shops are the marketplace's and shared by
 * sellers, so a seller's sync ID for one is on its link (seller_retailers, seller_shops; no link, not the
 * seller's); items and offers belong to one seller and carry it themselves. Each table has a unique index
 * on (seller_id, sync ID column).
 */

export interface ReferenceTable {
  table: SQL
  id: SQL
  syncId: SQL
}

export const REFERENCE_TABLES: Record<ReferenceType, ReferenceTable> = {
  RETAILER: { table: sql.raw('seller_retailers'), id: sql.raw('retailer_id'), syncId: sql.raw('sync_id') },
  SHOP: { table: sql.raw('seller_shops'), id: sql.raw('shop_id'), syncId: sql.raw('sync_id') },
  ITEM: { table: sql.raw('items'), id: sql.raw('id'), syncId: sql.raw('item_sync_id') },
  OFFER: { table: sql.raw('offers'), id: sql.raw('id'), syncId: sql.raw('offer_sync_id') }
}
