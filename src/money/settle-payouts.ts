import type { Db } from '../db/client.js'
import type { IdempotencyRequest } from '../idempotency/idempotency-key.js'
import { settle, type SettleTarget } from './settle.js'
import { SettleRowErrors as E } from './texts.js'

/* POST /v2/platform/payouts/settle: finance paid a SCHEDULED payout; it becomes PAID. */

export const PAYOUT_SETTLE: SettleTarget = {
  table: 'payout_schedules',
  statusType: 'payout_status',
  from: 'SCHEDULED',
  to: 'PAID',
  timeColumn: 'paid_at',
  notFound: E.payoutNotFound,
  wrongStatus: E.payoutNotScheduled,
  noun: 'Payout'
}

export const settlePayouts = (
  db: Db, rows: unknown[], options: { idempotency?: IdempotencyRequest, now?: Date } = {}
) =>
  settle(db, PAYOUT_SETTLE, rows, options)
