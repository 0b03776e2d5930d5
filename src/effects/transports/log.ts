import type { Logger } from 'pino'
import { notificationText } from '../notification.js'
import type { NotificationTransport } from './types.js'

/** The sandbox transport (default in testing): writes the message to the log; the job records it as delivered. */
export function logTransport (logger: Logger): NotificationTransport {
  return {
    name: 'log',
    async send (n) {
      const to = n.channel === 'seller' ? `seller ${n.seller.companyId}` : `retailer ${n.retailer.retailerId} (${maskPhone(n.retailer.whatsapp ?? n.retailer.phone)})`
      logger.info({ eventId: n.eventId, eventType: n.eventType, channel: n.channel, orderId: n.order.orderId, to }, `notification: ${notificationText(n)}`)
    }
  }
}

/** Logs keep only the last four digits of a phone number. */
export function maskPhone (phone: string | null): string {
  if (!phone) return 'no phone'
  return phone.replace(/\d(?=(?:\D*\d){4})/g, '*')
}
