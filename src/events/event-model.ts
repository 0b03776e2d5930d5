import { field, type ViewOf } from '../db/read-model.js'
import { ORDER } from '../orders/order-model.js'

/*
 * An event of the seller's log as the feed hands it out (GraphQL `Event`), declared once over its row of
 * seller_events (db/read-model.ts). Its own fields are as at the event; `order` is the order as it is now,
 * read with the full order selection when the event is read (event-order.ts): those fields of
 * ORDER. (The log stores no order: record-events.ts.)
 */

export const EVENT = {
  /** Stable and unique: the seller and the sequence (a sequence is never given out twice). */
  id: field.string((e) => `('evt_' || ${e}.seller_id || '_' || ${e}.sequence)`),
  type: field.string('type'),
  /** A digit string: a bigint does not fit a GraphQL Int, and a cursor is handed back as it came. */
  sequence: field.string((e) => `${e}.sequence::text`),
  timestamp: field.timestamp('occurred_at'),
  previousStatus: field.nullableString('previous_status'),
  reason: field.nullableString('reason'),
  /** As it is now; null for an event of no order (webhook.test), or of an order that is gone. */
  order: field.oneOrNull(ORDER)
}

export type EventView = ViewOf<typeof EVENT>
