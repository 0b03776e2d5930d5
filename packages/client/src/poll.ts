import { earlier, normalStamp, type CheckpointStore, type PollCheckpoint, type PollWalk, type Position } from './checkpoint.js'
import { AbortError } from './errors.js'
import type { Transport } from './http.js'
import { fullOrderDocument, readPage, type Credentials, type OrdersDocument } from './pages.js'

/*
 * Repeatable polling (client rule 8 of docs/api/orders.md): every change to an order handed to the caller
 * once, across polls and restarts, with nothing missed.
 *
 * A poll walks the pages of `updatedSince: from` in the service's order (creation time, then orderId).
 * Within a walk an order is recognised by its position: everything at or before the last order processed
 * has been dealt with, so the walk's state is O(1) whatever its length, and a walk resumed after a crash
 * hands out nothing it already handed. Orders move between pages while a walk reads them:
 * - an order updated for the first time since `from` joins the set at its old position, pushing later
 *   orders one place on: they come round again and are recognised by position; the joiner itself was
 *   changed after the walk began, so the next poll reads it;
 * - an order deleted leaves the set and pulls later orders one place back, so one could slip onto a page
 *   already read: a smaller pageInfo.total says so, and the walk steps back far enough to read it.
 * Between polls, the overlap reads again what transactions committing late may have hidden, and `seen`
 * (`orderId@updatedAt`) skips what was already handed out.
 */

/** What a poll needs of each order: its id, when it was created (its place) and when it last changed. */
export interface PollNode { orderId: string, createdAt: string, updatedAt: string }

export interface PollOptions<TNode extends PollNode> {
  checkpoint: CheckpointStore
  /**
   * Called once per change, in the service's order; the checkpoint moves past a change only when this
   * resolves. When it throws, the poll stops with that error and the next poll hands the change over again.
   */
  handle: (order: TNode) => Promise<void> | void
  /** Read this far before the high-water mark, for transactions that commit late and clock skew (default 60 s). */
  overlapMs?: number
  /** Where the very first poll starts (ISO-8601 with an offset; default: every order). */
  startAt?: string
  /** Orders per page (default 100, the service's maximum). */
  limit?: number
  /**
   * A document selecting fewer fields. It must select orderId, createdAt and updatedAt, and pageInfo.total
   * (without total, an order deleted during a walk can make the walk miss the order after it).
   */
  document?: OrdersDocument<TNode>
  signal?: AbortSignal
}

export interface PollResult {
  /** Changes handed to `handle` by this call. */
  handled: number
  /** Where the next poll reads from (minus the overlap). */
  highWater: string | null
}

const EVERYTHING = '1970-01-01T00:00:00Z'

export async function pollOrders<TNode extends PollNode> (
  transport: Transport,
  credentials: Credentials,
  options: PollOptions<TNode>
): Promise<PollResult> {
  const overlapMs = options.overlapMs ?? 60_000
  const limit = options.limit ?? 100
  const document = options.document ?? fullOrderDocument<TNode>()
  const saved = pollCheckpoint(await options.checkpoint.load())
  const seen = new Set(saved.seen)
  let walk: PollWalk | null = saved.walk ?? null
  const from = walk?.from ?? (saved.highWater !== null
    ? earlier(saved.highWater, overlapMs)
    : normalStamp(new Date(options.startAt ?? EVERYTHING).toISOString()))
  const save = (w: PollWalk): Promise<void> =>
    options.checkpoint.save({ highWater: saved.highWater, seen: saved.seen, walk: w })
  let handled = 0

  // The next poll starts at the walk's start or at the newest change seen, whichever is earlier (less the
  // overlap): every change before the walk began was there to be read; one made during it has a later
  // updatedAt than the walk's start. It never goes back from where this poll started.
  const reached = (w: PollWalk): string | null => {
    const bound = w.maxUpdatedAt === null ? null : w.maxUpdatedAt < w.startedAt ? w.maxUpdatedAt : w.startedAt
    if (bound === null) return saved.highWater
    return saved.highWater !== null && saved.highWater > bound ? saved.highWater : bound
  }

  let n = walk?.page ?? 1
  for (;;) {
    const input = { updatedSince: from, limit, page: n }
    const current = await readPage(transport, credentials, document, input, options.signal)
    walk ??= {
      from,
      startedAt: serviceClock(current.date),
      maxUpdatedAt: null,
      page: n,
      total: null,
      last: null,
      recent: []
    }
    const total = current.pageInfo.total ?? null
    if (walk.total !== null && total !== null && total < walk.total && n > 1) {
      // Orders were deleted: those after them moved back, up to (fewer) places, perhaps onto pages read.
      n = Math.max(1, n - Math.ceil((walk.total - total) / limit))
      walk = { ...walk, page: n, total }
      await save(walk)
      continue
    }
    for (const order of current.nodes) {
      if (options.signal?.aborted) throw new AbortError('aborted')
      const position: Position = { createdAt: normalStamp(order.createdAt), orderId: order.orderId }
      if (walk.last !== null && !isAfter(position, walk.last)) continue
      const updatedAt = normalStamp(order.updatedAt)
      const key = `${order.orderId}@${updatedAt}`
      const fresh = !seen.has(key)
      if (fresh) await options.handle(order)
      walk.last = position
      if (walk.maxUpdatedAt === null || updatedAt > walk.maxUpdatedAt) walk.maxUpdatedAt = updatedAt
      if (!fresh) continue
      handled++
      walk.recent.push(key)
      // What the next poll cannot read again need not be remembered; the bound only grows.
      const bound = reached(walk)
      if (bound !== null) walk.recent = keptAfter(walk.recent, earlier(bound, overlapMs))
      // Saved after each change: a restart hands out nothing twice and misses nothing.
      await save(walk)
    }
    walk.total = total
    if (!current.pageInfo.hasNext) break
    n++
    walk.page = n
    await save(walk)
  }
  const highWater = reached(walk)
  const next = [...saved.seen, ...walk.recent]
  const seenNext = highWater === null ? next : keptAfter(next, earlier(highWater, overlapMs))
  await options.checkpoint.save({ highWater, seen: seenNext })
  return { handled, highWater }
}

/**
 * A stored checkpoint as the poll uses it, whatever a store kept: the walk too, when there is one (without
 * it, a poll cut off mid-walk would start again from the high-water mark while `seen` has already
 * forgotten changes older than the walk's progress).
 */
function pollCheckpoint (stored: Partial<PollCheckpoint> | null): PollCheckpoint {
  return {
    highWater: stored?.highWater ?? null,
    seen: Array.isArray(stored?.seen) ? stored.seen : [],
    ...(stored?.walk ? { walk: stored.walk } : {})
  }
}

/** Whether `a` comes after `b` in the service's order (createdAt, then orderId as a number). */
function isAfter (a: Position, b: Position): boolean {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt
  return BigInt(a.orderId) > BigInt(b.orderId)
}

/** The `orderId@updatedAt` keys whose updatedAt is after `from` (updatedSince is strictly later). */
function keptAfter (keys: string[], from: string): string[] {
  return keys.filter((key) => key.slice(key.indexOf('@') + 1) > from)
}

/** The service's clock from its Date header (seconds, so never ahead of it), or this machine's. */
function serviceClock (date: string | null): string {
  const ms = date === null ? NaN : Date.parse(date)
  return normalStamp(new Date(Number.isNaN(ms) ? Date.now() : ms).toISOString())
}
