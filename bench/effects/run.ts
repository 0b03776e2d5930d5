/*
 * Effects delivery benchmark (`npm run bench:effects`).
 *
 * Real worker processes (`bin/order-exchange.js worker`) deliver `notify` jobs to a webhook receiver on
 * 127.0.0.1 in this process; notifications are enqueued the way the status update does it
 * (enqueueNotifications on a transaction). Three runs on one fresh database:
 *   1. backlog, one worker: N notifications committed at once, time until the last one is received;
 *   2. backlog, two workers: the same with two worker processes;
 *   3. steady load, one worker: N notifications committed 3 per transaction (one order event) at a fixed
 *      rate (half the measured one-worker throughput unless set), latency commit → receipt per notification.
 *
 * Sizes: BENCH_NOTIFICATIONS (default 10000), BENCH_WORKER_CONCURRENCY (default 10),
 * BENCH_RATE (events/s of run 3; each event is 3 notifications). Quick smoke run:
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
import { enqueueNotifications } from '../../src/effects/enqueue.js'
import { notificationEventId, type NotificationChannel, type NotificationEventType, type NotifyPayload } from '../../src/effects/jobs.js'
import { EVENT_STATUS } from '../../src/effects/jobs.js'
import { verifySignature } from '../../test/helpers/webhook-signature.js'

const N = numberKnob('BENCH_NOTIFICATIONS', 10_000, { min: 1, integer: true })
const CONCURRENCY = numberKnob('BENCH_WORKER_CONCURRENCY', 10, { min: 1, integer: true })
/** Events/s of run 3; unset: half the one-worker throughput measured in run 1 (read here, checked before any run). */
const RATE = numberKnob('BENCH_RATE', undefined, { above: 0 })
const SECRET = 'whsec_YmVuY2gtd2ViaG9vay1zZWNyZXQtMDEy'
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/order-exchange.js')
const CHANNELS: NotificationChannel[] = ['seller', 'customer', 'messaging']

interface Receipt { at: number, verified: boolean }

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

async function startReceiver (): Promise<{
  url: string, receipts: Map<string, Receipt>, duplicates: () => number, close: () => Promise<void>
}> {
  const receipts = new Map<string, Receipt>()
  let duplicates = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const at = Date.now()
      const id = req.headers['x-order-exchange-event-id'] as string
      const raw = Buffer.concat(chunks).toString('utf8')
      if (receipts.has(id)) duplicates++
      else receipts.set(id, { at, verified: verifySignature(SECRET, raw, req.headers['x-order-exchange-signature'] as string) })
      res.writeHead(204).end()
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    receipts,
    duplicates: () => duplicates,
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

async function waitUntil (check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

async function main (): Promise<void> {
  const orders = Math.ceil(N / 3)
  process.stderr.write(`effects bench: ${N} notifications per run, worker concurrency ${CONCURRENCY}\n`)
  const bench = await benchDatabase('effects', { max: 10 })
  const receiver = await startReceiver()
  const workers: Array<{ stop: () => Promise<void> }> = []
  try {
    await seed(bench.database, { orders, seed: 1, anchor: DEFAULT_ANCHOR, autoRejectAfterMs: 0 })
    const rows = await bench.database.sql`select id, seller_id from orders order by id limit ${orders}`
    const orderRefs = rows.map((r) => ({ id: Number(r.id), sellerId: r.seller_id as number }))
    const env = {
      DATABASE_URL: bench.url,
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: String(CONCURRENCY),
      NOTIFY_SELLER_TRANSPORT: 'webhook',
      NOTIFY_CUSTOMER_TRANSPORT: 'webhook',
      NOTIFY_MESSAGING_TRANSPORT: 'webhook',
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: SECRET
    }
    const eventsOf = (
      type: NotificationEventType, order: { id: number, sellerId: number }
    ): NotifyPayload[] => CHANNELS.map((channel) => ({
      eventId: notificationEventId(order.id, EVENT_STATUS[type], channel),
      eventType: type,
      channel,
      orderId: order.id,
      sellerId: order.sellerId,
      reason: type === 'order.rejected' ? 'Out of stock' : null,
      occurredAt: new Date().toISOString()
    }))
    const allOf = (type: NotificationEventType): NotifyPayload[] =>
      orderRefs.flatMap((o) => eventsOf(type, o)).slice(0, N)

    /** Backlog: N committed in one transaction, then drained by `count` workers already running. */
    const backlog = async (type: NotificationEventType, count: number) => {
      receiver.receipts.clear()
      const running = []
      for (let i = 0; i < count; i++) running.push(await startWorker(env))
      workers.push(...running)
      const payloads = allOf(type)
      await bench.database.db.transaction(async (tx) => {
        for (let i = 0; i < payloads.length; i += 2000) await enqueueNotifications(tx, payloads.slice(i, i + 2000))
      })
      const committed = Date.now()
      await waitUntil(() => receiver.receipts.size >= payloads.length, 600_000, `backlog of ${payloads.length}`)
      const latencies = [...receiver.receipts.values()].map((r) => r.at - committed).sort((a, b) => a - b)
      const seconds = (latencies[latencies.length - 1]) / 1000
      for (const w of running) await w.stop()
      workers.length = 0
      return {
        perSecond: payloads.length / seconds,
        seconds,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        verified: [...receiver.receipts.values()].every((r) => r.verified)
      }
    }

    process.stderr.write('run 1: backlog, one worker\n')
    const one = await backlog('order.accepted', 1)
    process.stderr.write(`  ${one.perSecond.toFixed(0)} notifications/s\n`)
    process.stderr.write('run 2: backlog, two workers\n')
    const two = await backlog('order.rejected', 2)
    process.stderr.write(`  ${two.perSecond.toFixed(0)} notifications/s\n`)

    // Run 3: steady load below capacity; each event is one transaction of three notifications.
    const rate = RATE ?? Math.max(10, Math.floor(one.perSecond / 3 / 2))
    process.stderr.write(`run 3: steady load, one worker, ${rate} events/s (${rate * 3} notifications/s)\n`)
    receiver.receipts.clear()
    const steadyWorker = await startWorker(env)
    workers.push(steadyWorker)
    const events = Math.ceil(N / 3)
    const committedAt = new Map<string, number>()
    const started = Date.now()
    const inFlight = new Set<Promise<void>>()
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / rate
      const wait = due - Date.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      const payloads = eventsOf('order.completed', orderRefs[i % orderRefs.length])
      const p = bench.database.db.transaction((tx) => enqueueNotifications(tx, payloads)).then(() => {
        const at = Date.now()
        for (const pl of payloads) committedAt.set(pl.eventId, at)
      })
      inFlight.add(p); p.finally(() => inFlight.delete(p))
      if (inFlight.size >= 8) await Promise.race(inFlight)
    }
    await Promise.all(inFlight)
    const producedSeconds = (Date.now() - started) / 1000
    await waitUntil(() => receiver.receipts.size >= committedAt.size, 600_000, 'steady load')
    const steady = [...committedAt].map(([id, at]) => receiver.receipts.get(id)!.at - at).sort((a, b) => a - b)
    await steadyWorker.stop()
    workers.length = 0

    const duplicates = receiver.duplicates()
    const allVerified = one.verified && two.verified
    const lines = [
      '',
      `Machine: ${machineLine()}`,
      `Command: BENCH_NOTIFICATIONS=${N} BENCH_WORKER_CONCURRENCY=${CONCURRENCY} npm run bench:effects (PostgreSQL: ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded'})`,
      '',
      '| Run | Notifications | Result |',
      '|---|---|---|',
      `| Backlog drain, 1 worker | ${N} | **${one.perSecond.toFixed(0)} notifications/s** (${one.seconds.toFixed(1)} s; commit → receipt p50 ${one.p50} ms, p99 ${one.p99} ms) |`,
      `| Backlog drain, 2 workers | ${N} | **${two.perSecond.toFixed(0)} notifications/s** (${two.seconds.toFixed(1)} s; commit → receipt p50 ${two.p50} ms, p99 ${two.p99} ms) |`,
      `| Steady load, 1 worker, ${rate * 3} notifications/s offered | ${committedAt.size} (in ${producedSeconds.toFixed(1)} s) | commit → receipt **p50 ${percentile(steady, 50)} ms, p99 ${percentile(steady, 99)} ms** (max ${steady[steady.length - 1]} ms) |`,
      '',
      `Duplicate deliveries: ${duplicates}. Signatures verified: ${allVerified ? 'all' : 'NOT ALL'}.`
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
