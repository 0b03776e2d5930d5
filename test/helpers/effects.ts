// The worker and deliveries in tests: a test worker or deliverer, events recorded, deliveries and notifications read.
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
import { eventId, readEventBodies } from '../../src/events/event-body.js'
import { notificationOf, type Notification } from '../../src/effects/notification.js'
import type { NotificationChannel } from '../../src/effects/jobs.js'
import { Deliverer, type DelivererOptions, type OperatorEndpoint } from '../../src/delivery/deliverer.js'
import { applyOperatorEndpoint } from '../../src/delivery/shared-subscriptions.js'
import { logTransport } from '../../src/effects/transports/log.js'
import { operatorSigningKey } from '../../src/outbound/standard-signature.js'

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

export interface DeliveryRow {
  id: number
  kind: string
  eventId: string
  type: string
  orderId: number | null
  status: string
  attempts: number
  leased: boolean
  /** The last attempt's error and HTTP status (null before any attempt, or when it succeeded). */
  lastError: string | null
  lastHttpStatus: number | null
}

/**
 * The deliveries of the queue (after dispatching what the log holds), oldest first, with their subscription's
 * kind, their event's id and their last attempt's outcome; `kind` narrows to one kind of subscription.
 */
export async function deliveriesOf (database: Database,
  which: { kind?: string, orderId?: number, eventId?: string } = {}): Promise<DeliveryRow[]> {
  await dispatchEvents(database.db)
  const sql = database.sql
  return (await sql`select d.id::int as id, s.kind::text as kind, 'evt_' || d.seller_id || '_' || d.sequence as "eventId",
      d.type::text as type, d.order_id::int as "orderId", d.status::text as status, d.attempts,
      coalesce(d.leased_until > now(), false) as leased, a.error as "lastError", a.http_status as "lastHttpStatus"
    from deliveries d join subscriptions s on s.id = d.subscription_id
      left join lateral (select error, http_status from delivery_attempts a where a.delivery_id = d.id
        order by a.attempt desc, a.id desc limit 1) a on true
    where true ${which.kind === undefined ? sql`` : sql`and s.kind::text = ${which.kind}`}
      ${which.orderId === undefined ? sql`` : sql`and d.order_id = ${which.orderId}`}
      ${which.eventId === undefined ? sql`` : sql`and 'evt_' || d.seller_id || '_' || d.sequence = ${which.eventId}`}
    order by d.sequence, d.seller_id, s.kind`) as unknown as DeliveryRow[]
}

/** The one delivery of event `eventId` to the subscription of `kind` (undefined when there is none). */
export async function deliveryOf (database: Database, kind: string, eventId: string): Promise<DeliveryRow | undefined> {
  const rows = await deliveriesOf(database, { kind, eventId })
  if (rows.length > 1) throw new Error(`${rows.length} deliveries of ${eventId} to ${kind}`)
  return rows[0]
}

/** The attempts the delivery log holds for a delivery of `kind` of `eventId`, in order. */
export async function attemptsOf (database: Database, kind: string, eventId: string):
Promise<Array<{ attempt: number, succeeded: boolean, httpStatus: number | null, error: string | null, at: Date }>> {
  return (await database.sql`select a.attempt, a.succeeded, a.http_status as "httpStatus", a.error, a.attempted_at as at
    from delivery_attempts a join subscriptions s on s.id = a.subscription_id
    where s.kind::text = ${kind} and 'evt_' || a.seller_id || '_' || a.sequence = ${eventId}
    order by a.attempt, a.id`) as unknown as Array<{ attempt: number, succeeded: boolean, httpStatus: number | null, error: string | null, at: Date }>
}

/** The id of the last event of a seller's log (`evt_<seller>_<sequence>`), or null when it has none. */
export async function lastEventId (database: Database, sellerId: number): Promise<string | null> {
  const [row] = await database.sql`select max(sequence)::text as seq from seller_events where seller_id = ${sellerId}`
  return row?.seq == null ? null : eventId(sellerId, row.seq as string)
}

/**
 * The Notification the deliverer would hand a transport for the event `id` on `channel` (null when its
 * order no longer exists): built from the event's body as it is sent.
 */
export async function notificationOfEvent (database: Database, id: string, channel: NotificationChannel):
Promise<Notification | null> {
  const m = /^evt_(\d+)_(\d+)$/.exec(id)
  if (m === null) throw new Error(`not an event id: ${id}`)
  const sellerId = Number(m[1])
  const bodies = await readEventBodies(database.db, [{ sellerId, sequence: m[2]! }])
  const body = bodies.get(`${sellerId}:${m[2]!}`)
  if (body === undefined) throw new Error(`no event ${id}`)
  const [seller] = await database.sql`select name from sellers where id = ${sellerId}`
  return notificationOf(body, channel, seller!.name as string)
}

/**
 * A deliverer of every subscription on this database (stopped in teardown, with `graceMs`), as the worker
 * runs it but with the settings a test needs: the channels' transports, the operator's endpoint (enabled
 * for every seller from the log's end when given), a fast `retryWait`. Log transports and no operator by default.
 */
export async function startDeliverer (t: Test, database: Database, options: Partial<DelivererOptions> = {},
  graceMs = 1000): Promise<Deliverer> {
  const silent = pino({ level: 'silent' })
  const log = logTransport(options.logger ?? silent)
  await applyOperatorEndpoint(database.db, options.operator ?? null)
  const deliverer = new Deliverer({
    db: database.db,
    sessionUrl: database.url,
    box: null,
    operator: null,
    channels: { seller: log, customer: log, messaging: log },
    logger: silent,
    concurrency: 16,
    timeoutMs: 2000,
    allowPrivateNetworks: true,
    ...options
  })
  await deliverer.start()
  t.teardown(() => deliverer.stop(graceMs))
  return deliverer
}

/** The operator's endpoint as a worker configured with WEBHOOK_URL=url and WEBHOOK_SECRET=secret has it. */
export function operatorEndpoint (url: string, secret: string): OperatorEndpoint {
  return { url, key: operatorSigningKey(secret) }
}
