import type { Logger } from 'pino'
import { notificationText } from '../notification.js'
import type { NotificationTransport } from './transport.js'

/** The sandbox transport (default in testing): writes the message to the log; the job records it as delivered. */
export function logTransport (logger: Logger): NotificationTransport {
  return {
    name: 'log',
    async send (n) {
      const to = n.channel === 'seller' ? `seller ${n.seller.companyId}` : `retailer ${n.retailer.retailerId} (${n.retailer.whatsapp ?? n.retailer.phone ?? 'no phone'})`
      logger.info({ eventId: n.eventId, eventType: n.eventType, channel: n.channel, orderId: n.order.orderId, to }, `notification: ${notificationText(n)}`)
    }
  }
}
