import type { Task } from 'graphile-worker'
import type { Logger } from 'pino'
import type { Database, Tx } from '../../db/client.js'
import type { ChangeOrderStatusInput, ChangeOrderStatusResult } from '../../status-update/change-status.js'
import type { AutoRejectPayload } from '../jobs.js'

export const AUTO_REJECT_REASON = 'Not accepted in time'

/** The status update's own code path (src/status-update/change-status.ts), so an auto-rejection has every reject effect. */
export type ChangeOrderStatus = (tx: Tx, input: ChangeOrderStatusInput) => Promise<ChangeOrderStatusResult>

export interface AutoRejectDeps { database: Database, changeOrderStatus: ChangeOrderStatus, logger: Logger }

/**
 * Rejects an order its seller did not act on in time, exactly as a seller's rejection would (refund,
 * deal quantity, notifications). An order that has moved on meanwhile is left alone: the job did its
 * duty by finding nothing to do.
 */
export function autoRejectTask ({ database, changeOrderStatus, logger }: AutoRejectDeps): Task {
  return async (raw) => {
    const { orderId } = raw as AutoRejectPayload
    const [order] = await database.sql`select seller_id, status, is_deleted from orders where id = ${orderId}`
    if (!order || order.is_deleted || order.status !== 'ORDER_PLACED') {
      logger.debug({ orderId, status: order?.status }, 'auto-rejection: order already moved, nothing to do')
      return
    }
    // onlyFrom: the seller may accept between the read above and the lock; an accepted order may move to
    // rejected, but never by this timer.
    const result = await database.db.transaction((tx) => changeOrderStatus(tx, {
      sellerId: order.seller_id, orderId, toStatus: 'ORDER_REJECTED_BY_SELLER', reason: AUTO_REJECT_REASON, credentialId: null, storeIds: null, source: 'auto-reject', onlyFrom: 'ORDER_PLACED'
    }))
    if (!result.ok) throw new Error(`auto-rejection of order ${orderId} failed: ${result.error}`)
    if (result.changed) logger.info({ orderId, sellerId: order.seller_id }, 'order auto-rejected: not accepted in time')
    else logger.debug({ orderId }, 'auto-rejection: order moved meanwhile, nothing to do')
  }
}
