import type { Tx } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import type { PendingEvents } from '../events/record-events.js'
import type { ItemError } from '../item-error.js'
import { changeOrderStatuses } from './change-statuses.js'
import { requestError, type Actor } from './plan-change.js'
import type { TargetStatus } from './state-machine.js'

export interface ChangeOrderStatusInput extends Actor {
  orderId: number
  toStatus: TargetStatus
  /** Required (non-blank) for ORDER_REJECTED_BY_SELLER. */
  reason: string | null
  /** See ChangeOptions.onlyFrom (change-statuses.ts). */
  onlyFrom?: OrderStatus
}

export type ChangeOrderStatusResult = { ok: true, changed: boolean } | { ok: false, error: ItemError }

/**
 * One order's change on the caller's transaction: the set-based change of a batch of one. `{ ok: false }`
 * carries the per-order error of docs/api/status-updates.md (its code and text). A storage failure is
 * thrown, not returned: the caller's transaction decides what it means (a worker job retries). The change's
 * event goes to `events`, for the caller to record at the end of its transaction.
 */
export async function changeOrderStatus (
  tx: Tx, input: ChangeOrderStatusInput, events: PendingEvents
): Promise<ChangeOrderStatusResult> {
  const { orderId, toStatus, reason, onlyFrom, ...actor } = input
  const request = { orderId, toStatus, reason }
  const invalid = requestError(request)
  if (invalid) return { ok: false, error: invalid }
  const [outcome] = await changeOrderStatuses(tx, actor, [request], { onlyFrom, events })
  switch (outcome.kind) {
    case 'changed': return { ok: true, changed: true }
    case 'unchanged': return { ok: true, changed: false }
    case 'error': return { ok: false, error: outcome.error }
    case 'failed': throw outcome.cause
  }
}
