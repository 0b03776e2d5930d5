import postgres from 'postgres'
import type { Logger } from 'pino'

/*
 * graphile-worker 0.17 leaves a job locked by a worker that died mid-job (SIGKILL, OOM, lost host) for
 * 4 hours before another worker may take it. To deliver such jobs within seconds instead, every worker
 * pool of this service holds a session advisory lock named after its pool id for as long as it lives;
 * PostgreSQL drops it the moment the session ends. Each worker periodically releases the jobs of pools
 * whose lock is gone (graphile_worker.force_unlock_workers), and they run again elsewhere.
 *
 * Consequences, written down: every worker against a database must be started by this service (a bare
 * graphile-worker CLI holds no such lock and would have its jobs taken after the grace below); and a
 * worker that loses its lock connection while still running may see a job run twice, which every task
 * tolerates (notifications are at-least-once with a stable event id, refunds and auto-rejections are
 * idempotent).
 */

/** First key of the two-key advisory locks: an arbitrary constant of this service (fits int4). */
export const LIVENESS_LOCK_CLASS = 724_011_203

/** A lock younger than this is never taken from its pool: covers the moment between pool start and its lock. */
export const RECOVERY_GRACE_SECONDS = 5

type Sql = postgres.Sql

/** Releases the jobs held by pools that hold no liveness lock any more; returns the pool ids released. */
export async function releaseJobsOfDeadWorkers (sql: Sql, graceSeconds = RECOVERY_GRACE_SECONDS): Promise<string[]> {
  const rows = await sql`
    with dead as (
      select distinct j.locked_by
      from graphile_worker._private_jobs j
      where j.locked_by is not null
        and j.locked_at < now() - ${graceSeconds}::float8 * interval '1 second'
        and not exists (
          select 1 from pg_locks l
          where l.locktype = 'advisory' and l.granted
            and l.database = (select oid from pg_database where datname = current_database())
            and l.classid = ${LIVENESS_LOCK_CLASS}::int8::oid
            and l.objid::int8 = (hashtext(j.locked_by)::int8 & 4294967295)
            and l.objsubid = 2)
    ), released as (
      select graphile_worker.force_unlock_workers(array(select locked_by from dead))
    )
    select locked_by from dead, released`
  return rows.map((r) => r.locked_by as string)
}

/** The liveness lock of one worker pool and the periodic recovery sweep. */
export class WorkerLiveness {
  private readonly sql: Sql
  private poolId: string | null = null
  private claim: Promise<void> = Promise.resolve()
  private timer: NodeJS.Timeout | null = null
  private sweeping: Promise<void> | null = null

  constructor (url: string, private readonly logger: Logger, private readonly intervalMs: number) {
    // One long-lived session: its end is what tells the others this pool died. No lifetime recycling.
    this.sql = postgres(url, { max: 1, idle_timeout: 0, max_lifetime: null, onnotice: () => {}, connection: { application_name: 'order-exchange-worker-liveness' } })
  }

  /** Connects before the pool starts, so the claim goes out as soon as the pool id is known. */
  async open (): Promise<void> {
    await this.sql`select 1`
  }

  /** Takes the pool's lock (called from graphile-worker's pool:create event). */
  hold (poolId: string): void {
    this.poolId = poolId
    this.claim = this.ensureHeld().catch((err) => { this.logger.error({ err, poolId }, 'could not take the worker liveness lock') })
  }

  private async ensureHeld (): Promise<void> {
    if (!this.poolId) return
    const [row] = await this.sql`
      select exists (select 1 from pg_locks l where l.pid = pg_backend_pid() and l.locktype = 'advisory'
          and l.classid = ${LIVENESS_LOCK_CLASS}::int8::oid and l.objid::int8 = (hashtext(${this.poolId})::int8 & 4294967295) and l.objsubid = 2) as held`
    if (row.held) return
    const [taken] = await this.sql`select pg_try_advisory_lock(${LIVENESS_LOCK_CLASS}::int4, hashtext(${this.poolId})) as ok`
    if (!taken.ok) this.logger.warn({ poolId: this.poolId }, 'worker liveness lock is held by another session (hash clash); crash recovery of this pool is degraded')
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
      const released = await releaseJobsOfDeadWorkers(this.sql)
      if (released.length > 0) this.logger.warn({ pools: released }, 'released jobs of workers that died mid-job; they will run again')
    } catch (err) {
      this.logger.error({ err }, 'worker crash recovery sweep failed; will retry')
    }
  }

  /** Call after the pool has stopped: ends the session, and with it the lock. */
  async close (): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.sweeping
    await this.sql.end({ timeout: 5 })
  }
}
