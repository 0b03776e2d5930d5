import { sql } from 'drizzle-orm'
import type { Tx } from '../../src/db/client.js'
import { enqueueNotifications } from '../../src/effects/enqueue.js'
import type { NotifyPayload } from '../../src/effects/jobs.js'

/* Jobs as a test sets them up: one at a time, with the service's own set-based enqueue where it has one. */

export async function addJob (tx: Tx, task: string, payload: object,
  options: { jobKey?: string, runAt?: Date, maxAttempts?: number } = {}): Promise<void> {
  await tx.execute(sql`select graphile_worker.add_job(
    ${task}, ${JSON.stringify(payload)}::json,
    job_key := ${options.jobKey ?? null}::text,
    run_at := ${options.runAt?.toISOString() ?? null}::timestamptz,
    max_attempts := ${options.maxAttempts ?? null}::int)`)
}

/** One notification, the way the status update enqueues them (a delivery row and a notify job). */
export async function enqueueNotification (tx: Tx, payload: NotifyPayload): Promise<boolean> {
  return (await enqueueNotifications(tx, [payload])) === 1
}
