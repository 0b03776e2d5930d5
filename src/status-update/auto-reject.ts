import { and, eq } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { orders } from '../db/schema.js'
import { recordingEvents } from '../events/record-events.js'
import { changeOrderStatus } from './change-status.js'
import { AUTO_REJECT_REASON } from './texts.js'

/*
 * The auto-rejection of an order its seller did not act on in time (the `auto-reject` job): rejected
 * exactly as a seller's rejection would be (refund, deal quantity, notifications), by the system.
 */

export type AutoRejection = 'rejected' | 'already-moved'

/** `change` is the one-order change (a test passes a wrapper that races the seller against it). */
export async function autoRejectOrder (db: Db, orderId: number, change = changeOrderStatus): Promise<AutoRejection> {
  const [order] = await db.select({ sellerId: orders.sellerId }).from(orders)
    .where(and(eq(orders.id, orderId), eq(orders.status, 'ORDER_PLACED'), eq(orders.isDeleted, false)))
  if (!order) return 'already-moved'
  // onlyFrom: the seller may accept between the read above and the lock; an accepted order may move to
  // rejected, but never by this timer.
  // Its order.rejected event (with the reason) is recorded last, in the same transaction.
  const result = await db.transaction((tx) => recordingEvents(tx, (events) => change(tx, {
    sellerId: order.sellerId,
    credentialId: null,
    storeIds: null,
    source: 'auto-reject',
    orderId,
    toStatus: 'ORDER_REJECTED_BY_SELLER',
    reason: AUTO_REJECT_REASON,
    onlyFrom: 'ORDER_PLACED'
  }, events)))
  if (!result.ok) throw new Error(`auto-rejection of order ${orderId} failed: ${result.error.text}`)
  return result.changed ? 'rejected' : 'already-moved'
}
