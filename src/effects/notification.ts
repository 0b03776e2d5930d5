import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { prepared } from '../db/statements.js'
import type { DeliveryStatus, OrderStatus } from '../db/schema.js'
import { EVENT_STATUS, type NotificationChannel, type NotificationEventType, type NotifyPayload } from './jobs.js'

/**
 * Everything a transport needs to tell someone about one order event, read when it is delivered. The
 * status is the one the event is about (not the order's current one), so a late retry still says what
 * happened at the time.
 */
export interface Notification {
  eventId: string
  eventType: NotificationEventType
  channel: NotificationChannel
  occurredAt: string
  order: {
    orderId: number
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

/** A notification with the state of its delivery row (null: no row yet). */
export interface LoadedNotification { notification: Notification, deliveryStatus: DeliveryStatus | null }

type NotificationRow = {
  delivery_status: DeliveryStatus | null
  id: string
  order_number: string
  seller_id: number
  store_id: number
  order_total_final: string
  currency_code: string
  seller_name: string
  retailer_id: number
  retailer_name: string
  first_name: string | null
  phone: string | null
  whatsapp: string | null
}

/** The notification for a notify job and its delivery state in one query, or null when its order no longer exists. */
export async function loadNotification (tx: Tx, payload: NotifyPayload): Promise<LoadedNotification | null> {
  const [row] = await prepared<NotificationRow>(tx, sql`
    select (select d.status from notification_deliveries d where d.event_id = ${payload.eventId}) as delivery_status, o.id, o.order_number, o.seller_id, o.store_id, o.order_total_final, o.currency_code,
      s.name as seller_name, r.id as retailer_id, coalesce(r.name, o.retailer_name) as retailer_name,
      r.first_name, r.phone, r.whatsapp
    from orders o
    join sellers s on s.id = o.seller_id
    left join retailers r on r.id = o.retailer_id
    where o.id = ${payload.orderId}`)
  if (!row) return null
  const notification: Notification = {
    eventId: payload.eventId,
    eventType: payload.eventType,
    channel: payload.channel,
    occurredAt: payload.occurredAt,
    order: {
      orderId: Number(row.id),
      orderNumber: row.order_number,
      orderStatus: EVENT_STATUS[payload.eventType],
      companyId: row.seller_id,
      storeId: row.store_id,
      orderTotalFinal: row.order_total_final,
      currencyCode: row.currency_code,
      reason: payload.reason
    },
    seller: { companyId: row.seller_id, name: row.seller_name },
    retailer: {
      retailerId: row.retailer_id,
      name: row.retailer_name,
      firstName: row.first_name,
      phone: row.phone,
      whatsapp: row.whatsapp
    }
  }
  return { notification, deliveryStatus: row.delivery_status }
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
