import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { MAX_PENDING_DELIVERIES } from './texts.js'

/*
 * Moves the sellers' events into their endpoints' delivery queues, after commit and outside the writers'
 * transactions (a status change never waits on it). Each endpoint keeps a cursor, the last sequence queued
 * for it. A seller's sequences become visible only in commit order (events/record-events.ts), so "every
 * event after the cursor, as this snapshot shows them" is always an unbroken run: moving the cursor to its
 * end in the same statement as the queueing misses nothing and queues nothing twice. An endpoint is taken
 * FOR NO KEY UPDATE SKIP LOCKED: two deliverers never queue for the same endpoint at once, and the key-share
 * lock every attempt row's foreign key takes on the endpoint does not make a dispatch skip it (FOR UPDATE
 * would, and the events that woke it would wait for the next sweep).
 *
 * An endpoint with MAX_PENDING_DELIVERIES pending (one that hangs or fails while its seller keeps
 * recording) is queued no further: its cursor stays where it is and the events stay in the log, so it
 * resumes, in order, as its queue drains (the deliverer dispatches again when a delivery of a full endpoint
 * is finished). Its queue, not the log, is what is bounded; events the log no longer keeps by then are lost
 * to it as to a disabled endpoint.
 */

/** At most this many events move per endpoint and statement (a long backlog goes in slices). */
const SLICE = 5000

/**
 * Queues what is new for every enabled endpoint; returns how many deliveries were queued, how many
 * endpoints were being dispatched by another deliverer meanwhile (its snapshot may predate the events
 * that woke this one: the caller looks again shortly rather than wait for the next notification), and
 * the endpoints left at their cap with events still behind (or possibly so).
 */
export async function dispatchEvents (db: Db): Promise<{ queued: number, busy: number, full: string[] }> {
  const behind = await db.execute<{ id: string }>(sql`
    select w.id::text as id from webhook_endpoints w join seller_event_counters c on c.seller_id = w.seller_id
    where w.status = 'ENABLED' and w.last_sequence < c.last_sequence`)
  let queued = 0
  let busy = 0
  const full: string[] = []
  for (const { id } of behind) {
    for (;;) {
      const [row] = await db.execute<{ read: number, queued: number, locked: number, room: number }>(sql`
        with ep as materialized (
          select id, seller_id, types, store_ids, last_sequence from webhook_endpoints
          where id = ${id}::uuid and status = 'ENABLED' for no key update skip locked
        ), room as materialized (
          select greatest(0, least(${SLICE}::int, ${MAX_PENDING_DELIVERIES}::int - (select count(*)::int
            from ep, webhook_deliveries d where d.endpoint_id = ep.id and d.status = 'PENDING'))) as n
        ), ev as materialized (
          select e.sequence, e.type, e.order_id, e.store_id from ep, seller_events e
          where e.seller_id = ep.seller_id and e.sequence > ep.last_sequence order by e.sequence limit (select n from room)
        ), ins as (
          insert into webhook_deliveries (endpoint_id, seller_id, sequence, type, order_id)
          select ep.id, ep.seller_id, ev.sequence, ev.type, ev.order_id from ep, ev
          -- A test event is its endpoint's alone (queued when it is sent); the rest as the endpoint's types say,
          -- and of its stores' orders only when it is narrowed (store_ids), as the feed shows a narrowed reader.
          where ev.type <> 'webhook.test' and (ep.types is null or ev.type = any(ep.types))
            and (ep.store_ids is null or ev.store_id is null or ev.store_id = any(ep.store_ids))
          order by ev.sequence
          returning 1
        ), moved as (
          update webhook_endpoints w set last_sequence = (select max(sequence) from ev)
          from ep where w.id = ep.id and exists (select 1 from ev)
          returning 1
        ) select (select count(*)::int from ev) as read, (select count(*)::int from ins) as queued,
          (select count(*)::int from ep) as locked, (select n from room) as room`)
      queued += row.queued
      if (row.locked === 0) busy++
      if (row.read < SLICE) {
        if (row.locked > 0 && row.read === row.room) full.push(id)
        break
      }
    }
  }
  return { queued, busy, full }
}
