import { sql, type SQL } from 'drizzle-orm'
import type { ReferenceType } from './texts.js'

/*
 * Where each type's sync ID lives for a seller: retailers and shops are the marketplace's and shared by
 * sellers, so a seller's sync ID for one is on its link (seller_retailers, seller_shops; no link, not the
 * seller's); items and offers belong to one seller and carry it themselves. Each table has a unique
 * constraint on (seller_id, sync ID column), deferrable (drizzle/0010) so that a sync checks it on commit.
 */

export interface ReferenceTable {
  table: SQL
  id: SQL
  syncId: SQL
  /** The unique constraint on (seller_id, sync ID). */
  unique: SQL
}

function reference (table: string, id: string, syncId: string, unique: string): ReferenceTable {
  return { table: sql.raw(table), id: sql.raw(id), syncId: sql.raw(syncId), unique: sql.raw(unique) }
}

export const REFERENCE_TABLES: Record<ReferenceType, ReferenceTable> = {
  RETAILER: reference('seller_retailers', 'retailer_id', 'sync_id', 'seller_retailers_sync_id_key'),
  SHOP: reference('seller_shops', 'shop_id', 'sync_id', 'seller_shops_sync_id_key'),
  ITEM: reference('items', 'id', 'item_sync_id', 'items_seller_sync_id_key'),
  OFFER: reference('offers', 'id', 'offer_sync_id', 'offers_seller_sync_id_key')
}
