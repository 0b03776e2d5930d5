import type { Db } from '../db/client.js'
import { isRetryableConflict } from '../db/retry.js'
import { orderEventType } from '../events/event-types.js'
import type { EventLogging } from '../events/record-events.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import { applyPlacements } from '../status-update/apply-placements.js'
import { checkOrderRows } from './order-row.js'
import { planOrders } from './plan-orders.js'
import { readOrdersState } from './read-orders-state.js'
import { runPlatformBatch } from './run-batch.js'
import type { PlatformBatchData } from './schemas.js'

/*
 * POST /v2/platform/orders: check every row, then in one transaction read what the batch names (its
 * deals under lock), decide each row in memory and place the new orders with every effect of placement
 * (status-update/apply-placements.ts), set-based.
 *
 * No lock is taken on an orderId, an order number or a line id before it exists: their unique indexes are
 * the lock. A batch racing another that places the same order waits on the index entry until the other
 * commits, then fails with a unique violation (or, crossed in another order, a deadlock); its placements
 * are rolled back to a savepoint and decided again from what is now stored, where the order is found and
 * is unchanged or a conflict. Nothing is placed twice, and neither request fails for the race.
 */

const UNIQUE_VIOLATION = '23505'
const ATTEMPTS = 4

function isRace (err: unknown): boolean {
  const code = (e: unknown): unknown => (e as { code?: unknown, cause?: unknown })?.code ??
    ((e as { cause?: unknown })?.cause === undefined ? undefined : code((e as { cause: unknown }).cause))
  return code(err) === UNIQUE_VIOLATION || isRetryableConflict(err)
}

export interface PlaceOptions {
  idempotency?: IdempotencyRequest
  /** The platform key that places (order_status_history.credential_id). */
  credentialId: number | null
  autoRejectAfterMs: number
  /**
   * The demo seed only (src/seed/seed.ts): its orders are history, placed days or weeks ago, so they are
   * recorded as the seed's and not announced to the seller again (no notification, no order.placed event:
   * the log starts with what happens after the seed). The routes never set these.
   */
  seed?: boolean
  /** bench/events only (events/record-events.ts EventLogging): the routes never set it. */
  eventLogging?: EventLogging
}

export async function placeOrders (
  db: Db, raws: unknown[], options: PlaceOptions
): Promise<Replayable<PlatformBatchData>> {
  return runPlatformBatch(db, checkOrderRows(raws), options.idempotency, async (tx, valid, events) => {
    const rows = valid.map((v) => v.row)
    for (let attempt = 1; ; attempt++) {
      const plan = planOrders(valid, await readOrdersState(tx, rows))
      try {
        const source = options.seed === true ? 'seed' as const : 'platform' as const
        const placer = { credentialId: options.credentialId, source }
        const announce = options.seed !== true
        await tx.transaction((savepoint) =>
          applyPlacements(savepoint, plan.placements, placer, options.autoRejectAfterMs))
        // Placed (the savepoint held): each new order's order.placed, in order id order as it was written.
        if (announce) {
          events.add(...[...plan.placements].sort((a, b) => a.row.orderId - b.row.orderId).map(({ row }) => ({
            sellerId: row.companyId,
            storeId: row.storeId,
            orderId: row.orderId,
            type: orderEventType('ORDER_PLACED'),
            status: 'ORDER_PLACED' as const,
            previousStatus: null,
            reason: null
          })))
        }
        return plan.outcomes
      } catch (err) {
        if (attempt >= ATTEMPTS || !isRace(err)) throw err
      }
    }
  }, options.eventLogging)
}
