import type { Db } from '../db/client.js'
import type { IdempotencyRequest } from '../idempotency/idempotency-key.js'
import { settle, type SettleTarget } from './settle.js'
import { SettleRowErrors as E } from './texts.js'

/* POST /v2/platform/refunds/settle: finance paid a MANUAL refund out; it becomes SUCCEEDED. */

export const REFUND_SETTLE: SettleTarget = {
  table: 'refunds',
  statusType: 'refund_status',
  from: 'MANUAL',
  to: 'SUCCEEDED',
  timeColumn: 'settled_at',
  notFound: E.refundNotFound,
  wrongStatus: E.refundNotManual,
  noun: 'Refund'
}

export const settleRefunds = (
  db: Db, rows: unknown[], options: { idempotency?: IdempotencyRequest, now?: Date } = {}
) =>
  settle(db, REFUND_SETTLE, rows, options)
