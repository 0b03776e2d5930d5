import type { Tx } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import { OrderErrorText } from '../errors.js'
import { applyChanges } from './apply-changes.js'
import { lockDailyDeals, lockOrders, lockSeller } from './order-locks.js'
import { decideChange, requestError, sellerState } from './plan-change.js'
import { isTargetStatus, type TargetStatus } from './state-machine.js'

export interface ChangeOrderStatusInput {
  sellerId: number
  orderId: number
  toStatus: TargetStatus
  /** Required (non-blank) for ORDER_REJECTED_BY_SELLER. */
  reason: string | null
  /** The credential that asked; null for the system. */
  credentialId: number | null
  /** The credential's store narrowing; null: every store of the seller. */
  storeIds: number[] | null
  source: 'api' | 'auto-reject'
  /**
   * Optional: change the order only if it is (under the lock) still in this status; otherwise nothing is
   * done and `{ ok: true, changed: false }` comes back. The auto-rejection task passes ORDER_PLACED: an
   * order accepted in the meantime is allowed to move to rejected, but must not be rejected by a timer.
   */
  onlyFrom?: OrderStatus
}

export type ChangeOrderStatusResult = { ok: true, changed: boolean } | { ok: false, error: string }

/**
 * Changes one order's status with all its effects on the caller's transaction: the endpoint (per order,
 * when a batch cannot be written set-based) and the auto-rejection task both come through here, so an
 * order is changed the same way whoever changes it.
 *
 * `{ ok: false }` carries the per-order error text of decisions.md. A storage failure is thrown, not
 * returned: the caller's savepoint or transaction decides what it means (the batch reports
 * `Order could not be updated`, a worker job retries).
 */
export async function changeOrderStatus (tx: Tx, input: ChangeOrderStatusInput): Promise<ChangeOrderStatusResult> {
  if (!isTargetStatus(input.toStatus)) return { ok: false, error: OrderErrorText.invalidStatus }
  const request = { orderId: input.orderId, toStatus: input.toStatus, reason: input.reason }
  const invalid = requestError(request)
  if (invalid) return { ok: false, error: invalid }
  // Seller, order, then deals: the lock order of every status change (order-locks.ts).
  const seller = input.toStatus === 'ORDER_ACCEPTED' ? await lockSeller(tx, input.sellerId) : undefined
  const orders = await lockOrders(tx, input.sellerId, [input.orderId])
  const order = orders.get(input.orderId)
  if (input.onlyFrom !== undefined && order && order.status !== input.onlyFrom) return { ok: true, changed: false }
  const decision = decideChange(request, order, seller && sellerState(seller), input.storeIds)
  if (decision.kind === 'error') return { ok: false, error: decision.error }
  if (decision.kind === 'unchanged') return { ok: true, changed: false }
  if (input.toStatus === 'ORDER_REJECTED_BY_SELLER') await lockDailyDeals(tx, [input.orderId])
  await applyChanges(tx, [decision.change], { sellerId: input.sellerId, credentialId: input.credentialId, source: input.source })
  return { ok: true, changed: true }
}
