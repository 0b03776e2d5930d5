import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'

/*
 * How far the subscriptions (sellers' endpoints, the operator's, the notification channels) are behind, for
 * the operator's metrics (plugins/metrics.ts): one statement read at each scrape. Events wait twice on their
 * way out: first to be queued for a subscription (dispatch.ts moves its cursors), then as a delivery until an
 * attempt succeeds or is given up. A deliverer that is down or cannot keep up shows in both; a seller's
 * endpoint that keeps failing shows in `scheduled` (retries waiting) until it is disabled.
 */

export interface DeliveryBacklog {
  /** The sellers' endpoints by status. */
  endpoints: { ENABLED: number, DISABLED: number }
  /** Events after the cursors of enabled subscriptions: not yet queued (the types filter not applied). */
  eventsBehind: number
  /** Deliveries of enabled subscriptions still PENDING: due now, or scheduled later (a retry, or in flight). */
  due: number
  scheduled: number
  /** How long the oldest due delivery has been due, in seconds (0 when none is). */
  oldestDueSeconds: number
}

export async function readDeliveryBacklog (db: Db): Promise<DeliveryBacklog> {
  const [row] = await db.execute<{
    enabled: number, disabled: number, behind: string, due: number, scheduled: number, oldest: number
  }>(sql`
    select e.enabled, e.disabled,
      (select coalesce(sum(greatest(c.last_sequence - coalesce(k.last_sequence, 0), 0)), 0)::text
        from subscriptions w join seller_event_counters c on w.seller_id is null or c.seller_id = w.seller_id
        left join subscription_cursors k on k.subscription_id = w.id and k.seller_id = c.seller_id
        where w.status = 'ENABLED') as behind,
      d.due, d.scheduled, d.oldest
    from (
      select count(*) filter (where status = 'ENABLED')::int as enabled,
        count(*) filter (where status = 'DISABLED')::int as disabled
      from subscriptions where kind = 'seller-webhook'
    ) e, (
      select count(*) filter (where d.due)::int as due, count(*) filter (where not d.due)::int as scheduled,
        coalesce(extract(epoch from now() - min(d.next_attempt_at) filter (where d.due)), 0)::float8 as oldest
      from (
        -- In flight (leased, deliveries.ts) is not due: it counts as scheduled, as a retry waiting does.
        select d.next_attempt_at, d.next_attempt_at <= now() and (d.leased_until is null or d.leased_until <= now()) as due
        from deliveries d join subscriptions w on w.id = d.subscription_id
        where d.status = 'PENDING' and w.status = 'ENABLED'
      ) d
    ) d`)
  return {
    endpoints: { ENABLED: row.enabled, DISABLED: row.disabled },
    eventsBehind: Number(row.behind),
    due: row.due,
    scheduled: row.scheduled,
    oldestDueSeconds: row.oldest
  }
}
