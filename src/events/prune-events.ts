import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { eventOrderListLengths, eventOrderText } from './event-order-text.js'

/*
 * Retention of the sellers' event logs (EVENT_RETENTION_DAYS): what is older goes, each seller's log
 * from its first event on. An event's time is taken just before its transaction commits, so times do not
 * go back along a sequence; still, the cut is made by sequence, not by time: everything up to the newest
 * event past the retention goes. What is kept of a log is then always one unbroken run of sequences, and
 * the feed can tell a cursor older than it (a reader would otherwise skip a removed event unawares).
 */

/** Removes the events older than `retentionDays`, a slice at a time, oldest first; returns how many went. */
export async function pruneEvents (db: Db, retentionDays: number, slice = 10_000): Promise<number> {
  const cuts = await db.execute<{ seller_id: number, through: string }>(sql`
    select seller_id, max(sequence)::text as through from seller_events
    where occurred_at < now() - make_interval(days => ${retentionDays}::int) group by seller_id`)
  let pruned = 0
  for (const { seller_id: sellerId, through } of cuts) {
    // A kept small status event whose base goes is written in full first (its text is the base's with its
    // own values, event-order-text.ts): it is then no one's base, and reads the same as before.
    await db.execute(sql`update seller_events l set order_json = ${eventOrderText('l')},
        order_list_lengths = ${eventOrderListLengths('l')}, base_sequence = null, order_status = null,
        order_is_actionable = null, order_updated_at = null
      where l.seller_id = ${sellerId}::int and l.base_sequence <= ${through}::bigint and l.sequence > ${through}::bigint`)
    for (;;) {
      // Lowest sequences first: if this stops half way, what is left is still unbroken.
      const rows = await db.execute(sql`
        delete from seller_events e where e.seller_id = ${sellerId}::int and e.sequence in (
          select sequence from seller_events where seller_id = ${sellerId}::int and sequence <= ${through}::bigint
          order by sequence limit ${slice}::int)
        returning 1`)
      pruned += rows.length
      if (rows.length < slice) break
    }
  }
  return pruned
}

/** How long content_changes are kept: a base older than that is not used for a small status event. */
export const CONTENT_CHANGES_KEPT_HOURS = 24

/**
 * Removes the content_changes (record-events.ts) that no usable base needs. Each run notes the oldest
 * transaction still running (its snapshot's xmin) with the time; the horizon moves to the newest note older
 * than CONTENT_CHANGES_KEPT_HOURS, and the changes below it go: every transaction below it had finished when
 * the note was taken, so a base built since (its snapshot's xmin at or above the horizon) saw them all, and
 * an older base is no longer used. Returns how many went.
 */
export async function pruneContentChanges (db: Db, keptHours = CONTENT_CHANGES_KEPT_HOURS): Promise<number> {
  return await db.transaction(async (tx) => {
    const [row] = await tx.execute<{ horizon: string }>(sql`
      with now_mark as (select jsonb_build_object('at', now(), 'xmin', pg_snapshot_xmin(pg_current_snapshot())::text) as m),
      h as (select horizon, marks || (select m from now_mark) as marks from content_change_horizon where id for update),
      cut as (select coalesce(max((m->>'xmin')::xid8), (select horizon from h)) as xmin from h, jsonb_array_elements(h.marks) m
        where (m->>'at')::timestamptz < now() - make_interval(hours => ${keptHours}::int))
      update content_change_horizon t set
        horizon = greatest(t.horizon, (select xmin from cut)),
        marks = coalesce((select jsonb_agg(m) from h, jsonb_array_elements(h.marks) m
          where (m->>'xmin')::xid8 > greatest(t.horizon, (select xmin from cut))), '[]'::jsonb)
      where t.id
      returning horizon::text`)
    if (row === undefined) return 0
    const gone = await tx.execute(sql`delete from content_changes where xid < ${row.horizon}::xid8 returning 1`)
    return gone.length
  })
}

/**
 * The webhook endpoints' finished deliveries and attempt log go with the events they were of: kept as long,
 * removed by the same hourly job. A delivery still PENDING is never removed (its event may be gone, it is
 * then given up at its next attempt).
 */
export async function pruneWebhookLog (db: Db, retentionDays: number): Promise<number> {
  const cut = sql`now() - make_interval(days => ${retentionDays}::int)`
  const attempts = await db.execute(sql`delete from webhook_attempts where attempted_at < ${cut} returning 1`)
  const deliveries = await db.execute(sql`delete from webhook_deliveries
    where status <> 'PENDING' and finished_at < ${cut} returning 1`)
  return attempts.length + deliveries.length
}
