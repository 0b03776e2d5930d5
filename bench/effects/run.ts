/*
 * Notification delivery benchmark (`npm run bench:effects`).
 *
 * Real worker processes (`bin/order-exchange.js worker`) deliver the notifications of order events through
 * the one deliverer (src/delivery/deliverer.ts): each event is recorded the way a status change records it
 * (recordEvents on a transaction) and goes to the three notification subscriptions: the seller's channel
 * through the log transport, the customer's and the messaging channel through whatsapp-cloud, to a
 * stand-in for the Cloud API on 127.0.0.1 in this process. A notification counts when its delivery is
 * written DELIVERED; its latency is the event's commit → that write, read from the database (one clock).
 * Three runs on one fresh database:
 *   1. backlog, one worker: N notifications (N/3 events) committed at once, time until the last is delivered;
 *   2. backlog, two workers: the same with two worker processes;
 *   3. steady load, one worker: one event (three notifications) per transaction at a fixed rate (half the
 *      measured one-worker throughput unless set), latency commit → delivered per notification.
 *
 * Sizes: BENCH_NOTIFICATIONS (default 10000), BENCH_WORKER_CONCURRENCY (default 10: the deliverer's
 * WEBHOOK_DELIVERY_CONCURRENCY), BENCH_RATE (events/s of run 3; each event is 3 notifications). Quick smoke run:
 *   BENCH_NOTIFICATIONS=600 npm run bench:effects
 */
import http from 'node:http'
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AddressInfo } from 'node:net'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { recordEvents, type OrderEvent } from '../../src/events/record-events.js'
import { startCursorsAtLogEnd } from '../../src/delivery/dispatch.js'
import { EVENT_STATUS, type NotificationEventType } from '../../src/effects/jobs.js'
import type { OrderStatus } from '../../src/db/schema.js'

const N = numberKnob('BENCH_NOTIFICATIONS', 10_000, { min: 1, integer: true })
const CONCURRENCY = numberKnob('BENCH_WORKER_CONCURRENCY', 10, { min: 1, integer: true })
/** Events/s of run 3; unset: half the one-worker throughput measured in run 1 (read here, checked before any run). */
const RATE = numberKnob('BENCH_RATE', undefined, { above: 0 })
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/order-exchange.js')

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** The WhatsApp Cloud API stand-in: counts the messages of each event (two channels send each event's). */
async function startReceiver (): Promise<{
  url: string, messages: Map<string, number>, close: () => Promise<void>
}> {
  const messages = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const id = String(JSON.parse(Buffer.concat(chunks).toString('utf8')).biz_opaque_callback_data)
      messages.set(id, (messages.get(id) ?? 0) + 1)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"messages":[{"id":"wamid.bench"}]}')
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v21.0`,
    messages,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}

async function startWorker (env: Record<string, string>): Promise<{ child: ChildProcess, stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString('utf8')
      if (out.includes('"msg":"effects worker started"')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before starting: ${out}`)))
  })
  child.stdout!.resume()
  return {
    child,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

async function waitUntil (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function main (): Promise<void> {
  const orders = Math.ceil(N / 3)
  process.stderr.write(`effects bench: ${N} notifications per run, deliverer concurrency ${CONCURRENCY}\n`)
  const bench = await benchDatabase('effects', { max: 10 })
  const sql = bench.database.sql
  const receiver = await startReceiver()
  const workers: Array<{ stop: () => Promise<void> }> = []
  try {
    await seed(bench.database, { orders, seed: 1, anchor: DEFAULT_ANCHOR, autoRejectAfterMs: 0 })
    // The notification subscriptions from the log's end: only what the runs record is delivered.
    await bench.database.db.transaction(async (tx) => {
      for (const s of await sql`select id::text as id from subscriptions where kind::text like 'notify-%'`) await startCursorsAtLogEnd(tx, s.id as string)
    })
    const rows = await sql`select id, seller_id, store_id, status::text as status from orders order by id limit ${orders}`
    const orderRefs = rows.map((r) => ({
      id: Number(r.id), sellerId: r.seller_id as number, storeId: r.store_id as number, status: r.status as OrderStatus
    }))
    const env = {
      DATABASE_URL: bench.url,
      LOG_LEVEL: 'info',
      WEBHOOK_DELIVERY_CONCURRENCY: String(CONCURRENCY),
      NOTIFY_CUSTOMER_TRANSPORT: 'whatsapp-cloud',
      NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud',
      WHATSAPP_API_BASE_URL: receiver.url,
      WHATSAPP_PHONE_NUMBER_ID: '106540352242922',
      WHATSAPP_ACCESS_TOKEN: 'EAAG-bench-token'
    }
    const eventOf = (type: NotificationEventType, order: typeof orderRefs[number]): OrderEvent => ({
      sellerId: order.sellerId,
      storeId: order.storeId,
      orderId: order.id,
      type,
      status: EVENT_STATUS[type],
      previousStatus: order.status,
      reason: type === 'order.rejected' ? 'Out of stock' : null
    })
    /**
     * The notification deliveries of events recorded since `after` (a database time): how many finished and
     * were delivered, and when each delivered one was written and its event recorded (epoch ms, one clock).
     * A retailer without a phone fails at once (permanently): finished, not delivered.
     */
    const deliveredSince = async (after: string) => (await sql`select
        count(*) filter (where d.status = 'DELIVERED')::int as delivered, count(*) filter (where d.status <> 'PENDING')::int as finished,
        coalesce(array_agg(extract(epoch from d.finished_at) * 1000) filter (where d.status = 'DELIVERED'), '{}')::float8[] as "finishedAt",
        coalesce(array_agg(extract(epoch from e.occurred_at) * 1000) filter (where d.status = 'DELIVERED'), '{}')::float8[] as "occurredAt"
      from deliveries d join subscriptions s on s.id = d.subscription_id
        join seller_events e on e.seller_id = d.seller_id and e.sequence = d.sequence
      where s.kind::text like 'notify-%' and e.occurred_at >= ${after}::timestamptz`)[0] as {
      delivered: number, finished: number, finishedAt: number[], occurredAt: number[]
    }
    const lastEvent = async (): Promise<string> => (await sql`select clock_timestamp()::text as at`)[0].at as string
    const expected = (events: number): number => events * 3
    const dbNow = async (): Promise<number> => Number((await sql`select extract(epoch from clock_timestamp())::float8 * 1000 as at`)[0].at)

    /** Backlog: N/3 events committed in one transaction, then drained by `count` workers already running. */
    const backlog = async (type: NotificationEventType, count: number) => {
      const running = []
      for (let i = 0; i < count; i++) running.push(await startWorker(env))
      workers.push(...running)
      const after = await lastEvent()
      const events = orderRefs.map((o) => eventOf(type, o))
      await bench.database.db.transaction(async (tx) => {
        for (let i = 0; i < events.length; i += 2000) await recordEvents(tx, events.slice(i, i + 2000))
      })
      const committed = await dbNow()
      let done = await deliveredSince(after)
      await waitUntil(async () => {
        done = await deliveredSince(after)
        return done.finished >= expected(events.length)
      }, 600_000, `backlog of ${expected(events.length)}`)
      const latencies = done.finishedAt.map((at) => at - committed).sort((a, b) => a - b)
      const seconds = latencies[latencies.length - 1]! / 1000
      for (const w of running) await w.stop()
      workers.length = 0
      return {
        notifications: done.delivered,
        perSecond: done.delivered / seconds,
        seconds,
        p50: Math.round(percentile(latencies, 50)),
        p99: Math.round(percentile(latencies, 99))
      }
    }

    process.stderr.write('run 1: backlog, one worker\n')
    const one = await backlog('order.accepted', 1)
    process.stderr.write(`  ${one.perSecond.toFixed(0)} notifications/s\n`)
    process.stderr.write('run 2: backlog, two workers\n')
    const two = await backlog('order.rejected', 2)
    process.stderr.write(`  ${two.perSecond.toFixed(0)} notifications/s\n`)

    // Run 3: steady load below capacity; each event is one transaction (three notifications).
    const rate = RATE ?? Math.max(10, Math.floor(one.perSecond / 3 / 2))
    process.stderr.write(`run 3: steady load, one worker, ${rate} events/s (${rate * 3} notifications/s)\n`)
    const steadyWorker = await startWorker(env)
    workers.push(steadyWorker)
    const after = await lastEvent()
    const events = Math.ceil(N / 3)
    const started = Date.now()
    const inFlight = new Set<Promise<void>>()
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / rate
      const wait = due - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const p = bench.database.db.transaction((tx) => recordEvents(tx, [eventOf('order.completed', orderRefs[i % orderRefs.length]!)])).then(() => {})
      inFlight.add(p); p.finally(() => inFlight.delete(p))
      if (inFlight.size >= 8) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
    const producedSeconds = (Date.now() - started) / 1000
    let steady = await deliveredSince(after)
    await waitUntil(async () => {
      steady = await deliveredSince(after)
      return steady.finished >= expected(events)
    }, 600_000, 'steady load')
    await steadyWorker.stop()
    workers.length = 0
    // One event per transaction: recorded ≈ committed.
    const steadyLatencies = steady.finishedAt.map((at, i) => at - steady.occurredAt[i]!).sort((a, b) => a - b)

    // Each event's message goes to WhatsApp twice (the customer's and the messaging channel's), never more.
    const messages = [...receiver.messages.values()]
    const duplicates = messages.filter((n) => n > 2).length
    const lines = [
      '',
      `Machine: ${machineLine()}`,
      `Command: BENCH_NOTIFICATIONS=${N} BENCH_WORKER_CONCURRENCY=${CONCURRENCY} npm run bench:effects (PostgreSQL: ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded'})`,
      '',
      '| Run | Notifications | Result |',
      '|---|---|---|',
      `| Backlog drain, 1 worker | ${one.notifications} | **${one.perSecond.toFixed(0)} notifications/s** (${one.seconds.toFixed(1)} s; commit → delivered p50 ${one.p50} ms, p99 ${one.p99} ms) |`,
      `| Backlog drain, 2 workers | ${two.notifications} | **${two.perSecond.toFixed(0)} notifications/s** (${two.seconds.toFixed(1)} s; commit → delivered p50 ${two.p50} ms, p99 ${two.p99} ms) |`,
      `| Steady load, 1 worker, ${rate * 3} notifications/s offered | ${steady.delivered} (in ${producedSeconds.toFixed(1)} s) | commit → delivered **p50 ${Math.round(percentile(steadyLatencies, 50))} ms, p99 ${Math.round(percentile(steadyLatencies, 99))} ms** (max ${Math.round(steadyLatencies[steadyLatencies.length - 1] ?? NaN)} ms) |`,
      '',
      `WhatsApp messages: ${messages.reduce((a, b) => a + b, 0)} for ${messages.length} events; events sent more than twice: ${duplicates}.`
    ]
    process.stdout.write(lines.join('\n') + '\n')
  } finally {
    for (const w of workers) await w.stop().catch(() => {})
    await receiver.close()
    await bench.dispose()
  }
}

main().catch((err) => {
  process.stderr.write(`bench:effects failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  process.exit(1)
})
