import type { Caller } from '../../src/credentials/service.js'
import type { Db, Tx } from '../../src/db/client.js'
import { recordingEvents, type PendingEvents } from '../../src/events/record-events.js'
import { changeOrderStatuses } from '../../src/status-update/change-statuses.js'
import { lockDailyDeals, lockOrders, lockSeller } from '../../src/status-update/order-locks.js'
import type { Actor } from '../../src/status-update/plan-change.js'
import type { ItemError } from '../../src/item-error.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { batchOutcome, parseItems, updateOrderStatuses, type BatchOutcome, type PendingItem } from '../../src/status-update/update-batch.js'

/*
 * Ways to write a batch that production does not use, kept so the comparison in
 * bench/results/2026-11-21-status-update.md can be re-run (and tested to give the same per-order outcome):
 * every order in its own savepoint, or in its own transaction. Both change each order through the service's
 * one path, as a batch of one.
 */

export type BatchStrategy = 'set-based' | 'savepoint-per-order' | 'transaction-per-order'

const silent = { info: () => {}, error: () => {} }

async function changeOne (
  actor: Actor, p: PendingItem, atomically: <T>(fn: (tx: Tx, events: PendingEvents) => Promise<T>) => Promise<T>
): Promise<ItemError | null> {
  try {
    const [outcome] = await atomically((tx, events) => changeOrderStatuses(tx, actor, [p.request], { events }))
    if (outcome.kind === 'failed') throw outcome.cause
    return outcome.kind === 'error' ? outcome.error : null
  } catch {
    return OrderErrors.storageFailure
  }
}

export async function updateOrderStatusesWith (strategy: BatchStrategy, db: Db, caller: Caller,
  items: unknown[]): Promise<BatchOutcome> {
  if (strategy === 'set-based') return updateOrderStatuses(db, { seller: caller }, items)
  const { pending, errors } = parseItems(items)
  const actor: Actor = { sellerId: caller.sellerId, credentialId: caller.credentialId, storeIds: caller.storeIds, source: 'api' }
  const record = (p: PendingItem, error: ItemError | null): void => {
    if (error) errors.set(p.index, { orderId: p.request.orderId, error })
  }
  if (strategy === 'savepoint-per-order') {
    await db.transaction((tx) => recordingEvents(tx, async (events) => {
      // Every lock up front, in the global order, as the set-based write takes them.
      if (pending.some((p) => p.request.toStatus === 'ORDER_ACCEPTED')) await lockSeller(tx, caller.sellerId)
      const { orders } = await lockOrders(tx, caller.sellerId, pending.map((p) => p.request.orderId))
      await lockDailyDeals(tx, pending.filter((p) => p.request.toStatus === 'ORDER_REJECTED_BY_SELLER' && orders.has(p.request.orderId)).map((p) => p.request.orderId))
      for (const p of pending) {
        record(p, await changeOne(actor, p, (fn) => tx.transaction((savepoint) => fn(savepoint, events))))
      }
    }))
  } else {
    for (const p of pending) {
      const own = <T>(fn: (tx: Tx, events: PendingEvents) => Promise<T>) =>
        db.transaction((tx) => recordingEvents(tx, (events) => fn(tx, events)))
      record(p, await changeOne(actor, p, own))
    }
  }
  return batchOutcome(items.length, errors, silent)
}
