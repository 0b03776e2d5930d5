// Jobs as a test sets them up: one at a time.
import { sql } from 'drizzle-orm'
import type { Tx } from '../../src/db/client.js'

export async function addJob (tx: Tx, task: string, payload: object,
  options: { jobKey?: string, runAt?: Date, maxAttempts?: number } = {}): Promise<void> {
  await tx.execute(sql`select graphile_worker.add_job(
    ${task}, ${JSON.stringify(payload)}::json,
    job_key := ${options.jobKey ?? null}::text,
    run_at := ${options.runAt?.toISOString() ?? null}::timestamptz,
    max_attempts := ${options.maxAttempts ?? null}::int)`)
}
