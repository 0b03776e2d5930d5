import type { NotificationEventType } from '../jobs.js'
import type { Notification } from '../notification.js'
import { failureText, operatorSendOptions } from './operator-post.js'
import { PermanentDeliveryError, type NotificationTransport } from './types.js'
import { createHttpSender } from '../../outbound/http-sender.js'

export interface WhatsappCloudOptions {
  /** e.g. https://graph.facebook.com/v21.0 (a local stand-in in tests). */
  baseUrl: string
  phoneNumberId: string
  accessToken: string
  language: string
  templates: Record<NotificationEventType, string>
  timeoutMs: number
}

/** A phone number as the Cloud API wants it: country code and digits, no `+` or spaces. */
export function whatsappRecipient (n: Notification): string | null {
  const raw = n.retailer.whatsapp ?? n.retailer.phone
  const digits = raw?.replace(/\D/g, '') ?? ''
  return digits.length >= 8 ? digits : null
}

/**
 * The Cloud API body: a pre-approved template, parameters {{1}} retailer, {{2}} order number,
 * {{3}} seller and, for a rejection, {{4}} the reason. biz_opaque_callback_data carries the event id
 * into Meta's status callbacks.
 */
export function whatsappMessage (n: Notification, to: string, options: Pick<WhatsappCloudOptions, 'language' | 'templates'>): object {
  const parameters = [n.retailer.firstName ?? n.retailer.name, n.order.orderNumber, n.seller.name]
  if (n.eventType === 'order.rejected') parameters.push(n.order.reason ?? '-')
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to,
    type: 'template',
    biz_opaque_callback_data: n.eventId,
    template: {
      name: options.templates[n.eventType],
      language: { code: options.language },
      components: [{ type: 'body', parameters: parameters.map((text) => ({ type: 'text', text })) }]
    }
  }
}

/** Sends a template message to the retailer's WhatsApp number, else phone, through Meta's WhatsApp Cloud API. */
export function whatsappCloudTransport (options: WhatsappCloudOptions): NotificationTransport {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(options.phoneNumberId)}/messages`
  const sender = createHttpSender()
  return {
    name: 'whatsapp-cloud',
    async send (n, stop) {
      const to = whatsappRecipient(n)
      if (!to) throw new PermanentDeliveryError(`retailer ${n.retailer.retailerId} has no whatsapp or phone number`)
      const sent = await sender.send(url, { authorization: `Bearer ${options.accessToken}`, 'content-type': 'application/json' },
        JSON.stringify(whatsappMessage(n, to, options)), operatorSendOptions(options.timeoutMs, stop))
      if (!sent.delivered) {
        // Meta's error object says why (e.g. code 131026, message undeliverable); keep it short. It is read
        // from the answer's first 1,024 bytes: Meta's error objects are a few hundred; a longer answer loses
        // the detail, not the status.
        let detail = ''
        try {
          const e = JSON.parse(sent.answerHead).error
          const parts = e && typeof e === 'object' ? [e.code, e.message].filter((x) => x !== undefined) : []
          if (parts.length > 0) detail = `: ${parts.join(' ')}`
        } catch {}
        throw new Error(`${failureText('whatsapp-cloud', sent)}${detail.slice(0, 300)}`)
      }
    }
  }
}
