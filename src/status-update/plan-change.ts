import type { ChangeSource, OrderStatus } from '../db/schema.js'
import { isStorableText } from '../db/storable-text.js'
import type { LockedOrder, LockedSeller } from './order-locks.js'
import { takeRateCents, toCents } from './points.js'
import { canTransition, isTargetStatus, type TargetStatus } from './state-machine.js'
import type { ItemError } from '../item-error.js'
import { OrderErrors } from './texts.js'

/*
 * Deciding what one requested change does, from rows already read under lock. Pure: every order is
 * decided in memory, then all the decided changes are written with set-based statements.
 */

/** Who changes orders: a seller (through one of its credentials, maybe narrowed to stores) or the system. */
export interface Actor {
  sellerId: number
  /** The credential that asked; null for the system (auto-rejection). */
  credentialId: number | null
  /** The credential's store narrowing; null: every store of the seller. */
  storeIds: number[] | null
  source: ChangeSource
}

export interface ChangeRequest {
  orderId: number
  toStatus: TargetStatus
  /** Required (non-blank) for a rejection; kept in the history for any status when given. */
  reason: string | null
}

/** The seller as the decisions of one transaction see it: the balance goes down with each acceptance. */
export interface SellerState {
  id: number
  active: boolean
  takeRate: string
  balanceCents: bigint
}

export interface PlannedChange {
  order: LockedOrder
  fromStatus: OrderStatus
  toStatus: TargetStatus
  reason: string | null
  /**
   * The points this change moves and the balance right after: an acceptance deducts the take rate
   * (negative cents); cancelling an accepted order gives that deduction back (positive).
   */
  points: { cents: bigint, balanceAfterCents: bigint } | null
}

export type Decision =
  | { kind: 'error', error: ItemError }
  | { kind: 'unchanged' }
  | { kind: 'change', change: PlannedChange }

export function sellerState (seller: LockedSeller): SellerState {
  return { id: seller.id, active: seller.status === 'active', takeRate: seller.takeRate, balanceCents: toCents(seller.pointsBalance) }
}

/**
 * What can be said of a request before reading any row, checked once where a request is made (a batch
 * item, the one-order change); the decisions below take it as given.
 */
export function requestError (request: ChangeRequest): ItemError | null {
  if (!Number.isSafeInteger(request.orderId) || request.orderId < 1) return OrderErrors.badOrderId
  if (!isTargetStatus(request.toStatus)) return OrderErrors.invalidStatus
  if (request.toStatus === 'ORDER_REJECTED_BY_SELLER' && (request.reason === null || request.reason.trim() === '')) {
    return OrderErrors.reasonRequired
  }
  // Stored in the history (and sent in notifications) for any status: text the database cannot hold
  // is the client's mistake, not a storage failure.
  if (request.reason !== null && !isStorableText(request.reason)) return OrderErrors.reasonUnstorable
  return null
}

/**
 * The decision for one valid request (requestError said nothing). `storeIds` is the credential's
 * narrowing (null: every store). The seller state is needed only for acceptances. Checks run in the
 * order a client can act on: existence, authorization, no-op, transition, eligibility, points.
 */
export function decideChange (
  request: ChangeRequest, order: LockedOrder | undefined, seller: SellerState | undefined, storeIds: number[] | null
): Decision {
  if (!order) return { kind: 'error', error: OrderErrors.notFound }
  if (storeIds !== null && !storeIds.includes(order.storeId)) return { kind: 'error', error: OrderErrors.notAuthorized }
  // A retry of a change already made succeeds and does nothing (no second deduction, refund or message).
  if (order.status === request.toStatus) return { kind: 'unchanged' }
  if (!canTransition(order.status, request.toStatus)) {
    return { kind: 'error', error: OrderErrors.cannotChange(order.status, request.toStatus) }
  }
  const reason = request.reason !== null && request.reason.trim() !== '' ? request.reason.trim() : null
  let points: PlannedChange['points'] = null
  if (request.toStatus === 'ORDER_ACCEPTED') {
    if (!seller || !seller.active) return { kind: 'error', error: OrderErrors.notEligible }
    const cents = takeRateCents(seller.takeRate, order.orderTotalFinal)
    if (seller.balanceCents < cents) return { kind: 'error', error: OrderErrors.insufficientPoints }
    points = { cents: -cents, balanceAfterCents: seller.balanceCents - cents }
  }
  // What the acceptance deducted (its ledger entry, whatever the take rate is now) goes back.
  if (request.toStatus === 'CANCELLED' && order.acceptancePoints !== null && seller) {
    const cents = -toCents(order.acceptancePoints)
    if (cents > 0n) points = { cents, balanceAfterCents: seller.balanceCents + cents }
  }
  return { kind: 'change', change: { order, fromStatus: order.status, toStatus: request.toStatus, reason, points } }
}

/** Makes a decided change visible to the decisions that follow it in the same transaction. */
export function recordPlanned (change: PlannedChange, seller: SellerState | undefined): void {
  change.order.status = change.toStatus
  if (change.points && seller) seller.balanceCents = change.points.balanceAfterCents
}
