/*
 * Where a poll remembers how far it got (client rule 8 of docs/api/orders.md: store what makes polling
 * repeatable), small enough to save after every order handed out.
 *
 * A poll reads every order changed after `from` (updatedSince), page by page in the service's order
 * (creation time, then orderId). Between polls, `highWater` says where the next one starts: it reads from
 * a little before (the overlap, for transactions that commit late) and skips the changes it already
 * handed out, remembered as `orderId@updatedAt` in `seen` for as long as they can come back. During a
 * poll, `walk` says which page it reads and the last order it processed in the service's order, so a
 * poll cut off by a crash resumes where it stopped instead of starting over.
 */

/** Where an order stands in the service's order: its creation time, then its id. */
export interface Position {
  createdAt: string
  orderId: string
}

export interface PollWalk {
  /** The updatedSince of this walk. */
  from: string
  /** The service's clock when the walk began (its Date header), or the client's when that is hidden. */
  startedAt: string
  /** The largest updatedAt processed so far in this walk. */
  maxUpdatedAt: string | null
  /** The page to read next, from 1. */
  page: number
  /** pageInfo.total when the last page was read (a smaller total later means orders were deleted). */
  total: number | null
  /** The last order processed, in the service's order; orders at or before it are not handed out again. */
  last: Position | null
  /** Changes handed out by this walk that the next poll may read again, as `orderId@updatedAt`. */
  recent: string[]
}

export interface PollCheckpoint {
  /**
   * The next poll reads from this instant minus the overlap (ISO-8601, UTC, microseconds), or null before the
   * first.
   */
  highWater: string | null
  /** Changes handed out by earlier polls that the next read can return again, as `orderId@updatedAt`. */
  seen: string[]
  /** An unfinished walk, or absent. */
  walk?: PollWalk
}

/**
 * Where the event feed's follower remembers how far it got: the sequence of the last event handled. The
 * feed's sequences become visible only in order, so nothing else needs remembering.
 */
export interface EventCheckpoint {
  after: string
}

/**
 * Where a checkpoint is kept: the order poll's (`PollCheckpoint`, the default) or the event follower's
 * (`EventCheckpoint`). Two methods, for anything: a file, a row of your own database (saved in the same
 * transaction as your own write, the checkpoint can never disagree with it).
 */
export interface CheckpointStore<T = PollCheckpoint> {
  load: () => Promise<T | null>
  save: (checkpoint: T) => Promise<void>
}

const copy = <T>(checkpoint: T): T => JSON.parse(JSON.stringify(checkpoint)) as T

/** Keeps the checkpoint in memory: for one process (a long-running poller, tests). */
export class MemoryCheckpointStore<T = PollCheckpoint> implements CheckpointStore<T> {
  private checkpoint: T | null = null

  async load (): Promise<T | null> {
    return this.checkpoint === null ? null : copy(this.checkpoint)
  }

  async save (checkpoint: T): Promise<void> {
    this.checkpoint = copy(checkpoint)
  }
}

const STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/

/** Whether a text is a UTC timestamp as the service writes them (or with fewer decimals). */
export function isStamp (text: string): boolean {
  return STAMP.test(text)
}

/** A UTC timestamp with six decimals, so that timestamps compare as text. */
export function normalStamp (stamp: string): string {
  const m = STAMP.exec(stamp)
  if (!m) throw new Error(`not a UTC timestamp: ${stamp}`)
  return `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}Z`
}

/** `stamp` minus `ms`, keeping microseconds (the service's updatedAt has six decimals; a Date has three). */
export function earlier (stamp: string, ms: number): string {
  const normal = normalStamp(stamp)
  const base = Date.parse(`${normal.slice(0, 23)}Z`) - ms
  return `${new Date(base).toISOString().slice(0, 23)}${normal.slice(23, 26)}Z`
}
