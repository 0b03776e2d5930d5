import { eventsApi, type EventsApi } from './events.js'
import type { RetryOptions, Transport } from './http.js'
import { ordersApi, type OrdersApi } from './orders.js'
import { Pacer, type PaceOptions } from './pace.js'
import { referencesApi, type ReferencesApi } from './references.js'
import { shipmentsApi, type ShipmentsApi } from './shipments.js'

/*
 * @order-exchange/client: the contract's client rules in one place (docs/api/orders.md, client rules 1–8;
 * docs/api/shipments.md, the checks before sending), typed from the service's own schemas. Works in Node
 * 20 and browsers (fetch only). File checkpoints and the CLI are Node-only: '@order-exchange/client/node'.
 */

export interface ClientOptions {
  /** The environment is the base address: build against testing, then switch to production. */
  baseUrl: string
  /** For reading orders (POST /v2/graphql). */
  accessToken?: string
  /** For status updates, the shipment sync and the references sync. */
  apiKey?: string
  /** Defaults to the global fetch. */
  fetch?: typeof fetch
  retry?: RetryOptions
  /** How long one attempt may take, the answer read included, before it counts as a network error (default 120 s). */
  timeoutMs?: number
  userAgent?: string
  /**
   * Pace GraphQL reads from the service's `extensions.cost`: wait before a read the credential's bucket
   * cannot hold yet, instead of being refused with 429 (default on; `false` turns it off). An object turns
   * it on with a clock (tests) or an `onWait` callback.
   */
  pace?: boolean | PaceOptions
}

export interface OrderExchangeClient {
  orders: OrdersApi
  /** The seller's event log, followed with a checkpoint: every change of its orders, once, in order. */
  events: EventsApi
  /** The seller's retailers and items, what of them is not mapped yet, and the sync of the seller's IDs for them. */
  references: ReferencesApi
  shipments: ShipmentsApi
}

export function createClient (options: ClientOptions): OrderExchangeClient {
  const transport: Transport = {
    baseUrl: options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retry: { attempts: 5, baseDelayMs: 250, maxDelayMs: 10_000, budgetMs: 60_000, ...options.retry },
    timeoutMs: options.timeoutMs ?? 120_000,
    userAgent: options.userAgent,
    pacer: options.pace === false ? null : new Pacer(options.pace === true ? {} : options.pace)
  }
  return {
    orders: ordersApi(transport, options),
    events: eventsApi(transport, options),
    references: referencesApi(transport, options),
    shipments: shipmentsApi(transport, options)
  }
}

export { createPlatformClient, PLATFORM_CHUNK, type PlatformBatchResult, type PlatformClient, type PlatformClientOptions } from './platform.js'
export {
  MemoryCheckpointStore, type CheckpointStore, type EventCheckpoint, type PollCheckpoint, type PollWalk, type Position
} from './checkpoint.js'
export type { EventsApi, EventsDocument, FollowNode, FollowOptions, FollowResult, FullEvent } from './events.js'
export * from './errors.js'
export type { RetryOptions } from './http.js'
export { buyerKey, isActionable, outletKey, productKey, variantKey } from './mapping.js'
export type { OrdersApi } from './orders.js'
export type { PaceClock, PaceOptions, PaceWait, QueryCost, ThrottleStatus } from './pace.js'
export type { FullOrder, OrderPage, OrdersDocument } from './pages.js'
export type { PollNode, PollOptions, PollResult } from './poll.js'
export { checkReferenceRow, DEFAULT_REFERENCES_CHUNK, unmappedRows } from './references.js'
export type { ReferenceItem, ReferencePage, ReferenceRetailer, ReferencesApi, ReferencesSyncOptions, Unmapped } from './references.js'
export type { StatusChange, StatusChangeResult, StatusName } from './status-updates.js'
export { checkRow, DEFAULT_SYNC_CHUNK, SYNC_CHUNK_BYTES, rowProblem, type ShipmentsApi, type SyncOptions } from './shipments.js'
export { MAX_STATUS_ITEMS, MAX_SYNC_ROWS, QUANTITY_PATTERN, RowErrorCode, SYNC_ID_MAX_LENGTH } from './generated/rules.js'
export { MAX_REFERENCE_ROWS, REFERENCE_TYPES, ReferenceErrorCode } from './generated/rules.js'
export { OrderPageDocument as FullOrderPageDocument, type OrderListInput, type OrderPageQuery, type OrderStatus } from './generated/graphql.js'
export { EventPageDocument as FullEventPageDocument, type EventListInput, type EventPageQuery } from './generated/graphql.js'
export type { ItemListInput, ItemPageQuery, RetailerListInput, RetailerPageQuery } from './generated/graphql.js'
export type { RequestFailure, StatusUpdateItem, StatusUpdateResponse, SyncData, SyncResponse, SyncRow } from './generated/rest.js'
export type { Matched, ReferenceRow, ReferenceRowError, ReferencesData, ReferencesResponse } from './generated/rest.js'
export type {
  PlatformDeal, PlatformItem, PlatformOrder, PlatformPoints, PlatformRetailer, PlatformSeller, PlatformStatusUpdateItem
} from './generated/rest.js'
export type {
  WebhookAttempt, WebhookAttemptPage, WebhookAttemptQuery, WebhookEndpoint, WebhookEndpointCreate,
  WebhookEndpointCreated, WebhookEndpointPatch, WebhookEventType, WebhookReplay, WebhookReplayResult, WebhookTestResult
} from './generated/rest.js'
