import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { MAX_PENDING_DELIVERIES } from '../webhooks/texts.js'

/*
 * Moves the sellers' events into their subscriptions' delivery queues, after commit and outside the
 * writers' transactions (a status change never waits on it, and pays nothing per subscriber). Each
 * subscription keeps a cursor per seller (subscription_cursors), the last sequence queued for it: one row
 * for a seller's own endpoint, one per seller for the operator's endpoint and the notification channels. A
 * seller's sequences become visible only in commit order (events/record-events.ts), so "every event after
 * the cursor, as this snapshot shows them" is always an unbroken run: moving the cursor to its end in the
 * same statement as the queueing misses nothing and queues nothing twice. A subscription is taken FOR NO
 * KEY UPDATE SKIP LOCKED: two deliverers never queue for the same one at once, and the key-share lock every
 * delivery row's foreign key takes on it does not make a dispatch skip it (FOR UPDATE would, and the events
 * that woke it would wait for the next sweep).
 *
 * A subscription with MAX_PENDING_DELIVERIES pending (an endpoint that hangs or fails while its sellers keep
 * recording) is queued no further: its cursors stay where they are and the events stay in the log, so it
 * resumes, in order, as its queue drains (the deliverer dispatches again when a delivery of a full
 * subscription is finished). Its queue, not the log, is what is bounded; events the log no longer keeps by
 * then are lost to it as to a disabled endpoint.
 */

/** At most this many events move per subscription and statement (a long backlog goes in slices). */
const SLICE = 5000

/**
 * Queues what is new for every enabled subscription; returns how many deliveries were queued, how many
 * subscriptions were being dispatched by another deliverer meanwhile (its snapshot may predate the events
 * that woke this one: the caller looks again shortly rather than wait for the next notification), and the
 * subscriptions left at their cap with events still behind (or possibly so).
 */
export async function dispatchEvents (db: Db): Promise<{ queued: number, busy: number, full: string[] }> {
  const behind = await db.execute<{ id: string }>(sql`
    select w.id::text as id from subscriptions w
    where w.status = 'ENABLED' and exists (
      select 1 from seller_event_counters c
      left join subscription_cursors k on k.subscription_id = w.id and k.seller_id = c.seller_id
      where (w.seller_id is null or c.seller_id = w.seller_id) and c.last_sequence > coalesce(k.last_sequence, 0))`)
  let queued = 0
  let busy = 0
  const full: string[] = []
  for (const { id } of behind) {
    for (;;) {
      // The lock first, in a statement of its own: the queueing statement's snapshot is taken after it, so it
      // sees the cursors a dispatch that held the lock until a moment ago committed. Taken in the same
      // statement, the snapshot could predate that commit while the lock came after it, and the events
      // that dispatch had just queued were queued again (two deliverers, or a sweep, at the same moment).
      const [row] = await db.transaction(async (tx) => {
        const locked = await tx.execute(sql`select 1 from subscriptions
          where id = ${id}::uuid and status = 'ENABLED' for no key update skip locked`)
        if (locked.length === 0) return [{ read: 0, queued: 0, locked: 0, room: 0 }]
        return await tx.execute<{ read: number, queued: number, locked: number, room: number }>(sql`
        with sub as materialized (
          select id, seller_id, kind, types, store_ids from subscriptions where id = ${id}::uuid
        ), room as materialized (
          select greatest(0, least(${SLICE}::int, ${MAX_PENDING_DELIVERIES}::int - (select count(*)::int
            from sub, deliveries d where d.subscription_id = sub.id and d.status = 'PENDING'))) as n
        ), behind as materialized (
          select c.seller_id, coalesce(k.last_sequence, 0) as after from sub
          join seller_event_counters c on sub.seller_id is null or c.seller_id = sub.seller_id
          left join subscription_cursors k on k.subscription_id = sub.id and k.seller_id = c.seller_id
          where c.last_sequence > coalesce(k.last_sequence, 0)
        ), ev as materialized (
          -- Each seller's next events in sequence order, taken round robin across sellers up to the room:
          -- what is taken of a seller is always the run right after its cursor.
          select e.* from (
            select e.seller_id, e.sequence, e.type, e.order_id, e.store_id,
              row_number() over (partition by e.seller_id order by e.sequence) as rank
            from behind b cross join lateral (
              select e.seller_id, e.sequence, e.type, e.order_id, e.store_id from seller_events e
              where e.seller_id = b.seller_id and e.sequence > b.after order by e.sequence limit (select n from room)) e
          ) e order by e.rank, e.seller_id limit (select n from room)
        ), ins as (
          insert into deliveries (subscription_id, seller_id, sequence, type, order_id)
          select sub.id, ev.seller_id, ev.sequence, ev.type, ev.order_id from sub, ev
          -- A test event is its endpoint's alone (queued when it is sent); the rest as the subscription's types
          -- say, and of its stores' orders only when it is narrowed (store_ids), as the feed shows a narrowed reader.
          where ev.type <> 'webhook.test' and (sub.types is null or ev.type = any(sub.types))
            and (sub.store_ids is null or ev.store_id is null or ev.store_id = any(sub.store_ids))
          order by ev.seller_id, ev.sequence
          returning 1
        ), moved as (
          insert into subscription_cursors as k (subscription_id, seller_id, last_sequence)
          select sub.id, ev.seller_id, max(ev.sequence) from sub, ev group by sub.id, ev.seller_id
          on conflict (subscription_id, seller_id) do update set last_sequence = excluded.last_sequence
          returning 1
        ) select (select count(*)::int from ev) as read, (select count(*)::int from ins) as queued,
          (select count(*)::int from sub) as locked, (select n from room) as room`)
      })
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

/**
 * Starts a subscription for every seller from the log's end: its cursors at each seller's last sequence, so
 * it hears what is recorded from now on (a seller with no event yet has no counter, and is heard from its
 * first). On the caller's transaction.
 */
export async function startCursorsAtLogEnd (db: Db, subscriptionId: string): Promise<void> {
  await db.execute(sql`
    insert into subscription_cursors as k (subscription_id, seller_id, last_sequence)
    select ${subscriptionId}::uuid, c.seller_id, c.last_sequence from seller_event_counters c
    on conflict (subscription_id, seller_id) do update set last_sequence = greatest(k.last_sequence, excluded.last_sequence)`)
}
