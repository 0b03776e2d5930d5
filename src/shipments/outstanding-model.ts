import { field, type ViewOf } from '../db/read-model.js'

/*
 * One stored key of the outstanding shipment sync and its quantity, as the outstandingShipments read
 * hands it out, declared once (db/read-model.ts): the pass-through writes a selection of these fields, the
 * standard execution reads all of them through the same statement (outstanding-json.ts), and codegen maps
 * GraphQL's OutstandingShipment onto the type. The row is `p`, a row of outstanding_shipments.
 */
export const OUTSTANDING_SHIPMENT = {
  retailerSyncId: field.string('retailer_sync_id'),
  /** Null for the rows synced without a shop. */
  shopSyncId: field.nullableString('shop_sync_id'),
  offerSyncId: field.string('offer_sync_id'),
  /**
   * Float, as docs/api/shipments.md says; the stored numeric stays exact in the database. The sync refuses a quantity a
   * Float cannot show (sync-row.ts); a row stored before it did is read as the nearest Float, never an error.
   */
  outstandingQuantity: field.numeric('outstanding_quantity'),
  createdAt: field.timestamp('created_at'),
  updatedAt: field.timestamp('updated_at')
}

export type OutstandingShipmentView = ViewOf<typeof OUTSTANDING_SHIPMENT>
