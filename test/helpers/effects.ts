import { Writable } from 'node:stream'
import pino, { type Logger } from 'pino'
import type { Test } from 'tap'
import type { TestDatabase as Database } from './build.js'
import { loadConfig } from '../../src/config.js'
import { EVENT_STATUS, notificationEventId, type NotificationChannel, type NotificationEventType, type NotifyPayload } from '../../src/effects/jobs.js'
import { enqueueNotification } from './jobs.js'
import { startEffectsWorker, type EffectsWorker } from '../../src/effects/worker.js'
import { effectsTasks } from '../../src/worker-tasks.js'

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

export async function startTestWorker (t: Test, database: Database, env: Record<string, string> = {},
  logger?: Logger): Promise<EffectsWorker> {
  const config = workerEnv(database, env)
  const log = (logger ?? pino({ level: 'silent' })).child({ component: 'effects-worker' })
  const worker = await startEffectsWorker({
    config, url: database.url, logger: log, ...effectsTasks(config, database, log)
  })
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

export function notifyPayload (order: { id: number, sellerId: number }, channel: NotificationChannel, eventType: NotificationEventType = 'order.rejected', reason: string | null = 'Out of stock'): NotifyPayload {
  return {
    eventId: notificationEventId(order.id, EVENT_STATUS[eventType], channel),
    eventType,
    channel,
    orderId: order.id,
    sellerId: order.sellerId,
    reason: eventType === 'order.rejected' ? reason : null,
    occurredAt: new Date().toISOString()
  }
}

/** Enqueues the three notifications of one event in one transaction, as the status update does. */
export async function enqueueEvent (database: Database, order: { id: number, sellerId: number }, eventType: NotificationEventType = 'order.rejected'): Promise<NotifyPayload[]> {
  const payloads = (['seller', 'customer', 'messaging'] as const).map((c) => notifyPayload(order, c, eventType))
  await database.db.transaction(async (tx) => { for (const p of payloads) await enqueueNotification(tx, p) })
  return payloads
}

/** Some orders of the seeded demo data, in a given status. */
export async function ordersIn (database: Database, status: string, limit: number,
  sellerId?: number): Promise<Array<{ id: number, sellerId: number }>> {
  const rows = await database.sql`select id, seller_id from orders where status = ${status} and not is_deleted
    ${sellerId === undefined ? database.sql`` : database.sql`and seller_id = ${sellerId}`} order by id limit ${limit}`
  return rows.map((r) => ({ id: Number(r.id), sellerId: r.seller_id }))
}

export async function deliveryRow (database: Database, eventId: string): Promise<Record<string, any> | undefined> {
  const [row] = await database.sql`select * from notification_deliveries where event_id = ${eventId}`
  return row
}
