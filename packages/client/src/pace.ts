import { sleep } from './sleep.js'

/*
 * Pacing GraphQL reads from the service's own cost report (Shopify's model). Every answered query carries
 * `extensions.cost`: what it asked of the credential's bucket before it ran (requestedQueryCost, which must
 * be there or the query is refused with 429), what it was billed (actualQueryCost) and the bucket after the
 * refund, which refills at restoreRate points a second up to maximumAvailable. One client is one credential,
 * so the client keeps a ledger of that bucket: the last throttleStatus seen, refilled by the time since, less
 * what requests admitted since then take. A request whose cost is known (the last requestedQueryCost of the
 * same document and page size) waits until the ledger holds it, so the client slows down before the service
 * refuses it. Admission is synchronous (the wait is worked out and the cost taken from the ledger in one
 * step), so concurrent requests of one client queue behind each other instead of all seeing the same bucket.
 * Without a report (rate limits off, an older service) nothing is known and nothing waits; a 429 that comes
 * anyway (another process on the same credential) is still retried after its Retry-After by http.ts.
 */

/** The bucket as an answer's extensions.cost reports it. */
export interface ThrottleStatus {
  maximumAvailable: number
  /** After this query's charge and refund. */
  currentlyAvailable: number
  /** Points given back each second. */
  restoreRate: number
}

/** A GraphQL answer's `extensions.cost`. */
export interface QueryCost {
  /** Taken from the bucket before the query ran (it had to be available). */
  requestedQueryCost: number
  /** What the query was billed for what it returned; the difference went back to the bucket. */
  actualQueryCost: number
  throttleStatus: ThrottleStatus
}

/** Time as the pacer sees it: injectable for tests (a fake clock), else Date.now and setTimeout. */
export interface PaceClock {
  now: () => number
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** One wait the pacer made before sending a request. */
export interface PaceWait {
  waitMs: number
  /** The request's expected cost: the last requestedQueryCost of its document and page size. */
  expectedCost: number
  /** What the ledger estimated the bucket held when the request was admitted (may be negative: queued). */
  estimate: number
}

export interface PaceOptions {
  clock?: PaceClock
  /** Told of each wait before it starts (logging, metrics). */
  onWait?: (wait: PaceWait) => void
}

/** Waits are rounded up to the millisecond and given this much more (a timer may fire a hair early). */
const MARGIN_MS = 5
/** Documents × page sizes whose cost is remembered; the oldest is forgotten past this. */
const MAX_REMEMBERED = 256

/** A ticket for one admitted request: hand it back with the answer's cost. */
export interface PaceTicket { readonly key: string, readonly reserved: number }

export class Pacer {
  private readonly clock: PaceClock
  private readonly onWait: ((wait: PaceWait) => void) | undefined
  /** The last requestedQueryCost per document and page size. */
  private readonly costs = new Map<string, number>()
  /** Admitted requests not answered yet (waiting or in flight), by ticket: what each takes. */
  private readonly pending = new Set<PaceTicket>()
  /** The last throttleStatus seen, and when (this machine's clock). */
  private last: { status: ThrottleStatus, seenAt: number } | null = null
  /** The ledger: the bucket estimated to hold `available` at `at` (may be in the future: queued requests). */
  private ledger: { available: number, at: number } | null = null

  constructor (options: PaceOptions = {}) {
    this.clock = options.clock ?? { now: () => Date.now(), sleep }
    this.onWait = options.onWait
  }

  /**
   * Admits a request of `key` (document and page size): waits until the ledger holds its expected cost,
   * which is taken from the ledger at once so that a concurrent request queues behind it.
   */
  async admit (key: string, signal?: AbortSignal): Promise<PaceTicket> {
    const expected = this.costs.get(key)
    const status = this.last?.status
    const ledger = this.ledger
    if (expected === undefined || status === undefined || ledger === null || expected > status.maximumAvailable) {
      // Nothing known to go by (or a cost the bucket can never hold: the service will say so).
      const ticket = { key, reserved: 0 }
      this.pending.add(ticket)
      return ticket
    }
    const now = this.clock.now()
    const rate = status.restoreRate
    const estimate = Math.min(status.maximumAvailable, ledger.available + (now - ledger.at) * rate / 1000)
    const ticket = { key, reserved: expected }
    this.pending.add(ticket)
    if (estimate >= expected) {
      this.ledger = { available: estimate - expected, at: now }
      return ticket
    }
    const waitMs = Math.ceil((expected - estimate) / rate * 1000) + MARGIN_MS
    // Sent at now + waitMs, when the bucket has refilled to (at least) the expected cost, and taken empty.
    this.ledger = { available: 0, at: now + waitMs }
    this.onWait?.({ waitMs, expectedCost: expected, estimate })
    try {
      await this.clock.sleep(waitMs, signal)
    } catch (err) {
      // Aborted while waiting: it will not be sent, so what it took goes back (those queued behind keep
      // their waits, erring on the slow side).
      this.pending.delete(ticket)
      if (this.ledger !== null) this.ledger = { ...this.ledger, available: this.ledger.available + expected }
      throw err
    }
    return ticket
  }

  /**
   * The request of `ticket` was answered (or failed: `cost` undefined). A report resets the ledger to what
   * the service says, less what other admitted requests will take (some may already be in the report:
   * counted twice, the client errs on the slow side).
   */
  settle (ticket: PaceTicket, cost: QueryCost | undefined): void {
    this.pending.delete(ticket)
    if (cost === undefined) return
    this.costs.delete(ticket.key)
    this.costs.set(ticket.key, cost.requestedQueryCost)
    if (this.costs.size > MAX_REMEMBERED) this.costs.delete(this.costs.keys().next().value as string)
    const now = this.clock.now()
    this.last = { status: { ...cost.throttleStatus }, seenAt: now }
    let others = 0
    for (const p of this.pending) others += p.reserved
    this.ledger = { available: cost.throttleStatus.currentlyAvailable - others, at: now }
  }
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0

/** An answer's extensions.cost when it has the expected shape (restoreRate above 0), else undefined. */
export function queryCostOf (body: unknown): QueryCost | undefined {
  const cost = (body as { extensions?: { cost?: Partial<QueryCost> } } | null)?.extensions?.cost
  const status = cost?.throttleStatus
  if (typeof cost !== 'object' || cost === null || typeof status !== 'object' || status === null) return undefined
  if (!isCount(cost.requestedQueryCost) || !isCount(status.maximumAvailable) ||
    !isCount(status.currentlyAvailable) || !isCount(status.restoreRate) || status.restoreRate === 0) return undefined
  return {
    requestedQueryCost: cost.requestedQueryCost,
    actualQueryCost: isCount(cost.actualQueryCost) ? cost.actualQueryCost : cost.requestedQueryCost,
    throttleStatus: {
      maximumAvailable: status.maximumAvailable,
      currentlyAvailable: status.currentlyAvailable,
      restoreRate: status.restoreRate
    }
  }
}
