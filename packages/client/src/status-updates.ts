import { BadRequestError, OrderExchangeError } from './errors.js'
import type { RequestFailure, StatusUpdateInvalidStatusResponse, StatusUpdateItem, StatusUpdateResponse } from './generated/rest.js'
import { MAX_STATUS_ITEMS } from './generated/rules.js'
import { send, type Transport } from './http.js'
import type { Credentials } from './pages.js'

/*
 * Batch status updates (docs/api/status-updates.md): batches of at most the service's limit, and one typed
 * result per item, in input order, lined up by the index the service gives each failed item.
 */

export type StatusName = StatusUpdateItem['Order_Status']

/** One status change to ask for; `reason` is required for a rejection. */
export interface StatusChange {
  orderId: number | string
  status: StatusName
  reason?: string | null
}

/**
 * What became of one item, at its index in the input: `changed` (this call made the change and its
 * effects), `unchanged` (the order already had that status: nothing was done, as on a retry), or
 * `error` with the service's text for that order and its code (ORDER_NOT_FOUND, …).
 */
export type StatusChangeResult =
  | { index: number, orderId: number | string, outcome: 'changed' | 'unchanged' }
  | { index: number, orderId: number | string, outcome: 'error', error: string, code: string }

export async function updateStatuses (transport: Transport, credentials: Credentials, changes: readonly StatusChange[],
  options: { chunkSize?: number, signal?: AbortSignal } = {}): Promise<StatusChangeResult[]> {
  if (!credentials.apiKey) throw new OrderExchangeError('status updates need an apiKey')
  const chunkSize = Math.min(options.chunkSize ?? MAX_STATUS_ITEMS, MAX_STATUS_ITEMS)
  const results: StatusChangeResult[] = []
  for (let start = 0; start < changes.length; start += chunkSize) {
    const chunk = changes.slice(start, start + chunkSize)
    const items: StatusUpdateItem[] = chunk.map((change) =>
      ({ Order_id: change.orderId, Order_Status: change.status, reason: change.reason ?? null }))
    const answer = await send(transport, {
      method: 'POST',
      path: '/v2/accounting/orders/update-status',
      // One key per batch, kept across its retries: a retry of a batch whose answer was lost gets that
      // answer (what changed), not a second look at orders that already moved ("unchanged").
      headers: { authorization: `Bearer ${credentials.apiKey}`, 'content-type': 'application/json', 'idempotency-key': globalThis.crypto.randomUUID() },
      body: JSON.stringify({ order_status: items }),
      signal: options.signal
    // Spec 7.2: an invalid status value makes the answer a 400 that still reports every item.
    }, (status) => status === 400)
    const envelope = answer.body as StatusUpdateResponse | StatusUpdateInvalidStatusResponse | RequestFailure
    // A 400 without data is about the request itself (never sent by this client, but a proxy may mangle it).
    if (!('data' in envelope)) throw new BadRequestError(answer.status, envelope.message, envelope)
    const { errors, unchangedOrderIds } = envelope.data
    const failed = new Map(errors.map(({ index, error, code }) => [index, { error, code }]))
    // Successful items of an order the service left as it was, in item order: a repeated order's
    // occurrences are taken by its successful items in turn.
    const unchanged = new Map<number, number>()
    for (const id of unchangedOrderIds) unchanged.set(id, (unchanged.get(id) ?? 0) + 1)
    chunk.forEach((change, i) => {
      const index = start + i
      const failure = failed.get(i)
      if (failure !== undefined) return results.push({ index, orderId: change.orderId, outcome: 'error', ...failure })
      const id = Number(change.orderId)
      const left = unchanged.get(id) ?? 0
      if (left > 0) unchanged.set(id, left - 1)
      results.push({ index, orderId: change.orderId, outcome: left > 0 ? 'unchanged' : 'changed' })
    })
  }
  return results
}
