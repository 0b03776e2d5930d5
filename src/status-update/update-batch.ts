import type { Caller, PlatformCaller } from '../credentials/service.js'
import type { Db } from '../db/client.js'
import { CommitOutcomeUnknownError, transaction } from '../db/transaction.js'
import { isRequestError } from '../errors.js'
import { recordingEvents, type EventLogging } from '../events/record-events.js'
import { idempotent, type IdempotencyRequest, type Replayable } from '../idempotency/idempotency-key.js'
import { changeOrderStatuses, changeStatusesOfAnySeller } from './change-statuses.js'
import type { ChangeRequest } from './plan-change.js'
import type { BatchData, OrderError } from './schemas.js'
import { parseItem, type Requester } from './status-item.js'
import type { ItemError } from '../item-error.js'
import { OrderErrors } from './texts.js'

/*
 * The batch of POST /v2/accounting/orders/update-status (a seller's credential) and of
 * POST /v2/platform/orders/update-status (the platform key: CANCELLED, DELIVERED, orders of any seller).
 * Every item is independent: a bad item, an order that cannot change, or an order whose write fails is
 * reported for that order alone. The batch is one transaction through the one status-change path
 * (change-statuses.ts).
 */

/** What the batch needs of a logger (pino's and Fastify's fit). */
export interface BatchLogger {
  info: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}

export interface BatchOutcome extends BatchData {
  /** An item asked for a status that is not one of the three (the answer is then a 400 with data). */
  invalidStatus: boolean
}

/** A batch item that passed its checks, with its place in the batch. */
export interface PendingItem { index: number, request: ChangeRequest }

const silent: BatchLogger = { info: () => {}, error: () => {} }
/** Per-order errors are logged in one line per batch, capped so a huge failed batch stays readable. */
const LOGGED_ERRORS = 50

/** A failed item's order (null when it had no usable id) and its error; its place is the map's key. */
export interface FailedItem { orderId: number | null, error: ItemError }

/** Splits a batch into the items to apply and the per-item errors found without reading anything. */
export function parseItems (
  items: unknown[], requester: Requester = 'seller'
): { pending: PendingItem[], errors: Map<number, FailedItem> } {
  const errors = new Map<number, FailedItem>()
  const pending: PendingItem[] = []
  items.forEach((raw, index) => {
    const parsed = parseItem(raw, requester)
    if (parsed.ok) pending.push({ index, request: parsed.request })
    else errors.set(index, { orderId: parsed.orderId, error: parsed.error })
  })
  return { pending, errors }
}

/** The answer's data from the per-item errors, in item order. */
export function batchOutcome (
  itemCount: number, errors: Map<number, FailedItem>, log: BatchLogger, unchangedOrderIds: number[] = []
): BatchOutcome {
  const ordered: OrderError[] = [...errors].sort(([a], [b]) => a - b)
    .map(([index, { orderId, error }]) => ({ index, orderId, error: error.text, code: error.code }))
  if (ordered.length > 0) log.info({ failed: ordered.length, errors: ordered.slice(0, LOGGED_ERRORS) }, 'order statuses not updated')
  return {
    successful: itemCount - ordered.length,
    failed: ordered.length,
    errors: ordered,
    unchangedOrderIds,
    invalidStatus: ordered.some((e) => e.code === OrderErrors.invalidStatus.code)
  }
}

export interface BatchOptions {
  log?: BatchLogger
  /** The request's Idempotency-Key: its first outcome is stored with the batch and replayed to a retry. */
  idempotency?: IdempotencyRequest
  /** bench/events only (events/record-events.ts EventLogging): the routes never set it. */
  eventLogging?: EventLogging
}

/** A seller's credential (its orders, maybe narrowed to stores) or the marketplace's platform key. */
export type BatchCaller = { seller: Caller } | { platform: PlatformCaller }

export async function updateOrderStatuses (
  db: Db, who: BatchCaller, items: unknown[], options: BatchOptions = {}
): Promise<Replayable<BatchOutcome>> {
  const log = options.log ?? silent
  const key = options.idempotency
  const { pending, errors } = parseItems(items, 'seller' in who ? 'seller' : 'platform')
  const unchanged: number[] = []
  if (pending.length === 0 && key === undefined) return batchOutcome(items.length, errors, log, unchanged)
  try {
    // The answer commits with the changes it reports, and their events are the transaction's last statement.
    const answer = await transaction(db, (tx) => recordingEvents(tx, (events) => idempotent(tx, key, async () => {
      if (pending.length > 0) {
        const requests = pending.map((p) => p.request)
        const onSplit = (orders: number, cause: unknown) =>
          log.info({ orders, reason: (cause as Error).message }, 'set-based status update failed; retrying each half')
        const outcomes = 'seller' in who
          ? await changeOrderStatuses(tx, actorOf(who.seller), requests, { onSplit, events })
          : await changeStatusesOfAnySeller(tx, who.platform.credentialId, requests, { onSplit, events })
        pending.forEach((p, i) => {
          const outcome = outcomes[i]
          if (outcome.kind === 'unchanged') unchanged.push(p.request.orderId)
          if (outcome.kind === 'error') errors.set(p.index, { orderId: p.request.orderId, error: outcome.error })
          if (outcome.kind === 'failed') {
            log.error({ err: outcome.cause, orderId: p.request.orderId }, 'order status could not be written')
            errors.set(p.index, { orderId: p.request.orderId, error: OrderErrors.storageFailure })
          }
        })
      }
      return batchOutcome(items.length, errors, silent, unchanged)
    }), options.eventLogging))
    if (answer.replayed) return answer
  } catch (err) {
    // Whether a commit cut off by a lost connection happened cannot be learnt: 503, the retry is safe.
    if (err instanceof CommitOutcomeUnknownError || isRequestError(err)) throw err
    // The batch's own transaction failed (lost connection, failed commit): nothing of it was written.
    log.error({ err }, 'status update batch could not be written')
    unchanged.length = 0
    for (const p of pending) errors.set(p.index, { orderId: p.request.orderId, error: OrderErrors.storageFailure })
  }
  return batchOutcome(items.length, errors, log, unchanged)
}

function actorOf (caller: Caller) {
  return { sellerId: caller.sellerId, credentialId: caller.credentialId, storeIds: caller.storeIds, source: 'api' as const }
}
