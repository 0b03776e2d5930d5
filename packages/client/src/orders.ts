import type { OrderListInput } from './generated/graphql.js'
import type { Transport } from './http.js'
import { walkPages, type Credentials, type FullOrder, type OrderPage, type OrdersDocument } from './pages.js'
import { pollOrders, type PollNode, type PollOptions, type PollResult } from './poll.js'
import { updateStatuses, type StatusChange, type StatusChangeResult } from './status-updates.js'

/* client.orders: page walks (docs/api/orders.md, client rules 1–2), repeatable polling (rule 8), status updates. */

export interface OrdersApi {
  /** Every page from page 1 until hasNext is false. */
  pages: <TNode = FullOrder>(
    input?: Omit<OrderListInput, 'page'>,
    options?: { document?: OrdersDocument<TNode>, signal?: AbortSignal }
  ) => AsyncIterable<OrderPage<TNode>>
  /** Hands each change since the checkpoint to `handle` once, and moves the checkpoint past it. */
  poll: <TNode extends PollNode = FullOrder>(options: PollOptions<TNode>) => Promise<PollResult>
  /** One result per change, in input order; sent in batches the service takes. */
  updateStatuses: (
    changes: readonly StatusChange[],
    options?: { chunkSize?: number, signal?: AbortSignal }
  ) => Promise<StatusChangeResult[]>
}

export function ordersApi (transport: Transport, credentials: Credentials): OrdersApi {
  return {
    pages: (input = {}, options = {}) => walkPages(transport, credentials, input, options),
    poll: (options) => pollOrders(transport, credentials, options),
    updateStatuses: (changes, options) => updateStatuses(transport, credentials, changes, options)
  }
}
