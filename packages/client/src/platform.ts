import { BadRequestError, OrderExchangeError } from './errors.js'
import type {
  PlatformBatchData, PlatformBatchResponse, PlatformDeal, PlatformItem, PlatformOrder, PlatformPoints, PlatformRetailer,
  PlatformSeller, PlatformStatusUpdateItem, RequestFailure, StatusUpdateInvalidStatusResponse, StatusUpdateResponse
} from './generated/rest.js'
import { send, type RetryOptions, type Transport } from './http.js'

/*
 * The marketplace's client (docs/platform/api.md): one typed method per platform route, with the platform key.
 * A call of more rows than the service takes at once (1,000) is sent as chunks, in order, each with its own
 * Idempotency-Key kept across its retries; the answers are merged into one, whose errors are lined up by
 * their index in the caller's whole array.
 */

/** Rows per call: the service's limit for every platform route. */
export const PLATFORM_CHUNK = 1000

export interface PlatformClientOptions {
  baseUrl: string
  /** The platform key (`oxs_test_pk_…`), issued by `order-exchange credentials issue --kind platform-key`. */
  platformKey: string
  fetch?: typeof fetch
  retry?: RetryOptions
  timeoutMs?: number
  userAgent?: string
}

/** The merged answer of one bulk call: every row's fate, errors indexed in the caller's array. */
export type PlatformBatchResult = PlatformBatchData

type StatusData = StatusUpdateResponse['data']

export interface PlatformClient {
  sellers: { upsert: (rows: readonly PlatformSeller[]) => Promise<PlatformBatchResult> }
  points: { add: (rows: readonly PlatformPoints[]) => Promise<PlatformBatchResult> }
  retailers: { upsert: (rows: readonly PlatformRetailer[]) => Promise<PlatformBatchResult> }
  catalogue: { upsert: (rows: readonly PlatformItem[]) => Promise<PlatformBatchResult> }
  deals: { upsert: (rows: readonly PlatformDeal[]) => Promise<PlatformBatchResult> }
  orders: {
    place: (rows: readonly PlatformOrder[]) => Promise<PlatformBatchResult>
    /** CANCELLED or DELIVERED, orders of any seller: the seller update-status answer, merged. */
    updateStatus: (items: readonly PlatformStatusUpdateItem[]) => Promise<StatusData>
  }
}

const ROUTES = {
  sellers: ['PUT', '/v2/platform/sellers'],
  points: ['POST', '/v2/platform/sellers/points'],
  retailers: ['PUT', '/v2/platform/retailers'],
  catalogue: ['PUT', '/v2/platform/catalogue'],
  deals: ['PUT', '/v2/platform/deals'],
  orders: ['POST', '/v2/platform/orders']
} as const

export function createPlatformClient (options: PlatformClientOptions): PlatformClient {
  if (!options.platformKey) throw new OrderExchangeError('the platform client needs a platformKey')
  const transport: Transport = {
    baseUrl: options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retry: { attempts: 5, baseDelayMs: 250, maxDelayMs: 10_000, budgetMs: 60_000, ...options.retry },
    timeoutMs: options.timeoutMs ?? 120_000,
    userAgent: options.userAgent,
    pacer: null
  }
  const call = async (method: 'PUT' | 'POST', path: string, body: unknown, badRequestHasData = false) => {
    const answer = await send(transport, {
      method,
      path,
      // One key per chunk, kept across its retries: a retry whose first answer was lost gets that answer.
      headers: {
        authorization: `Bearer ${options.platformKey}`,
        'content-type': 'application/json',
        'idempotency-key': globalThis.crypto.randomUUID()
      },
      body: JSON.stringify(body)
    }, (status) => badRequestHasData && status === 400)
    return answer
  }
  const bulk = (route: keyof typeof ROUTES) => async (rows: readonly unknown[]): Promise<PlatformBatchResult> => {
    const [method, path] = ROUTES[route]
    const merged: PlatformBatchResult = { received: 0, inserted: 0, updated: 0, unchanged: 0, failed: 0, errors: [] }
    for (let start = 0; start < rows.length; start += PLATFORM_CHUNK) {
      const answer = await call(method, path, rows.slice(start, start + PLATFORM_CHUNK))
      const { data } = answer.body as PlatformBatchResponse
      merged.received += data.received
      merged.inserted += data.inserted
      merged.updated += data.updated
      merged.unchanged += data.unchanged
      merged.failed += data.failed
      for (const error of data.errors) merged.errors.push({ ...error, index: start + error.index })
    }
    return merged
  }
  const updateStatus = async (items: readonly PlatformStatusUpdateItem[]): Promise<StatusData> => {
    const merged: StatusData = { successful: 0, failed: 0, errors: [], unchangedOrderIds: [] }
    for (let start = 0; start < items.length; start += PLATFORM_CHUNK) {
      const answer = await call('POST', '/v2/platform/orders/update-status',
        { order_status: items.slice(start, start + PLATFORM_CHUNK) }, true)
      const envelope = answer.body as StatusUpdateResponse | StatusUpdateInvalidStatusResponse | RequestFailure
      if (!('data' in envelope)) throw new BadRequestError(answer.status, envelope.message, envelope)
      merged.successful += envelope.data.successful
      merged.failed += envelope.data.failed
      merged.unchangedOrderIds.push(...envelope.data.unchangedOrderIds)
      for (const error of envelope.data.errors) merged.errors.push({ ...error, index: start + error.index })
    }
    return merged
  }
  return {
    sellers: { upsert: bulk('sellers') },
    points: { add: bulk('points') },
    retailers: { upsert: bulk('retailers') },
    catalogue: { upsert: bulk('catalogue') },
    deals: { upsert: bulk('deals') },
    orders: { place: bulk('orders'), updateStatus }
  }
}
