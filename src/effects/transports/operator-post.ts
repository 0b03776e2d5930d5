import type { SendOptions, SendResult } from '../../outbound/http-sender.js'

/*
 * How the WhatsApp Cloud transport uses the one HTTP sender (the deliverer posts to webhooks itself), and
 * how a failed send reads in the delivery log. Its URL is operator configuration (the Cloud API's base URL),
 * trusted like the rest of it: private networks are allowed, unlike a seller's endpoint.
 */

/** Answers are read up to this much, then dropped (the whole of any answer these receivers give). */
const MAX_ANSWER_BYTES = 64 * 1024

export function operatorSendOptions (timeoutMs: number, stop?: AbortSignal): SendOptions {
  return { allowPrivateNetworks: true, timeoutMs, maxAnswerBytes: MAX_ANSWER_BYTES, ...(stop ? { stop } : {}) }
}

/** Why a send was not delivered, in a few words for last_error (no stack, no secrets). */
export function failureText (what: string, sent: SendResult): string {
  const { status, error } = sent
  if (status !== null && (status < 200 || status >= 300)) {
    return `${what} answered HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`
  }
  // The sender's own words, kept as these transports have always written them.
  if (error?.startsWith('timed out') === true) return `${what} ${error}`
  if (error?.startsWith('abandoned') === true) return `${what} request ${error}`
  return `${what} request failed: ${error ?? 'no answer'}`
}
