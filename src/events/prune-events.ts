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
