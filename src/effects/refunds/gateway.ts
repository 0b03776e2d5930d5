import type { Config } from '../../config.js'

/** What a gateway is asked to do. The idempotency key is the same on every retry of one refund. */
export interface RefundRequest {
  refundId: number
  orderId: number
  sellerId: number
  /** Exact decimal string (numeric), never a float. */
  amount: string
  currency: string
  idempotencyKey: string
}

/** SUCCEEDED: the gateway moved the money; MANUAL: left for finance to pay out by hand. */
export type RefundOutcome =
  | { status: 'SUCCEEDED', reference: string }
  | { status: 'MANUAL', reference: string | null }

/**
 * What a real payment-gateway adapter implements. Throw on a transient failure (the job retries with
 * backoff and the same idempotency key, so the gateway never refunds twice).
 */
export interface PaymentGateway {
  readonly name: string
  /** `stop` is aborted when the worker is shutting down: give up the call (the job is retried). */
  refund: (request: RefundRequest, stop?: AbortSignal) => Promise<RefundOutcome>
}

/** The default: no money moves here; the refund is marked MANUAL and finance pays it out. */
export function manualGateway (): PaymentGateway {
  return { name: 'manual', refund: async () => ({ status: 'MANUAL', reference: null }) }
}

export function createPaymentGateway (config: Pick<Config, 'REFUND_GATEWAY'>): PaymentGateway {
  switch (config.REFUND_GATEWAY) {
    case 'manual': return manualGateway()
  }
}
