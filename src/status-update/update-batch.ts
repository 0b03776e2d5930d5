import type { Caller } from '../credentials/service.js'
import type { Db, Tx } from '../db/client.js'
import { OrderErrorText } from '../errors.js'
import { applyChanges, type ChangeContext } from './apply-changes.js'
import { changeOrderStatus } from './change-status.js'
import { lockDailyDeals, lockOrders, lockSeller, type LockedOrder, type LockedSeller } from './order-locks.js'
import { decideChange, recordPlanned, requestError, sellerState, type ChangeRequest, type PlannedChange } from './plan-change.js'
import type { BatchData, OrderError } from './schemas.js'
import { parseItem } from './status-item.js'

/*
 * The batch of POST /v2/accounting/orders/update-status. Every item is independent: a bad item, an
 * order that cannot change, or an order whose write fails is reported for that order alone.
 *
 * Three ways to write a batch, all with the same per-order outcome (bench/status-update compares them):
 * - set-based (default): one transaction; lock, decide every order in memory, write all changes with a
 *   fixed number of set-based statements inside a savepoint. Should that write fail, the halves are
 *   written apart, down to the order that fails, so one bad order costs only itself.
 * - savepoint-per-order: one transaction, one savepoint per order (changeOrderStatus each).
 * - transaction-per-order: one transaction (and commit) per order.
 */

export type BatchStrategy = 'set-based' | 'savepoint-per-order' | 'transaction-per-order'

/** What the batch needs of a logger (pino's and Fastify's fit). */
export interface BatchLogger {
  info: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

export interface BatchOptions { strategy?: BatchStrategy, log?: BatchLogger }

export interface BatchOutcome extends BatchData {
  /** An item asked for a status that is not one of the three (spec 7.2: the answer is then a 400 with data). */
  invalidStatus: boolean
}

interface Pending { index: number, request: ChangeRequest }
/** Per item: null = succeeded (changed or already in that status), else the error text. */
type Results = Map<number, string | null>

const silent: BatchLogger = { info: () => {}, error: () => {} }
/** Per-order errors are logged in one line per batch, capped so a huge failed batch stays readable. */
const LOGGED_ERRORS = 50

export async function updateOrderStatuses (db: Db, caller: Caller, items: unknown[], options: BatchOptions = {}): Promise<BatchOutcome> {
  const log = options.log ?? silent
  const errors = new Map<number, OrderError>()
  const pending: Pending[] = []
  items.forEach((raw, index) => {
    const parsed = parseItem(raw)
    if (!parsed.ok) { errors.set(index, { orderId: parsed.orderId, error: parsed.error }); return }
    const invalid = requestError(parsed.request)
    if (invalid) errors.set(index, { orderId: parsed.request.orderId, error: invalid })
    else pending.push({ index, request: parsed.request })
  })

  let results: Results
  try {
    results = await writeBatch(db, caller, pending, options.strategy ?? 'set-based', log)
  } catch (err) {
    // The batch's own transaction failed (lost connection, failed commit): nothing of it was written.
    log.error({ err }, 'status update batch could not be written')
    results = new Map(pending.map((p) => [p.index, OrderErrorText.storageFailure]))
  }
  for (const p of pending) {
    const error = results.get(p.index)
    if (error) errors.set(p.index, { orderId: p.request.orderId, error })
  }

  const ordered = [...errors].sort(([a], [b]) => a - b).map(([, e]) => e)
  if (ordered.length > 0) {
    log.info({ failed: ordered.length, errors: ordered.slice(0, LOGGED_ERRORS) }, 'order statuses not updated')
  }
  return {
    successful: items.length - ordered.length,
    failed: ordered.length,
    errors: ordered,
    invalidStatus: ordered.some((e) => e.error === OrderErrorText.invalidStatus)
  }
}

function writeBatch (db: Db, caller: Caller, pending: Pending[], strategy: BatchStrategy, log: BatchLogger): Promise<Results> {
  if (pending.length === 0) return Promise.resolve(new Map())
  switch (strategy) {
    case 'set-based': return db.transaction((tx) => writeSetBased(tx, caller, pending, log))
    case 'savepoint-per-order': return db.transaction((tx) => writeWithSavepoints(tx, caller, pending, log))
    case 'transaction-per-order': return writeWithTransactions(db, caller, pending, log)
  }
}

function context (caller: Caller): ChangeContext {
  return { sellerId: caller.sellerId, credentialId: caller.credentialId, source: 'api' }
}

/** The rows a batch decides on: what its first slice reads while taking the locks. */
interface Locked { seller: LockedSeller | undefined, orders: Map<number, LockedOrder> }

/**
 * Takes every lock the batch needs, at the transaction's level and in the global order (seller, orders,
 * daily deals). Nothing taken later inside a savepoint can then wait on another batch, and a savepoint
 * rolled back never gives a lock away (a rollback to savepoint releases the row locks taken after it).
 */
async function lockBatch (tx: Tx, caller: Caller, pending: Pending[]): Promise<Locked> {
  const seller = pending.some((p) => p.request.toStatus === 'ORDER_ACCEPTED') ? await lockSeller(tx, caller.sellerId) : undefined
  const orders = await lockOrders(tx, caller.sellerId, pending.map((p) => p.request.orderId))
  const rejected = new Set(pending.filter((p) => p.request.toStatus === 'ORDER_REJECTED_BY_SELLER').map((p) => p.request.orderId))
  await lockDailyDeals(tx, [...orders.keys()].filter((id) => rejected.has(id)))
  return { seller, orders }
}

async function writeSetBased (tx: Tx, caller: Caller, pending: Pending[], log: BatchLogger): Promise<Results> {
  const results: Results = new Map()
  await writeSlice(tx, caller, pending, results, log, await lockBatch(tx, caller, pending))
  return results
}

/**
 * Decides and writes a slice of the batch set-based. Should the write fail, the savepoint is rolled back
 * and each half is tried on its own (deciding again from what is now stored), down to the single order
 * that fails: one bad order costs about twenty small writes instead of the whole batch, and never a
 * thousand savepoints (whose cost grows faster than linearly; see bench/README.md).
 */
async function writeSlice (tx: Tx, caller: Caller, slice: Pending[], results: Results, log: BatchLogger, locked?: Locked): Promise<void> {
  // A half reads its rows again: they are locked already, so this takes no new lock and cannot wait.
  const lockedSeller = locked ? locked.seller : slice.some((p) => p.request.toStatus === 'ORDER_ACCEPTED') ? await lockSeller(tx, caller.sellerId) : undefined
  const orders = locked?.orders ?? await lockOrders(tx, caller.sellerId, slice.map((p) => p.request.orderId))
  const seller = lockedSeller && sellerState(lockedSeller)
  const decided: Results = new Map()
  const changes: PlannedChange[] = []
  for (const p of slice) {
    const decision = decideChange(p.request, orders.get(p.request.orderId), seller, caller.storeIds)
    decided.set(p.index, decision.kind === 'error' ? decision.error : null)
    if (decision.kind === 'change') {
      // Later items of the same batch see this change (same order twice, the seller's balance).
      recordPlanned(decision.change, seller)
      changes.push(decision.change)
    }
  }
  try {
    if (changes.length > 0) await tx.transaction((savepoint) => applyChanges(savepoint, changes, context(caller)))
    for (const [index, result] of decided) results.set(index, result)
  } catch (err) {
    if (slice.length === 1) {
      log.error({ err, orderId: slice[0].request.orderId }, 'order status could not be written')
      results.set(slice[0].index, OrderErrorText.storageFailure)
      return
    }
    log.info({ orders: slice.length, reason: (err as Error).message }, 'set-based status update failed; retrying each half')
    const half = Math.ceil(slice.length / 2)
    await writeSlice(tx, caller, slice.slice(0, half), results, log)
    await writeSlice(tx, caller, slice.slice(half), results, log)
  }
}

async function writeWithSavepoints (tx: Tx, caller: Caller, pending: Pending[], log: BatchLogger): Promise<Results> {
  await lockBatch(tx, caller, pending)
  const results: Results = new Map()
  for (const p of pending) {
    results.set(p.index, await changeOne(log, p, caller, (fn) => tx.transaction(fn)))
  }
  return results
}

async function writeWithTransactions (db: Db, caller: Caller, pending: Pending[], log: BatchLogger): Promise<Results> {
  const results: Results = new Map()
  for (const p of pending) {
    results.set(p.index, await changeOne(log, p, caller, (fn) => db.transaction(fn)))
  }
  return results
}

/** One order in its own savepoint or transaction; a storage failure costs this order only. */
async function changeOne (
  log: BatchLogger, p: Pending, caller: Caller, atomically: <T>(fn: (tx: Tx) => Promise<T>) => Promise<T>
): Promise<string | null> {
  try {
    const result = await atomically((tx) => changeOrderStatus(tx, {
      ...p.request, sellerId: caller.sellerId, credentialId: caller.credentialId, storeIds: caller.storeIds, source: 'api'
    }))
    return result.ok ? null : result.error
  } catch (err) {
    log.error({ err, orderId: p.request.orderId }, 'order status could not be written')
    return OrderErrorText.storageFailure
  }
}
