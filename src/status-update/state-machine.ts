import type { OrderStatus } from '../db/schema.js'

/*
 * The order state machine (docs/api/status-updates.md, docs/platform/orders.md): one table for every
 * change, whoever asks. The graph has no cycle, so an order enters each status at most once: that is what
 * makes "once per order and transition" a sound key for effects and notification event ids.
 */

/** The statuses a seller may ask for. */
export const TARGET_STATUSES = ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER'] as const
/** The statuses the marketplace may ask for (POST /v2/platform/orders/update-status). */
export const PLATFORM_TARGET_STATUSES = ['CANCELLED', 'DELIVERED'] as const
export type SellerTargetStatus = (typeof TARGET_STATUSES)[number]
export type PlatformTargetStatus = (typeof PLATFORM_TARGET_STATUSES)[number]
export type TargetStatus = SellerTargetStatus | PlatformTargetStatus

/** Where an order may go from each status. Placement is the one way into ORDER_PLACED (no status before it). */
const TRANSITIONS: Record<OrderStatus, readonly TargetStatus[]> = {
  ORDER_PLACED: ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'CANCELLED'],
  ORDER_ACCEPTED: ['ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER', 'CANCELLED', 'DELIVERED'],
  DELIVERED: ['ORDER_COMPLETED_BY_SELLER'],
  // Final states.
  CANCELLED: [],
  ORDER_REJECTED_BY_SELLER: [],
  ORDER_COMPLETED_BY_SELLER: []
}

/** The status a placed order starts in. */
export const PLACED: OrderStatus = 'ORDER_PLACED'

export function isTargetStatus (value: unknown): value is TargetStatus {
  const all: readonly string[] = [...TARGET_STATUSES, ...PLATFORM_TARGET_STATUSES]
  return typeof value === 'string' && all.includes(value)
}

export function canTransition (from: OrderStatus, to: TargetStatus): boolean {
  return TRANSITIONS[from].includes(to)
}

/** Whether an order in this status can still be moved by a seller (the orders' isActionable flag). */
export function isActionable (status: OrderStatus): boolean {
  return status === 'ORDER_PLACED' || status === 'ORDER_ACCEPTED'
}
