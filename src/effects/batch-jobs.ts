import { sql } from 'drizzle-orm'
import type { DbOrTx } from '../db/client.js'
import { TASKS, type NotifyPayload } from './jobs.js'

/*
 * Set-based versions of the job helpers in jobs.ts, for writing a whole batch of changes with one
 * statement each. Same contracts, same transaction rules.
 */

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

/**
 * graphile_worker.remove_job for many keys in one statement, with its semantics: a job not running (or
 * stuck for over 4 hours) is deleted; a running one keeps going but loses its key and any retry.
 *
 * Why not call remove_job per key: PL/pgSQL caches its plans per connection, and a plan made while the
 * queue was empty (and analyzed) is a sequential scan, kept as the queue grows. Measured: 667 removals
 * took 11 ms on an empty queue and 4 s with 25,000 jobs queued. This statement is planned afresh with
 * its keys and always uses the key index. It reads graphile-worker's own table (pinned at 0.17).
 */
export async function removeJobs (tx: DbOrTx, jobKeys: string[]): Promise<void> {
  if (jobKeys.length === 0) return
  const keys = sql`array(select json_array_elements_text(${JSON.stringify(jobKeys)}::json))`
  await tx.execute(sql`
    with removed as (
      delete from graphile_worker._private_jobs
      where key = any(${keys}) and (locked_at is null or locked_at < now() - interval '4 hours')
      returning key
    )
    update graphile_worker._private_jobs set key = null, attempts = max_attempts, updated_at = now()
    where key = any(${keys}) and key not in (select key from removed)`)
}
