import type { OrderStatus } from '../db/schema.js'
import { EVENT_STATUS, type NotificationChannel, type NotificationEventType } from './jobs.js'

/**
 * Everything a transport needs to tell someone about one order event: built from the event as the
 * deliverer sends it (its body: the event's own fields as at the event, the order as it is now), so a late
 * retry still says what happened at the time, to whoever the order now names.
 */
export interface Notification {
  /** The event's id (`evt_<seller>_<sequence>`): the same for every channel and attempt. */
  eventId: string
  eventType: NotificationEventType
  channel: NotificationChannel
  occurredAt: string
  order: {
    orderId: string
    orderNumber: string
    orderStatus: OrderStatus
    companyId: number
    storeId: number
    orderTotalFinal: string
    currencyCode: string
    reason: string | null
  }
  seller: { companyId: number, name: string }
  retailer: {
    retailerId: number
    name: string
    firstName: string | null
    phone: string | null
    whatsapp: string | null
  }
}

/** The parts of an event body (events/event-body.ts) a notification reads. */
interface EventBody {
  id: string
  type: string
  timestamp: string
  data: {
    reason: string | null
    order: null | {
      orderId: string
      orderNumber: string
      companyId: number
      storeId: number
      orderTotalFinal: number | string
      currencyCode: string
      retailerName: string
      retailer: null | {
        id: number, name: string, firstName: string | null, phone: string | null, whatsapp: string | null
      }
    }
  }
}

/**
 * The notification of the event in `body` for `channel`, or null when the event names no order (or one that
 * no longer exists) or is not an order's change: there is nothing to tell then.
 */
export function notificationOf (body: string, channel: NotificationChannel, sellerName: string): Notification | null {
  const event = JSON.parse(body) as EventBody
  const order = event.data.order
  if (order === null || !Object.hasOwn(EVENT_STATUS, event.type)) return null
  const eventType = event.type as NotificationEventType
  return {
    eventId: event.id,
    eventType,
    channel,
    occurredAt: event.timestamp,
    order: {
      orderId: String(order.orderId),
      orderNumber: order.orderNumber,
      orderStatus: EVENT_STATUS[eventType],
      companyId: order.companyId,
      storeId: order.storeId,
      orderTotalFinal: String(order.orderTotalFinal),
      currencyCode: order.currencyCode,
      reason: event.data.reason
    },
    seller: { companyId: order.companyId, name: sellerName },
    retailer: {
      retailerId: order.retailer?.id ?? 0,
      name: order.retailer?.name ?? order.retailerName,
      firstName: order.retailer?.firstName ?? null,
      phone: order.retailer?.phone ?? null,
      whatsapp: order.retailer?.whatsapp ?? null
    }
  }
}

const HAPPENED: Record<NotificationEventType, string> = {
  'order.placed': 'was placed',
  'order.accepted': 'was accepted',
  'order.rejected': 'was rejected',
  'order.completed': 'was completed',
  'order.cancelled': 'was cancelled',
  'order.delivered': 'was delivered'
}

/** One line a person reads: the log transport writes it, and it is what a message would say. */
export function notificationText (n: Notification): string {
  const what = n.eventType === 'order.rejected' ? `was rejected: ${n.order.reason ?? 'no reason given'}` : HAPPENED[n.eventType]
  return `Order ${n.order.orderNumber} of ${n.retailer.name} with ${n.seller.name} ${what}`
}
