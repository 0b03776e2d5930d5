import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'

/*
 * Moves the sellers' events into their endpoints' delivery queues, after commit and outside the writers'
 * transactions (a status change never waits on it). Each endpoint keeps a cursor, the last sequence queued
 * for it. A seller's sequences become visible only in commit order (events/record-events.ts), so "every
 * event after the cursor, as this snapshot shows them" is always an unbroken run: moving the cursor to its
 * end in the same statement as the queueing misses nothing and queues nothing twice. An endpoint is taken
 * FOR NO KEY UPDATE SKIP LOCKED: two deliverers never queue for the same endpoint at once, and the key-share
 * lock every attempt row's foreign key takes on the endpoint does not make a dispatch skip it (FOR UPDATE
 * would, and the events that woke it would wait for the next sweep).
 */

/** At most this many events move per endpoint and statement (a long backlog goes in slices). */
const SLICE = 5000

/**
 * Queues what is new for every enabled endpoint; returns how many deliveries were queued, and how many
 * endpoints were being dispatched by another deliverer meanwhile (its snapshot may predate the events
 * that woke this one: the caller looks again shortly rather than wait for the next notification).
 */
export async function dispatchEvents (db: Db): Promise<{ queued: number, busy: number }> {
  const behind = await db.execute<{ id: string }>(sql`
    select w.id::text as id from webhook_endpoints w join seller_event_counters c on c.seller_id = w.seller_id
    where w.status = 'ENABLED' and w.last_sequence < c.last_sequence`)
  let queued = 0
  let busy = 0
  for (const { id } of behind) {
    for (;;) {
      const [row] = await db.execute<{ read: number, queued: number, locked: number }>(sql`
        with ep as materialized (
          select id, seller_id, types, store_ids, last_sequence from webhook_endpoints
          where id = ${id}::uuid and status = 'ENABLED' for no key update skip locked
        ), ev as materialized (
          select e.sequence, e.type, e.order_id, e.store_id from ep, seller_events e
          where e.seller_id = ep.seller_id and e.sequence > ep.last_sequence order by e.sequence limit ${SLICE}::int
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
          (select count(*)::int from ep) as locked`)
      queued += row.queued
      if (row.locked === 0) busy++
      if (row.read < SLICE) break
    }
  }
  return { queued, busy }
}
