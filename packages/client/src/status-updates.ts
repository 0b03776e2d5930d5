import { BadRequestError, OrderExchangeError } from './errors.js'
import type { RequestFailure, StatusUpdateInvalidStatusResponse, StatusUpdateItem, StatusUpdateResponse } from './generated/rest.js'
import { MAX_STATUS_ITEMS } from './generated/rules.js'
import { send, type Transport } from './http.js'
import type { Credentials } from './pages.js'

/*
 * Batch status updates (spec 4.2): chunks the service takes, and one typed result per item, in input order.
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
 * `error` with the service's text for that order (spec 7.2) and its code (ORDER_NOT_FOUND, …).
 */
export type StatusChangeResult =
  | { index: number, orderId: number | string, outcome: 'changed' | 'unchanged' }
  | { index: number, orderId: number | string, outcome: 'error', error: string, code: string }

export async function updateStatuses (transport: Transport, credentials: Credentials, changes: readonly StatusChange[],
  options: { chunkSize?: number, signal?: AbortSignal } = {}): Promise<StatusChangeResult[]> {
  if (!credentials.apiKey) throw new OrderExchangeError('status updates need an apiKey')
  const chunkSize = Math.min(options.chunkSize ?? MAX_STATUS_ITEMS, MAX_STATUS_ITEMS)
  const results: StatusChangeResult[] = []
  for (const chunk of chunks(changes, chunkSize)) {
    const items: StatusUpdateItem[] = chunk.map(({ change }) => ({ Order_id: change.orderId, Order_Status: change.status, reason: change.reason ?? null }))
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
    results.push(...lineUp(chunk, envelope.data.errors, envelope.data.unchangedOrderIds))
  }
  return results
}

/** The key an item's error carries: its id as a number, or null when it has none usable. */
function errorKey (orderId: number | string): number | null {
  const id = typeof orderId === 'number' ? orderId : /^[1-9][0-9]{0,15}$/.test(orderId) ? Number(orderId) : NaN
  return Number.isSafeInteger(id) && id > 0 ? id : null
}

interface Indexed { index: number, change: StatusChange }

/**
 * Batches of at most `size` items in which no order appears twice (an order repeated starts a new batch,
 * so items still apply in order): the service reports errors by order id, and within such a batch each
 * id names one item.
 */
function chunks (changes: readonly StatusChange[], size: number): Indexed[][] {
  const out: Indexed[][] = []
  let current: Indexed[] = []
  let ids = new Set<number>()
  changes.forEach((change, index) => {
    const key = errorKey(change.orderId)
    if (current.length === size || (key !== null && ids.has(key))) { out.push(current); current = []; ids = new Set() }
    current.push({ index, change })
    if (key !== null) ids.add(key)
  })
  if (current.length > 0) out.push(current)
  return out
}

/** The service lists errors in item order; items without a usable id always fail, in order too. */
function lineUp (chunk: Indexed[], errors: Array<{ orderId: number | null, error: string, code: string }>, unchangedOrderIds: number[]): StatusChangeResult[] {
  const unchanged = new Set(unchangedOrderIds)
  const byId = new Map<number, { error: string, code: string }>()
  const withoutId: Array<{ error: string, code: string }> = []
  for (const { orderId, error, code } of errors) {
    if (orderId === null) withoutId.push({ error, code })
    else byId.set(orderId, { error, code })
  }
  return chunk.map(({ index, change }) => {
    const key = errorKey(change.orderId)
    const failure = key === null ? withoutId.shift() : byId.get(key)
    if (failure !== undefined) return { index, orderId: change.orderId, outcome: 'error', ...failure }
    return { index, orderId: change.orderId, outcome: key !== null && unchanged.has(key) ? 'unchanged' : 'changed' }
  })
}
