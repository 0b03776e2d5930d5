import { sql } from 'drizzle-orm'
import type postgres from 'postgres'
import type { DbOrTx } from '../db/client.js'
import { autoRejectJobKey, TASKS } from './jobs.js'

/*
 * An order placed for a seller with auto-rejection on gets an `auto-reject` job, keyed by order
 * (autoRejectJobKey), due AUTO_REJECT_AFTER_MS after placement. Accepting or rejecting the order removes
 * the job (status update); a job that finds the order already moved does nothing.
 */

/** The job key prefix, for set-based SQL that builds keys itself: `auto-reject:<orderId>`. */
export const AUTO_REJECT_KEY_PREFIX = autoRejectJobKey(0).replace(/0$/, '')
export const AUTO_REJECT_MAX_ATTEMPTS = 10

/**
 * Schedules the auto-rejection of one order, on the transaction that places it: when the order is still
 * placed, not deleted, and its seller has auto-rejection on. `afterMs` 0 turns auto-rejection off.
 * Returns whether a job was scheduled.
 */
export async function scheduleAutoRejection (tx: DbOrTx, orderId: number, afterMs: number): Promise<boolean> {
  if (afterMs <= 0) return false
  const rows = await tx.execute(sql`
    select (graphile_worker.add_job(${TASKS.autoReject}::text, json_build_object('orderId', o.id),
      run_at := o.created_at + ${afterMs}::float8 * interval '1 millisecond',
      job_key := ${AUTO_REJECT_KEY_PREFIX}::text || o.id,
      max_attempts := ${AUTO_REJECT_MAX_ATTEMPTS}::int)).id as job_id
    from orders o join sellers s on s.id = o.seller_id
    where o.id = ${orderId} and o.status = 'ORDER_PLACED' and not o.is_deleted and s.auto_reject_enabled`)
  return rows.length > 0
}

/**
 * The bulk form for loaded data (the seed): one job per placed order from `fromOrderId` on whose seller
 * has auto-rejection on, in a single add_jobs call. Loaded orders may be backdated by weeks; their clock
 * starts when they are loaded (run_at = max(created_at, now) + afterMs), so a fresh demo is not rejected
 * wholesale at its first start.
 */
export async function scheduleLoadedAutoRejections (tx: postgres.Sql | postgres.TransactionSql, fromOrderId: number, afterMs: number): Promise<number> {
  if (afterMs <= 0) return 0
  const [row] = await tx`
    select count(*)::int as scheduled from graphile_worker.add_jobs(array(
      select row(${TASKS.autoReject}::text, json_build_object('orderId', o.id), null,
        greatest(o.created_at, now()) + ${afterMs}::float8 * interval '1 millisecond',
        ${AUTO_REJECT_MAX_ATTEMPTS}::int, ${AUTO_REJECT_KEY_PREFIX}::text || o.id, null, null)::graphile_worker.job_spec
      from orders o join sellers s on s.id = o.seller_id
      where o.id >= ${fromOrderId} and o.status = 'ORDER_PLACED' and not o.is_deleted and s.auto_reject_enabled))`
  return row.scheduled as number
}
