import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import { orderEventType } from '../events/event-types.js'
import type { OrderEvent, PendingEvents } from '../events/record-events.js'
import type { ItemError } from '../item-error.js'
import { applyChanges } from './apply-changes.js'
import { lockDailyDeals, lockOrders, lockSeller, OrderLockTimeout, type LockedOrder, type LockedSeller } from './order-locks.js'
import { decideChange, recordPlanned, sellerState, type Actor, type ChangeRequest, type PlannedChange } from './plan-change.js'
import { OrderErrors } from './texts.js'

/*
 * The one way an order's status changes, whoever asks: the batch of POST /v2/accounting/orders/update-status
 * and the auto-rejection job both come through here, so the lock order that keeps racing changes from
 * deadlocking, the decisions and the effects exist once.
 *
 * On the caller's transaction: take every lock the requests need, in the global order (seller, orders by
 * id, daily deals by id); decide each request in memory, in order (a later request sees an earlier one's
 * change and the seller's lower balance); write all changes with a fixed number of set-based statements
 * inside a savepoint. Should that write fail, the savepoint is rolled back and each half is written on
 * its own (deciding again from what is stored), down to the single order that fails: one bad order costs
 * about twenty small writes, never a thousand savepoints (bench/results/2026-11-21-status-update.md).
 *
 * Each change that was written is added to the caller's `events`, in request order; the caller records
 * them as its transaction's last statement (events/record-events.ts), so the event log holds exactly the
 * changes that commit.
 */

/** What became of one request, in the order of the requests. */
export type ChangeOutcome =
  | { kind: 'changed' }
  /** Already in that status (a retry), or not in `onlyFrom` any more: nothing done, not an error. */
  | { kind: 'unchanged' }
  | { kind: 'error', error: ItemError }
  /** Its write failed in the database; `cause` says why (for the log, never for the client). */
  | { kind: 'failed', cause: unknown }

export interface ChangeOptions {
  /** Where the changes made are added, for the caller to record at the end of its transaction. */
  events: PendingEvents
  /**
   * Change an order only if it is, under its lock, still in this status; otherwise it is `unchanged`.
   * The auto-rejection passes ORDER_PLACED: an order accepted meanwhile may move to rejected, but never
   * by a timer.
   */
  onlyFrom?: OrderStatus
  /** Told when a slice's write fails and is split (the batch logs it). */
  onSplit?: (orders: number, cause: unknown) => void
}

interface Pending { index: number, request: ChangeRequest }
interface Locked { seller: LockedSeller | undefined, orders: Map<number, LockedOrder> }

export async function changeOrderStatuses (
  tx: Tx, actor: Actor, requests: readonly ChangeRequest[], options: ChangeOptions
): Promise<ChangeOutcome[]> {
  const outcomes = new Array<ChangeOutcome>(requests.length)
  if (requests.length === 0) return outcomes
  const pending = requests.map((request, index) => ({ index, request }))
  const { locked, busy } = await lockAll(tx, actor, pending)
  // An order another transaction held past lock_timeout fails alone; the rest go on.
  for (const p of pending) if (busy.has(p.request.orderId)) outcomes[p.index] = { kind: 'failed', cause: new OrderLockTimeout(p.request.orderId) }
  await writeSlice(tx, actor, pending.filter((p) => !busy.has(p.request.orderId)), outcomes, options, locked)
  return outcomes
}

/**
 * Takes every lock at the transaction's level: nothing taken later inside a savepoint can then wait on
 * another change, and a savepoint rolled back never gives a lock away.
 */
async function lockAll (tx: Tx, actor: Actor, pending: Pending[]): Promise<{ locked: Locked, busy: Set<number> }> {
  const seller = pending.some((p) => movesPoints(p.request)) ? await lockSeller(tx, actor.sellerId) : undefined
  const { orders, busy } = await lockOrders(tx, actor.sellerId, pending.map((p) => p.request.orderId))
  const undone = new Set(pending.filter((p) => givesDealBack(p.request)).map((p) => p.request.orderId))
  await lockDailyDeals(tx, [...orders.keys()].filter((id) => undone.has(id)))
  return { locked: { seller, orders }, busy }
}

/** An acceptance deducts points and a cancellation may give them back: both need the seller's row. */
const movesPoints = (r: ChangeRequest): boolean => r.toStatus === 'ORDER_ACCEPTED' || r.toStatus === 'CANCELLED'
const givesDealBack = (r: ChangeRequest): boolean => r.toStatus === 'ORDER_REJECTED_BY_SELLER' || r.toStatus === 'CANCELLED'

async function writeSlice (
  tx: Tx, actor: Actor, slice: Pending[], outcomes: ChangeOutcome[], options: ChangeOptions, locked?: Locked
): Promise<void> {
  // A half reads its rows again: they are locked already, so this takes no new lock and cannot wait.
  const needsSeller = slice.some((p) => movesPoints(p.request))
  const lockedSeller = locked ? locked.seller : needsSeller ? await lockSeller(tx, actor.sellerId) : undefined
  const orders = locked?.orders ?? (await lockOrders(tx, actor.sellerId, slice.map((p) => p.request.orderId))).orders
  const seller = lockedSeller && sellerState(lockedSeller)
  const decided: Array<[number, ChangeOutcome]> = []
  const changes: PlannedChange[] = []
  for (const p of slice) {
    const order = orders.get(p.request.orderId)
    if (options.onlyFrom !== undefined && order && order.status !== options.onlyFrom) {
      decided.push([p.index, { kind: 'unchanged' }])
      continue
    }
    const decision = decideChange(p.request, order, seller, actor.storeIds)
    if (decision.kind === 'change') {
      recordPlanned(decision.change, seller)
      changes.push(decision.change)
      decided.push([p.index, { kind: 'changed' }])
    } else {
      decided.push([p.index, decision.kind === 'error' ? { kind: 'error', error: decision.error } : { kind: 'unchanged' }])
    }
  }
  try {
    if (changes.length > 0) await tx.transaction((savepoint) => applyChanges(savepoint, changes, actor))
    for (const [index, outcome] of decided) outcomes[index] = outcome
    options.events.add(...changes.map((c) => eventOf(c, actor.sellerId)))
  } catch (err) {
    if (slice.length === 1) {
      outcomes[slice[0].index] = { kind: 'failed', cause: err }
      return
    }
    options.onSplit?.(slice.length, err)
    const half = Math.ceil(slice.length / 2)
    await writeSlice(tx, actor, slice.slice(0, half), outcomes, options)
    await writeSlice(tx, actor, slice.slice(half), outcomes, options)
  }
}

function eventOf (change: PlannedChange, sellerId: number): OrderEvent {
  return {
    sellerId,
    storeId: change.order.storeId,
    orderId: change.order.id,
    type: orderEventType(change.toStatus),
    status: change.toStatus,
    previousStatus: change.fromStatus,
    reason: change.reason
  }
}

/**
 * The marketplace's changes (its platform key moves orders of any seller): each request goes to the
 * one path above as its order's seller's, seller by seller in ascending id. Two such batches take the
 * sellers' locks in the same order, and a seller's own batch only ever holds its own seller's: racing
 * batches queue, never deadlock. An order that does not exist (or is soft-deleted) is not found.
 */
export async function changeStatusesOfAnySeller (
  tx: Tx, credentialId: number, requests: readonly ChangeRequest[], options: ChangeOptions
): Promise<ChangeOutcome[]> {
  const outcomes = new Array<ChangeOutcome>(requests.length)
  const ids = [...new Set(requests.map((r) => r.orderId))]
  // An order's seller never changes, so it is read without a lock; the changes lock the orders.
  const owners = ids.length === 0
    ? []
    : await tx.execute<{ id: string, seller_id: number }>(sql`
    select id, seller_id from orders where id = any(${`{${ids.join(',')}}`}::bigint[]) and not is_deleted`)
  const sellerOf = new Map(owners.map((o) => [Number(o.id), o.seller_id]))
  const bySeller = new Map<number, number[]>()
  requests.forEach((request, index) => {
    const sellerId = sellerOf.get(request.orderId)
    if (sellerId === undefined) outcomes[index] = { kind: 'error', error: OrderErrors.notFound }
    else bySeller.set(sellerId, [...(bySeller.get(sellerId) ?? []), index])
  })
  for (const sellerId of [...bySeller.keys()].sort((a, b) => a - b)) {
    const indexes = bySeller.get(sellerId)!
    const actor: Actor = { sellerId, credentialId, storeIds: null, source: 'platform' }
    const changed = await changeOrderStatuses(tx, actor, indexes.map((i) => requests[i]), options)
    indexes.forEach((index, i) => { outcomes[index] = changed[i] })
  }
  return outcomes
}
