import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { scalarTexts } from '../db/read-model.js'
import { prepared } from '../db/statements.js'
import { EVENT } from './event-model.js'
import { EVENT_ORDER_TEXT, eventOrderJoin, eventOrdersCtes } from './event-order.js'

/*
 * What a subscriber receives: the event as issue "Events I" defines it, `{id, type, sequence, timestamp,
 * data: {order, previousStatus, reason}}`, written by PostgreSQL from the event's row with the feed's own
 * field texts (event-model.ts) and its order as it is now, built by the read model as the feed builds it
 * (event-order.ts): the body a receiver gets is, field for field, the event the feed hands out at the
 * moment it is sent. A batch of deliveries reads all its bodies in one statement.
 */

const E = scalarTexts(EVENT, 'e')

/** The events to read, as one JSON parameter: one statement text whatever their number. */
const BODIES = (events: string) => sql`
  with wanted as materialized (
    select distinct w.seller_id, w.sequence from json_to_recordset(${events}::json) as w(seller_id int, sequence bigint)
  ), listed as materialized (
    select e.* from wanted w join seller_events e on e.seller_id = w.seller_id and e.sequence = w.sequence
  ) ${eventOrdersCtes('listed', { lengths: false })}
  select e.seller_id || ':' || e.sequence as key,
    concat('{"id":', ${E.id}, ',"type":', ${E.type}, ',"sequence":', ${E.sequence}, ',"timestamp":', ${E.timestamp},
      ',"data":{"order":', ${EVENT_ORDER_TEXT}, ',"previousStatus":', ${E.previousStatus}, ',"reason":', ${E.reason},
      '}}') as body
  from listed e ${eventOrderJoin('e')}`

/**
 * The bodies of these events as JSON text, by `${sellerId}:${sequence}`, in one statement. An event the log
 * no longer keeps (retention) is absent from the map.
 */
export async function readEventBodies (
  tx: Tx, events: ReadonlyArray<{ sellerId: number, sequence: string | number }>
): Promise<Map<string, string>> {
  if (events.length === 0) return new Map()
  const wanted = JSON.stringify(events.map((e) => ({ seller_id: e.sellerId, sequence: String(e.sequence) })))
  const rows = await prepared<{ key: string, body: string }>(tx, BODIES(wanted))
  return new Map(rows.map((r) => [r.key, r.body]))
}

/** An event's id (the feed's `id`, and `webhook-id` on every attempt): `evt_<seller>_<sequence>`. */
export function eventId (sellerId: number, sequence: number | string): string {
  return `evt_${sellerId}_${sequence}`
}

/** The sequence of one of this seller's event ids, or null when it is not one. */
export function sequenceOfEventId (sellerId: number, id: string): string | null {
  const m = /^evt_(\d{1,10})_([1-9]\d{0,17})$/.exec(id)
  return m !== null && Number(m[1]) === sellerId ? m[2] : null
}
