import { sql } from 'drizzle-orm'
import type { DbOrTx } from '../db/client.js'
import { TASKS, type NotifyPayload } from './jobs.js'

/** Same as the notify job's attempts in enqueueNotification (jobs.ts). */
const NOTIFY_MAX_ATTEMPTS = 10

/**
 * enqueueNotification for many events in one statement, with the same contract: one
 * notification_deliveries row and one `notify` job per new event id, on the caller's transaction; an
 * event id already recorded gets neither. Returns how many events were new.
 */
export async function enqueueNotifications (tx: DbOrTx, payloads: NotifyPayload[]): Promise<number> {
  if (payloads.length === 0) return 0
  const events = payloads.map((p) => ({
    event_id: p.eventId, order_id: p.orderId, seller_id: p.sellerId, channel: p.channel, event_type: p.eventType, payload: p
  }))
  const rows = await tx.execute<{ enqueued: string }>(sql`
    with event as (
      select * from json_to_recordset(${JSON.stringify(events)}::json)
        as e(event_id text, order_id bigint, seller_id int, channel text, event_type text, payload json)
    ), recorded as (
      insert into notification_deliveries (event_id, order_id, seller_id, channel, event_type)
      select event_id, order_id, seller_id, channel, event_type from event
      on conflict (event_id) do nothing
      returning event_id
    ), specs as (
      select array_agg(row(${TASKS.notify}::text, event.payload, null, null, ${NOTIFY_MAX_ATTEMPTS}::int, null, null, null)::graphile_worker.job_spec) as jobs
      from event join recorded using (event_id)
      having count(*) > 0
    )
    select count(*) as enqueued from specs, lateral graphile_worker.add_jobs(specs.jobs)`)
  return Number(rows[0]?.enqueued ?? 0)
}
