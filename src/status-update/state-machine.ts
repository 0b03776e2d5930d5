import type { OrderStatus } from '../db/schema.js'

/*
 * The order state machine of the status update (decisions.md "Status update"). The graph has no cycle,
 * so an order enters each status at most once: that is what makes "once per order and transition" a
 * sound key for effects and notification event ids.
 */

/** The statuses a client may ask for (spec 3.2). */
export const TARGET_STATUSES = ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER'] as const
export type TargetStatus = (typeof TARGET_STATUSES)[number]

const TRANSITIONS: Record<OrderStatus, readonly TargetStatus[]> = {
  ORDER_PLACED: ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER'],
  ORDER_ACCEPTED: ['ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER'],
  DELIVERED: ['ORDER_COMPLETED_BY_SELLER'],
  // Final states.
  CANCELLED: [],
  ORDER_REJECTED_BY_SELLER: [],
  ORDER_COMPLETED_BY_SELLER: []
}

export function isTargetStatus (value: unknown): value is TargetStatus {
  return typeof value === 'string' && (TARGET_STATUSES as readonly string[]).includes(value)
}

export function canTransition (from: OrderStatus, to: TargetStatus): boolean {
  return TRANSITIONS[from].includes(to)
}

/** Whether an order in this status can still be moved by a seller (the orders' isActionable flag). */
export function isActionable (status: OrderStatus): boolean {
  return status === 'ORDER_PLACED' || status === 'ORDER_ACCEPTED'
}
