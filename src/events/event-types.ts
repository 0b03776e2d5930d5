import type { EventType, OrderStatus } from '../db/schema.js'
import { eventType } from '../db/schema.js'
import { EVENT_STATUS, eventTypeOf, type AnnouncedStatus } from '../effects/jobs.js'

/*
 * What the seller's event log records. The order types are the notifications' own (effects/jobs.ts: one
 * event per status an order enters); `webhook.test` is reserved for the seller's webhook endpoints (the
 * next issue): it names no order.
 */

export type { EventType }

/** Every type, in the order the table's enum lists them (migration 0011). */
export const EVENT_TYPES: readonly EventType[] = eventType.enumValues

/** A type an order's change records. */
export type OrderEventType = keyof typeof EVENT_STATUS

export function isEventType (value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value)
}

/** The event an order entering `status` records (a placement: order.placed; a rejection: order.rejected …). */
export function orderEventType (status: OrderStatus): OrderEventType {
  // Every status is announced (effects/jobs.ts EVENT_STATUS maps all six): the types check it.
  const announced: AnnouncedStatus = status
  return eventTypeOf(announced)
}
