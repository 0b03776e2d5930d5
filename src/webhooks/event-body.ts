import { sql, type SQL } from 'drizzle-orm'
import { scalarTexts } from '../db/read-model.js'
import { EVENT } from '../events/event-model.js'
import { eventOrderText } from '../events/event-order-text.js'

/*
 * What an endpoint receives: the event as issue "Events I" defines it, `{id, type, sequence, timestamp,
 * data: {order, previousStatus, reason}}`, written by PostgreSQL from the event's row with the feed's own
 * field texts (events/event-model.ts) and the order's stored JSON spliced in as the feed reads it
 * (events/event-order-text.ts): the body a receiver gets is, field for field, the event the feed hands out.
 */

const E = scalarTexts(EVENT, 'e')

/** The body of the event in row `e` of seller_events, as JSON text. */
export const EVENT_BODY_TEXT: SQL = sql`concat('{"id":', ${E.id}, ',"type":', ${E.type}, ',"sequence":', ${E.sequence},
  ',"timestamp":', ${E.timestamp}, ',"data":{"order":', ${eventOrderText('e')},
  ',"previousStatus":', ${E.previousStatus}, ',"reason":', ${E.reason}, '}}')`

/** An event's id (the feed's `id`, and `webhook-id` on every attempt): `evt_<seller>_<sequence>`. */
export function eventId (sellerId: number, sequence: number | string): string {
  return `evt_${sellerId}_${sequence}`
}

/** The sequence of one of this seller's event ids, or null when it is not one. */
export function sequenceOfEventId (sellerId: number, id: string): string | null {
  const m = /^evt_(\d{1,10})_([1-9]\d{0,17})$/.exec(id)
  return m !== null && Number(m[1]) === sellerId ? m[2] : null
}
