import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { activeTraceparent } from '../tracing/trace-context.js'
import { AUTO_REJECT_KEY_PREFIX, AUTO_REJECT_MAX_ATTEMPTS, TASKS } from './jobs.js'

/*
 * Effects enqueued on the caller's transaction, set-based: one statement however many changes a batch
 * has. A job exists exactly when the change that caused it committed.
 */

/**
 * The enqueuing span's traceparent as more arguments of a json_build_object that builds a job's payload
 * (`json_build_object('refundId', r.id ${jobTraceArguments()})`); nothing when no span is active, so a
 * payload keeps its shape with tracing off.
 */
export function jobTraceArguments (): SQL {
  const traceparent = activeTraceparent()
  return traceparent === undefined ? sql`` : sql`, 'traceparent', ${traceparent}::text`
}

/**
 * graphile_worker.remove_job for many keys in one statement (e.g. the auto-rejections of orders the
 * seller acted on), with its semantics: a job not running (or
 * stuck for over 4 hours) is deleted; a running one keeps going but loses its key and any retry.
 *
 * Why not call remove_job per key: PL/pgSQL caches its plans per connection, and a plan made while the
 * queue was empty (and analyzed) is a sequential scan, kept as the queue grows. Measured: 667 removals
 * took 11 ms on an empty queue and 4 s with 25,000 jobs queued. This statement is planned afresh with
 * its keys and always uses the key index. It reads graphile-worker's own table (pinned at 0.17).
 */
export async function removeJobs (tx: Tx, jobKeys: string[]): Promise<void> {
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

/** Which orders to schedule: these, or every order from an id on (a load). */
export type OrdersToSchedule = { ids: number[] } | { fromId: number }

/**
 * The auto-rejection jobs of placed orders whose seller has auto-rejection on (others are skipped), one
 * per order, keyed by order (a second call replaces the job), in one add_jobs call, on the caller's
 * transaction: what order placement does for its order, and the seed for every order it loads. Due
 * `afterMs` after placement; loaded orders may be backdated by weeks, so with `clock: 'from-now'` their
 * clock starts when they are loaded instead, and a fresh demo is not rejected wholesale at its first
 * start. `afterMs` 0 schedules none. Returns how many were scheduled.
 */
export async function scheduleAutoRejections (tx: Tx, orders: OrdersToSchedule, afterMs: number, clock: 'from-placement' | 'from-now' = 'from-placement'): Promise<number> {
  if (afterMs <= 0) return 0
  const which = 'ids' in orders ? sql`o.id = any(${sql.param(orders.ids)}::bigint[])` : sql`o.id >= ${orders.fromId}::bigint`
  const start = clock === 'from-now' ? sql`greatest(o.created_at, now())` : sql`o.created_at`
  const [row] = await tx.execute<{ scheduled: number }>(sql`
    select count(*)::int as scheduled from graphile_worker.add_jobs(array(
      select row(${TASKS.autoReject}::text, json_build_object('orderId', o.id ${jobTraceArguments()}), null,
        ${start} + ${afterMs}::float8 * interval '1 millisecond',
        ${AUTO_REJECT_MAX_ATTEMPTS}::int, ${AUTO_REJECT_KEY_PREFIX}::text || o.id, null, null)::graphile_worker.job_spec
      from orders o join sellers s on s.id = o.seller_id
      where ${which} and o.status = 'ORDER_PLACED' and not o.is_deleted and s.auto_reject_enabled))`)
  return row.scheduled
}
