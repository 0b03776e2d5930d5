import { sql } from 'drizzle-orm'
import type { Database, Db } from './client.js'

/*
 * Where a GraphQL read goes: a streaming replica (READ_DATABASE_URL) while it is close enough behind the
 * primary, else the primary. A replica only ever lags; what matters to a client is how old the newest
 * write it may miss is, so the lag is measured as time, from WAL positions:
 *
 *   every poll, the primary's WAL position is read and kept with the time just before it was asked
 *   (every transaction committed before that time lies at or below that position), and the replica's
 *   replay position is read. The replica then holds every write committed before the newest kept time
 *   whose position it has replayed; the lag is now minus that time.
 *
 * An idle primary writes no WAL, so a replica that has replayed everything has no lag however long
 * nothing happened (unlike now() - pg_last_xact_replay_timestamp(), which grows while idle). Between
 * polls the lag can only have grown by the time since the last poll, so a replica read misses at most
 * the writes of the last READ_MAX_LAG_MS + REPLICA_LAG_POLL_MS. A failed poll, or one not answered
 * within a poll interval, sends reads to the primary until the replica answers again.
 */

export interface ReadRouterOptions {
  maxLagMs: number
  pollMs: number
  /** Told of each poll's outcome (metrics); lagMs null: unknown (the replica did not answer). */
  onLag?: (lagMs: number | null) => void
  /** Told when polls start failing, with the reason (logs): once, not at every poll until it answers again. */
  onPollError?: (err: unknown) => void
  /** The clock lags and poll ages are measured on (Date.now); a test passes its own to let time pass. */
  now?: () => number
}

export type ReadTarget = 'replica' | 'primary'

export interface ReadRouterState {
  configured: boolean
  /**
   * Milliseconds behind the primary at the last poll (at least this many, until a poll bounds it); null when
   * unknown.
   */
  lagMs: number | null
  /** Where a read goes now. */
  target: ReadTarget
}

interface Sample { at: number, lsn: bigint }

/** A WAL position ('16/B374D848') as a number. */
export function parseLsn (text: string): bigint {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

/**
 * The replica's lag in ms at `now`: now minus the newest sample time whose position the replica has
 * replayed (bounded). When it has replayed none of the kept samples (the first poll of a lagging
 * replica), only a lower bound is known: now minus the oldest sample (not bounded).
 */
export function lagFromSamples (samples: readonly Sample[], replayed: bigint,
  now: number): { ms: number, bounded: boolean } {
  for (let i = samples.length - 1; i >= 0; i--) {
    if (samples[i]!.lsn <= replayed) return { ms: Math.max(0, now - samples[i]!.at), bounded: true }
  }
  return { ms: samples.length === 0 ? 0 : Math.max(0, now - samples[0]!.at), bounded: false }
}

export class ReadRouter {
  private samples: Sample[] = []
  private lagMs: number | null = null
  /** False while only a lower bound of the lag is known: reads stay on the primary. */
  private bounded = false
  private lastPollAt = 0
  private failing = false
  private timer: NodeJS.Timeout | null = null
  private polling: Promise<void> | null = null

  constructor (
    private readonly primary: Database,
    private readonly replica: Database | undefined,
    private readonly options: ReadRouterOptions
  ) {}

  /** A router without a replica: every read on the primary. */
  static primaryOnly (primary: Database): ReadRouter {
    return new ReadRouter(primary, undefined, { maxLagMs: 0, pollMs: 1000 })
  }

  /** The handle a read should use now (or the handle of a target chosen a moment ago). */
  db (target: ReadTarget = this.target()): Db {
    return target === 'replica' && this.replica ? this.replica.db : this.primary.db
  }

  target (): ReadTarget {
    if (!this.replica || this.lagMs === null || !this.bounded) return 'primary'
    // A poll that has not come back for a whole interval: the lag is not known any more.
    if (this.now() - this.lastPollAt > 2 * this.options.pollMs) return 'primary'
    return this.lagMs <= this.options.maxLagMs ? 'replica' : 'primary'
  }

  private now (): number {
    return (this.options.now ?? Date.now)()
  }

  state (): ReadRouterState {
    return { configured: this.replica !== undefined, lagMs: this.lagMs, target: this.target() }
  }

  /** Measures once now, then every pollMs until stop(). Without a replica, nothing to do. */
  async start (): Promise<void> {
    if (!this.replica || this.timer) return
    await this.poll()
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => { this.polling = null })
    }, this.options.pollMs)
    this.timer.unref()
  }

  async stop (): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.polling
  }

  /** One measurement: the primary's position now, the replica's replay position, the lag from both. */
  async poll (): Promise<void> {
    if (!this.replica) return
    try {
      const asked = this.now()
      const [primary] = await this.primary.db.execute<{ lsn: string }>(sql`select pg_current_wal_lsn()::text as lsn`)
      this.samples.push({ at: asked, lsn: parseLsn(primary!.lsn) })
      const [replica] = await this.replica.db.execute<{ lsn: string | null, recovering: boolean }>(
        sql`select pg_last_wal_replay_lsn()::text as lsn, pg_is_in_recovery() as recovering`)
      // Not a standby (promoted, or a primary given by mistake): its data is the truth, it has no lag.
      const replayed = replica!.recovering ? parseLsn(replica!.lsn ?? '0/0') : this.samples[this.samples.length - 1]!.lsn
      const now = this.now()
      const lag = lagFromSamples(this.samples, replayed, now)
      this.lagMs = lag.ms
      this.bounded = lag.bounded
      // Keep what can still matter: samples the replica has not passed, and the newest one it has.
      let keepFrom = 0
      for (let i = this.samples.length - 1; i >= 0; i--) if (this.samples[i]!.lsn <= replayed) { keepFrom = i; break }
      this.samples = this.samples.slice(keepFrom).slice(-10_000)
      this.lastPollAt = now
      this.failing = false
    } catch (err) {
      this.lagMs = null
      if (!this.failing) this.options.onPollError?.(err)
      this.failing = true
    }
    this.options.onLag?.(this.lagMs)
  }
}
