import { sql, type SQL } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { reconnectBackoff, type Tx } from '../db/client.js'
import type { Logger } from 'pino'

/*
 * graphile-worker 0.17 leaves a job locked by a worker that died mid-job (SIGKILL, OOM, lost host) for
 * 4 hours before another worker may take it. To deliver such jobs within seconds instead, every worker
 * pool of this service holds a session advisory lock named after its pool id for as long as it lives;
 * PostgreSQL drops it the moment the session ends. Each worker periodically releases the jobs of pools
 * whose lock has been gone for DEAD_POOL_CONFIRM_MS (graphile_worker.force_unlock_workers), and they
 * run again elsewhere.
 *
 * A session also ends while its worker lives on (terminated backend, network blip, PostgreSQL
 * restarted). Such a worker reconnects and takes its lock again at once, within RECLAIM_MAX_DELAY_MS of
 * the database answering; the confirmation period is longer, so no other worker takes its jobs meanwhile.
 *
 * Consequences, written down: every worker against a database must be started by this service (a bare
 * graphile-worker CLI holds no such lock and would have its jobs taken after the grace below); and a
 * worker cut off from the database for longer than the confirmation period may see a job run twice,
 * which every task tolerates (notifications are at-least-once with a stable event id, refunds and
 * auto-rejections are idempotent).
 */

/** First key of the two-key advisory locks: an arbitrary constant of this service (fits int4). */
export const LIVENESS_LOCK_CLASS = 724_011_203

/** A lock younger than this is never taken from its pool: covers the moment between pool start and its lock. */
export const RECOVERY_GRACE_SECONDS = 5

/** Whether the pool named by `lockedBy` (an SQL expression) holds its liveness lock in this database now. */
function livenessHeld (lockedBy: SQL): SQL {
  return sql`exists (
    select 1 from pg_locks l
    where l.locktype = 'advisory' and l.granted
      and l.database = (select oid from pg_database where datname = current_database())
      and l.classid = ${LIVENESS_LOCK_CLASS}::int8::oid
      and l.objid::int8 = (hashtext(${lockedBy})::int8 & 4294967295)
      and l.objsubid = 2)`
}

/**
 * Releases the jobs held by pools that hold no liveness lock (now, in this statement), locked at least
 * `graceSeconds` ago; `only` restricts it to those pools. Returns the pool ids released.
 */
export async function releaseJobsOfDeadWorkers (tx: Tx, graceSeconds = RECOVERY_GRACE_SECONDS,
  only?: string[]): Promise<string[]> {
  const rows = await tx.execute<{ locked_by: string }>(sql`
    with dead as (
      select distinct j.locked_by
      from graphile_worker._private_jobs j
      where j.locked_by is not null and (${sql.param(only ?? null)}::text[] is null or j.locked_by = any(${sql.param(only ?? null)}::text[]))
    ), confirmed as (
      select d.locked_by from dead d
      where exists (select 1 from graphile_worker._private_jobs j
                    where j.locked_by = d.locked_by and j.locked_at < now() - ${graceSeconds}::float8 * interval '1 second')
        and not ${livenessHeld(sql`d.locked_by`)}
    ), released as (
      select graphile_worker.force_unlock_workers(array(select locked_by from confirmed))
    )
    select locked_by from confirmed, released`)
  return rows.map((r) => r.locked_by)
}

/** Pools with locked jobs and no liveness lock right now (nothing released). */
export async function poolsWithoutLiveness (tx: Tx): Promise<string[]> {
  const rows = await tx.execute<{ locked_by: string }>(sql`
    select distinct j.locked_by from graphile_worker._private_jobs j
    where j.locked_by is not null
      and not ${livenessHeld(sql`j.locked_by`)}`)
  return rows.map((r) => r.locked_by)
}

/** Reconnection of a liveness session: first retry at once, then backing off to this. */
const RECLAIM_MAX_DELAY_MS = 2_000
/**
 * How long a pool must be seen without its lock before its jobs are taken. A live worker whose session
 * dropped (network blip, PostgreSQL restarted) re-takes its lock within RECLAIM_MAX_DELAY_MS of the
 * database answering again, well inside this, so only a worker that is really gone loses its jobs.
 */
export const DEAD_POOL_CONFIRM_MS = 5_000

/** The liveness lock of one worker pool and the periodic recovery sweep. */
export class WorkerLiveness {
  private readonly session: postgres.Sql
  private readonly db: Tx
  private poolId: string | null = null
  private claim: Promise<void> = Promise.resolve()
  private timer: NodeJS.Timeout | null = null
  private sweeping: Promise<void> | null = null
  private reclaiming: Promise<void> | null = null
  private closing = false
  /** Pools seen without a lock, and when first seen so. */
  private readonly suspects = new Map<string, number>()
  private readonly confirmMs: number

  /**
   * `now` is the clock the confirmation period is measured on (Date.now); a test passes its own, to show a
   * suspicion outlasting sweeps and then confirmed without waiting the period out.
   */
  constructor (url: string, private readonly logger: Logger, private readonly intervalMs: number,
    private readonly now: () => number = Date.now) {
    this.confirmMs = Math.max(DEAD_POOL_CONFIRM_MS, intervalMs)
    // One long-lived session: its end is what tells the others this pool died. No lifetime recycling.
    // When the server ends it (terminated, restarted), take the lock again at once on a new session.
    this.session = postgres(url, {
      max: 1,
      idle_timeout: 0,
      max_lifetime: null,
      onnotice: () => {},
      backoff: reconnectBackoff,
      connection: { application_name: 'order-exchange-worker-liveness' },
      onclose: () => { this.reclaim() }
    })
    this.db = drizzle(this.session)
  }

  /** Connects before the pool starts, so the claim goes out as soon as the pool id is known. */
  async open (): Promise<void> {
    await this.db.execute(sql`select 1`)
  }

  /** Takes the pool's lock (called from graphile-worker's pool:create event). */
  hold (poolId: string): void {
    this.poolId = poolId
    this.claim = this.ensureHeld().catch((err) => {
      this.logger.error({ err, poolId }, 'could not take the worker liveness lock; retrying')
      this.reclaim()
    })
  }

  private async ensureHeld (): Promise<void> {
    if (!this.poolId) return
    const [row] = await this.db.execute<{ held: boolean }>(sql`
      select exists (select 1 from pg_locks l where l.pid = pg_backend_pid() and l.locktype = 'advisory'
          and l.classid = ${LIVENESS_LOCK_CLASS}::int8::oid and l.objid::int8 = (hashtext(${this.poolId})::int8 & 4294967295) and l.objsubid = 2) as held`)
    if (row.held) return
    const [taken] = await this.db.execute<{ ok: boolean }>(sql`select pg_try_advisory_lock(${LIVENESS_LOCK_CLASS}::int4, hashtext(${this.poolId})) as ok`)
    if (!taken.ok) this.logger.warn({ poolId: this.poolId }, 'worker liveness lock is held by another session (hash clash); crash recovery of this pool is degraded')
  }

  /** The session went away: take the lock again on a new one, retrying until the database answers. */
  private reclaim (): void {
    if (this.closing || this.reclaiming || !this.poolId) return
    this.reclaiming = (async () => {
      let delay = 0
      while (!this.closing) {
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay))
        try {
          await this.ensureHeld()
          this.logger.info({ poolId: this.poolId }, 'worker liveness lock taken again after the session ended')
          return
        } catch (err) {
          delay = Math.min(Math.max(delay * 2, 100), RECLAIM_MAX_DELAY_MS)
          this.logger.warn({ err, poolId: this.poolId, retryInMs: delay }, 'worker liveness session lost; reconnecting')
        }
      }
    })().finally(() => { this.reclaiming = null })
  }

  /** Starts the periodic sweep (and runs one now). */
  start (): void {
    const tick = (): void => {
      this.sweeping = this.sweep().finally(() => { this.sweeping = null })
    }
    tick()
    this.timer = setInterval(tick, this.intervalMs)
    this.timer.unref()
  }

  private async sweep (): Promise<void> {
    try {
      await this.claim
      // The session may have been re-established (network blip): take the lock again if it went with it.
      await this.ensureHeld()
      // A pool is dead only when seen without its lock for confirmMs: a live worker that lost its
      // session for a moment has taken its lock again by then.
      const now = this.now()
      const missing = new Set(await poolsWithoutLiveness(this.db))
      for (const pool of this.suspects.keys()) if (!missing.has(pool)) this.suspects.delete(pool)
      for (const pool of missing) if (!this.suspects.has(pool)) this.suspects.set(pool, now)
      const confirmed = [...missing].filter((pool) => now - this.suspects.get(pool)! >= this.confirmMs)
      if (confirmed.length === 0) return
      const released = await releaseJobsOfDeadWorkers(this.db, RECOVERY_GRACE_SECONDS, confirmed)
      for (const pool of released) this.suspects.delete(pool)
      if (released.length > 0) this.logger.warn({ pools: released }, 'released jobs of workers that died mid-job; they will run again')
    } catch (err) {
      this.logger.warn({ err }, 'worker crash recovery sweep failed; will retry')
    }
  }

  /**
   * Call after the pool has stopped and its connections have ended: releases the jobs still locked by this
   * pool (graphile_worker.force_unlock_workers), so they run again at once elsewhere rather than after
   * crash recovery's confirmation period. A graceful stop leaves none; one whose completion write failed
   * does. Returns how many were released (0 when the database cannot be reached: recovery does it later).
   */
  async releaseOwnJobs (): Promise<number> {
    if (!this.poolId) return 0
    try {
      const [row] = await this.db.execute<{ n: number }>(sql`
        select count(*)::int as n from graphile_worker._private_jobs where locked_by = ${this.poolId}::text`)
      if (row.n === 0) return 0
      await this.db.execute(sql`select graphile_worker.force_unlock_workers(array[${this.poolId}::text])`)
      this.logger.warn({ poolId: this.poolId, jobs: row.n }, 'released jobs the stopped worker still held; they will run again')
      return row.n
    } catch (err) {
      this.logger.warn({ err, poolId: this.poolId }, 'could not release the stopped worker\'s jobs; crash recovery will')
      return 0
    }
  }

  /** Call after the pool has stopped: ends the session, and with it the lock. */
  async close (): Promise<void> {
    this.closing = true
    if (this.timer) clearInterval(this.timer)
    await this.sweeping
    await this.reclaiming
    await this.session.end({ timeout: 5 })
  }
}
