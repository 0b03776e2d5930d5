import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'

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

/**
 * The subscriptions' finished deliveries and attempt log go with the events they were of: kept as long,
 * removed by the same hourly job. A delivery still PENDING is never removed (its event may be gone, it is
 * then given up at its next attempt).
 */
export async function pruneDeliveryLog (db: Db, retentionDays: number): Promise<number> {
  const cut = sql`now() - make_interval(days => ${retentionDays}::int)`
  const attempts = await db.execute(sql`delete from delivery_attempts where attempted_at < ${cut} returning 1`)
  const deliveries = await db.execute(sql`delete from deliveries
    where status <> 'PENDING' and finished_at < ${cut} returning 1`)
  return attempts.length + deliveries.length
}
