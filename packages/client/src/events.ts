import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core'
import type { CheckpointStore, EventCheckpoint } from './checkpoint.js'
import { AbortError, OrderExchangeError } from './errors.js'
import { EventPageDocument, type EventListInput, type EventPageQuery } from './generated/graphql.js'
import type { Transport } from './http.js'
import { documentText, readListPage, type Credentials } from './pages.js'
import { sleep } from './sleep.js'

/*
 * client.events: the seller's event log (GraphQL `events`), followed with a checkpoint.
 *
 * The feed numbers each seller's events 1, 2, 3 … and a number becomes visible only after every smaller
 * one has: a reader that stores the last sequence it handled and reads on after it never misses an event
 * and never gets one twice. So the checkpoint is that one number, saved after each event handled — no
 * overlap, no de-duplication, nothing that grows (compare client.orders.poll and updatedSince).
 */

/** A document that reads one page of events: `$input: EventListInput`, `events { pageInfo, nodes }`. */
export type EventsDocument<TNode> = DocumentTypeDecoration<{
  events: { pageInfo: { hasNext: boolean, endCursor: string, limit?: number }, nodes: TNode[] } | null
}, { input?: EventListInput | null }>

export type FullEvent = NonNullable<EventPageQuery['events']>['nodes'][number]

/** What the follower needs of each event: its sequence. */
export interface FollowNode { sequence: string }

export interface FollowOptions<TNode extends FollowNode> {
  /** Where the last sequence handled is kept (MemoryCheckpointStore, FileCheckpointStore from /node, your own). */
  checkpoint: CheckpointStore<EventCheckpoint>
  /**
   * Called once per event, in sequence order; the checkpoint moves past an event only when this resolves.
   * When it throws, follow() stops with that error and the next call hands that event over again.
   */
  handle: (event: TNode) => Promise<void> | void
  /** Only events of these types (the checkpoint still moves only past events handed out). */
  types?: string[]
  /** Where the very first read starts when the checkpoint is empty: a sequence; default "0", the oldest event kept. */
  startAfter?: string
  /** Events per page (default 100, the service's maximum). */
  limit?: number
  /** A document selecting fewer fields; it must select `sequence` and `pageInfo { hasNext endCursor }`. */
  document?: EventsDocument<TNode>
  /**
   * Keep following: once caught up, read again after this many milliseconds, until `signal` aborts. Without
   * it, follow() returns once it has handed out every event there is.
   */
  intervalMs?: number
  signal?: AbortSignal
}

export interface FollowResult {
  /** Events handed to `handle` by this call. */
  handled: number
  /** The last sequence handled, where the next call starts. */
  after: string
}

export interface EventsApi {
  /** Hands each event after the checkpoint to `handle` once, in order, and moves the checkpoint past it. */
  follow: <TNode extends FollowNode = FullEvent>(options: FollowOptions<TNode>) => Promise<FollowResult>
}

const SEQUENCE = /^(0|[1-9][0-9]{0,18})$/

export function eventsApi (transport: Transport, credentials: Credentials): EventsApi {
  return { follow: (options) => followEvents(transport, credentials, options) }
}

export async function followEvents<TNode extends FollowNode> (
  transport: Transport, credentials: Credentials, options: FollowOptions<TNode>
): Promise<FollowResult> {
  const query = documentText(options.document ?? EventPageDocument)
  const saved = await options.checkpoint.load()
  let after = saved?.after ?? options.startAfter ?? '0'
  if (typeof after !== 'string' || !SEQUENCE.test(after)) {
    throw new OrderExchangeError(`the checkpoint's after must be an event sequence (a string of digits), got ${JSON.stringify(after)}`)
  }
  const input = { limit: options.limit ?? 100, ...(options.types ? { types: options.types } : {}) }
  let handled = 0
  for (;;) {
    const page = await readListPage<{ pageInfo: { hasNext: boolean, endCursor: string }, nodes: TNode[] }>(
      transport, credentials, query, 'events', { ...input, after }, options.signal)
    for (const event of page.nodes) {
      if (options.signal?.aborted) throw new AbortError('aborted')
      await options.handle(event)
      after = event.sequence
      handled++
      // Saved after each event: a restart hands out nothing twice and misses nothing.
      await options.checkpoint.save({ after })
    }
    if (page.pageInfo.hasNext) continue
    if (options.intervalMs === undefined) return { handled, after }
    await sleep(options.intervalMs, options.signal)
  }
}
