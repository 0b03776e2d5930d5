import { sql } from 'drizzle-orm'
import type { Task } from 'graphile-worker'
import type { Logger } from 'pino'
import type { Db } from '../../db/client.js'
import { prepared } from '../../db/statements.js'
import type { ProcessRefundPayload } from '../jobs.js'
import type { PaymentGateway } from '../refunds/gateway.js'

export interface ProcessRefundDeps { db: Db, gateway: PaymentGateway, logger: Logger }

type ClaimedRefund = { id: number, order_id: string, seller_id: number, amount: string, currency: string }

/**
 * Processes one recorded refund through the payment gateway. The refund row carries the state:
 * PENDING → PROCESSING (claimed) → SUCCEEDED | MANUAL, or FAILED after the last attempt. A refund already
 * settled is left alone, so the job may run any number of times; a retry of a PROCESSING refund asks the
 * gateway again with the same idempotency key.
 */
export function processRefundTask ({ db, gateway, logger }: ProcessRefundDeps): Task {
  return async (raw, helpers) => {
    const { refundId } = raw as ProcessRefundPayload
    const [refund] = await prepared<ClaimedRefund>(db, sql`update refunds set status = 'PROCESSING', gateway = ${gateway.name}, updated_at = now()
      where id = ${refundId} and status in ('PENDING', 'PROCESSING')
      returning id, order_id, seller_id, amount, currency`)
    if (!refund) {
      const [existing] = await prepared(db, sql`select status from refunds where id = ${refundId}`)
      if (!existing) logger.warn({ refundId }, 'refund job for a refund that does not exist')
      return
    }
    let outcome
    try {
      outcome = await gateway.refund({
        refundId, orderId: Number(refund.order_id), sellerId: refund.seller_id, amount: refund.amount, currency: refund.currency, idempotencyKey: `refund-${refundId}`
      }, helpers.abortSignal)
    } catch (err) {
      const last = helpers.job.attempts >= helpers.job.max_attempts
      const message = (err as Error).message
      await prepared(db, sql`update refunds set last_error = ${message}, status = ${last ? 'FAILED' : 'PROCESSING'}, updated_at = now()
        where id = ${refundId} and status = 'PROCESSING'`)
      if (last) logger.error({ refundId, orderId: refund.order_id, gateway: gateway.name, err: message }, 'refund failed for good: finance must act')
      throw err
    }
    await prepared(db, sql`update refunds set status = ${outcome.status}, gateway_reference = ${outcome.reference}, last_error = null, updated_at = now()
      where id = ${refundId} and status = 'PROCESSING'`)
    logger.info({ refundId, orderId: Number(refund.order_id), amount: refund.amount, gateway: gateway.name, status: outcome.status }, 'refund processed')
  }
}
