import { Writable } from 'node:stream'
import pino, { type Logger } from 'pino'
import type { Test } from 'tap'
import type { TestDatabase as Database } from './build.js'
import { loadConfig } from '../../src/config.js'
import { EVENT_STATUS, type NotificationEventType } from '../../src/effects/jobs.js'
import type { EffectsWorker } from '../../src/effects/worker.js'
import { startWorker } from '../../src/worker-tasks.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { recordEvents } from '../../src/events/record-events.js'

/** A pino logger whose lines land in an array, to assert what was logged at which level. */
export function captureLogger (level: pino.LevelWithSilent = 'debug'): { logger: Logger, lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l))
      cb()
    }
  })
  return { logger: pino({ level }, stream), lines }
}

/** Worker settings for tests: fast polling and recovery, quiet. */
export function workerEnv (database: Database, env: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  return loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', WORKER_POLL_INTERVAL_MS: '200', WORKER_RECOVERY_INTERVAL_MS: '500', ...env })
}

/** The service's worker: the jobs and the deliverer of every subscription (notifications included). */
export async function startTestWorker (t: Test, database: Database, env: Record<string, string> = {},
  logger?: Logger): Promise<EffectsWorker> {
  const config = workerEnv(database, env)
  const worker = await startWorker(config, database, database.url, logger ?? pino({ level: 'silent' }))
  t.teardown(() => worker.stop())
  return worker
}

export async function waitFor (t: Test, what: string, check: () => Promise<boolean> | boolean,
  timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) { t.fail(`timed out waiting for: ${what}`); throw new Error(`timed out waiting for: ${what}`) }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Records one event of an order in its seller's log, as a status change does (without changing the order):
 * what a test of the deliveries needs, whatever made the event.
 */
export async function recordOrderEvent (database: Database, order: { id: number, sellerId: number },
  type: NotificationEventType = 'order.rejected', reason: string | null = 'Out of stock'): Promise<void> {
  const [row] = await database.sql`select store_id, status from orders where id = ${order.id}`
  await database.db.transaction((tx) => recordEvents(tx, [{
    sellerId: order.sellerId,
    storeId: row.store_id,
    orderId: order.id,
    type,
    status: EVENT_STATUS[type],
    previousStatus: row.status,
    reason: type === 'order.rejected' ? reason : null
  }]))
}

export interface NotificationRow { channel: string, type: string, status: string, attempts: number, eventId: string }

/**
 * The notifications of an order (or all), oldest first: the deliveries of the notification subscriptions,
 * after queueing what the log holds (what the deliverer does first when it wakes).
 */
export async function notificationsOf (database: Database, orderId?: number): Promise<NotificationRow[]> {
  await dispatchEvents(database.db)
  return (await database.sql`select substr(s.kind::text, 8) as channel, d.type::text as type, d.status::text as status,
      d.attempts, 'evt_' || d.seller_id || '_' || d.sequence as "eventId"
    from deliveries d join subscriptions s on s.id = d.subscription_id
    where s.kind::text like 'notify-%' ${orderId === undefined ? database.sql`` : database.sql`and d.order_id = ${orderId}`}
    order by d.sequence, s.kind`) as unknown as NotificationRow[]
}

/** Some orders of the seeded demo data, in a given status. */
export async function ordersIn (database: Database, status: string, limit: number,
  sellerId?: number): Promise<Array<{ id: number, sellerId: number }>> {
  const rows = await database.sql`select id, seller_id from orders where status = ${status} and not is_deleted
    ${sellerId === undefined ? database.sql`` : database.sql`and seller_id = ${sellerId}`} order by id limit ${limit}`
  return rows.map((r) => ({ id: Number(r.id), sellerId: r.seller_id }))
}
