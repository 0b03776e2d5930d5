import { sql } from 'drizzle-orm'
import type { Db, Tx } from '../db/client.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { refused, UNCHANGED, UPDATED, type CheckedRow, type RowOutcome } from '../platform/batch.js'
import { runPlatformBatch } from '../platform/run-batch.js'
import type { PlatformBatchData } from '../platform/schemas.js'
import type { ItemError } from '../item-error.js'
import { checkSettleRows, type SettleRow } from './settle-row.js'
import { SettleRowErrors as E } from './texts.js'

/*
 * Settling what finance paid (a refund MANUAL → SUCCEEDED, a payout SCHEDULED → PAID), the rows checked
 * first, then in one transaction under the Idempotency-Key (platform/run-batch.ts): the rows named are
 * locked in id order (two clerks settling overlapping batches wait for each other and never deadlock),
 * each is decided on what is stored once locked, and the ones to settle are written by one statement. A
 * clerk who waited reads the row the other one settled: the same reference is `unchanged`, another an
 * error; so each row settles exactly once.
 */

export interface SettleTarget {
  /** The table, and its status enum type. */
  table: 'refunds' | 'payout_schedules'
  statusType: 'refund_status' | 'payout_status'
  /** The status finance settles from, and the one it moves to. */
  from: string
  to: string
  /** The column the settled time is stored in. */
  timeColumn: 'settled_at' | 'paid_at'
  notFound: (id: string) => ItemError
  wrongStatus: (id: string, status: string) => ItemError
  /** How a row is named in an error ("Refund 12"). */
  noun: string
}

type Stored = { id: string, status: string, reference: string | null }

async function apply (
  tx: Tx, target: SettleTarget, valid: Array<CheckedRow<SettleRow>>
): Promise<Map<number, RowOutcome>> {
  const ids = valid.map(({ row }) => Number(row.id))
  const stored = new Map((await tx.execute<Stored>(sql`
    select id::text as "id", status::text as "status", reference as "reference"
    from ${sql.identifier(target.table)} where id = any(${sql.param(ids)}::int[]) order by id for update`)).map((s) => [s.id, s]))
  const outcomes = new Map<number, RowOutcome>()
  const settle: SettleRow[] = []
  for (const { index, row } of valid) {
    const now = stored.get(row.id)
    if (now === undefined) {
      outcomes.set(index, refused(row.id, target.notFound(row.id)))
    } else if (now.status === target.to) {
      outcomes.set(index, now.reference === row.reference
        ? UNCHANGED
        : refused(row.id, E.alreadySettled(`${target.noun} ${row.id}`, now.reference)))
    } else if (now.status !== target.from) {
      outcomes.set(index, refused(row.id, target.wrongStatus(row.id, now.status)))
    } else {
      settle.push(row)
      outcomes.set(index, UPDATED)
    }
  }
  if (settle.length > 0) {
    await tx.execute(sql`
      update ${sql.identifier(target.table)} t
      set status = ${target.to}::${sql.raw(target.statusType)}, reference = s.reference,
        ${sql.identifier(target.timeColumn)} = s.at::timestamptz, updated_at = now()
      from unnest(${sql.param(settle.map((r) => Number(r.id)))}::int[], ${sql.param(settle.map((r) => r.reference))}::text[],
        ${sql.param(settle.map((r) => r.settledAt))}::text[]) as s(id, reference, at)
      where t.id = s.id and t.status = ${target.from}::${sql.raw(target.statusType)}`)
  }
  return outcomes
}

export async function settle (
  db: Db, target: SettleTarget, rows: unknown[], options: { idempotency?: IdempotencyRequest, now?: Date } = {}
): Promise<Replayable<PlatformBatchData>> {
  const checked = checkSettleRows(rows, options.now ?? new Date())
  return runPlatformBatch(db, checked, options.idempotency, (tx, valid) => apply(tx, target, valid))
}
