import { fork, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import pino from 'pino'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { loadConfig } from '../../src/config.js'
import { issueCredential, type Caller } from '../../src/credentials/service.js'
import { openDatabase, type Db } from '../../src/db/client.js'
import { placeOrders } from '../../src/platform/place-orders.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { updateOrderStatuses } from '../../src/status-update/update-batch.js'
import { Deliverer } from '../../src/delivery/deliverer.js'
import { logTransport } from '../../src/effects/transports/log.js'
import { createEndpoint, deleteEndpoint } from '../../src/webhooks/endpoints.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { benchDatabase, machineLine, type BenchDb } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { allProcCpu } from '../lib/proc-cpu.js'
import { ordersIn, placementMaker, statusBatchMaker } from './fixtures.js'
import { median } from '../lib/median.js'

/*
 * BENCH_WEBHOOKS=1 npm run bench:events — issue 25: the sellers' webhook endpoints, against the issue's
 * three targets, in one process (the receiver in a child process, receiver.ts), on one fresh database:
 *
 *   1. throughput: BENCH_WH_EVENTS (5,000) events of seller 1 recorded first (half placements, half status
 *      changes of those orders, so every order has two events that must go in order) with BENCH_WH_ENDPOINTS
 *      (4) enabled endpoints on the receiver, no deliverer running; then a Deliverer (concurrency
 *      BENCH_WH_CONCURRENCY, 64) starts and the time until every delivery is DELIVERED in
 *      deliveries is taken: deliveries a second (goal ≥ 2,000), with the statements it sent and
 *      the CPU it cost (this process, the receiver, PostgreSQL) per delivery;
 *   2. latency: BENCH_WH_RATE (200) events a second for BENCH_WH_SECONDS (20) s, a write every
 *      BENCH_WH_TICK_MS (50) ms on its schedule (placements of new orders, then status changes of the
 *      orders the write before placed), the deliverer running: receipt time minus the event's `timestamp`
 *      (taken in the recording statement, the last before commit) for every delivery, p50/p95/p99 (goal
 *      p99 < 500 ms). The deliverer's own sweep runs every 60 s, so sub-second figures are its wake-up by
 *      the trigger's NOTIFY; the bench also LISTENs and counts the notifications;
 *   3. the status update: bench:status-like batches of BENCH_STATUS_BATCH (600) through updateOrderStatuses
 *      with 4 enabled endpoints (the trigger finds one and sends NOTIFY) and with none (the endpoints deleted,
 *      so the trigger's probe finds nothing), alternating, BENCH_RUNS (6) batches each, medians; twice:
 *      (a) with no deliverer running (the write path alone), (b) with the deliverer running in this process,
 *      its deliveries of a batch awaited, untimed, before the next batch starts (delivery is after commit).
 *
 * Endpoints are made with createEndpoint and removed with deleteEndpoint; the deliverer has its own pool
 * (as in a worker process), whose statements are counted and timed. BENCH_DATABASE_URL picks the server
 * (else an embedded PostgreSQL); PostgreSQL's CPU (this database's backends) is read from /proc when the
 * server runs on this machine. BENCH_WH_TRY_SQL, a statement run on the bench's database after the
 * migrations, tries a change of the schema (an index) before its migration is written.
 * Quick run: BENCH_WEBHOOKS=1 BENCH_ORDERS=10000 BENCH_WH_SECONDS=15 BENCH_RUNS=4 npm run bench:events
 */

const ORDERS = numberKnob('BENCH_ORDERS', 10_000, { min: 1, integer: true })
const EVENTS = numberKnob('BENCH_WH_EVENTS', 5000, { min: 1, integer: true })
const CONCURRENCY = numberKnob('BENCH_WH_CONCURRENCY', 64, { min: 1, integer: true })
const RATE = numberKnob('BENCH_WH_RATE', 200, { above: 0 })
const SECONDS = numberKnob('BENCH_WH_SECONDS', 20, { above: 0 })
const TICK_MS = numberKnob('BENCH_WH_TICK_MS', 50, { above: 0 })
const RUNS = numberKnob('BENCH_RUNS', 6, { min: 1, integer: true })
const STATUS_BATCH = numberKnob('BENCH_STATUS_BATCH', 600, { min: 1, integer: true })
const TRY_SQL = process.env.BENCH_WH_TRY_SQL
/** Endpoints of the one seller (at most MAX_ENDPOINTS, 10): each has its own in-flight cap (deliveries.ts). */
const ENDPOINTS = numberKnob('BENCH_WH_ENDPOINTS', 4, { min: 1, max: 10, integer: true })
const SELLER = 1
/** The production default of WEBHOOK_DELIVERY_TIMEOUT_MS. */
const TIMEOUT_MS = 15_000
const POLL_MS = 100

type Mode = 'endpoints' | 'none'
const MODES: Mode[] = ['endpoints', 'none']

const here = path.dirname(fileURLToPath(import.meta.url))
const log = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`) }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const fixed = (n: number, digits = 0): string => n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

interface Receiver { child: ChildProcess, url: string }
interface Taken { hits: number, bytes: number, connections: number, latencies: number[] }

async function startReceiver (): Promise<Receiver> {
  const child = fork(path.join(here, 'receiver.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)))
  })
  return { child, url: `http://127.0.0.1:${port}` }
}

function take (receiver: Receiver): Promise<Taken> {
  return new Promise((resolve) => {
    const listener = (m: unknown): void => {
      if (typeof m === 'object' && m !== null && 'taken' in m) {
        receiver.child.off('message', listener)
        resolve((m as { taken: Taken }).taken)
      }
    }
    receiver.child.on('message', listener)
    receiver.child.send('take')
  })
}

/** The statements a deliverer sends, by kind (deliveries.ts, dispatch.ts). */
const STATEMENT_KINDS: Array<[string, RegExp]> = [
  ['claim', /from due join deliveries q/],
  ['secrets', /as "previousSecret"/],
  ['record attempts', /with r as/],
  ['endpoint health', /failing_since/],
  ['event bodies', /with wanted as materialized/],
  ['dispatch', /with sub as materialized|c\.last_sequence > coalesce\(k\.last_sequence, 0\)/],
  ['next due', /min\(d\.next_attempt_at\)|lease_ends/]
]

interface Timing { count: number, ms: number }
type Timings = Map<string, Timing>

/**
 * The deliverer's statements, counted and timed by kind as it sees them (from the call to the rows in
 * hand, so a wait for one of its pool's connections counts): its `db` is wrapped, not changed.
 */
class StatementTimes {
  private readonly byKind: Timings = new Map()
  private readonly dialect = new PgDialect()

  wrap (db: Db): Db {
    return new Proxy(db, {
      get: (target, prop, receiver) => {
        if (prop !== 'execute') return Reflect.get(target, prop, receiver)
        return async (query: SQL) => {
          const t = performance.now()
          try {
            return await target.execute(query)
          } finally {
            this.add(this.dialect.sqlToQuery(query).sql, performance.now() - t)
          }
        }
      }
    })
  }

  private add (text: string, ms: number): void {
    const kind = STATEMENT_KINDS.find(([, re]) => re.test(text))?.[0] ?? 'other'
    const timing = this.byKind.get(kind) ?? { count: 0, ms: 0 }
    timing.count++
    timing.ms += ms
    this.byKind.set(kind, timing)
  }

  snapshot (): Timings { return new Map([...this.byKind].map(([k, v]) => [k, { ...v }])) }
  since (before: Timings): Timings {
    return new Map([...this.byKind].map(([k, v]) =>
      [k, { count: v.count - (before.get(k)?.count ?? 0), ms: v.ms - (before.get(k)?.ms ?? 0) }]))
  }
}

/** CPU ms so far of this process, the receiver and (when the server runs here) this database's backends. */
interface Cpu { node: number, receiver: number, postgres: Map<number, number> | null }

async function cpuNow (receiver: Receiver, database: BenchDb, local: boolean): Promise<Cpu> {
  const backends = local
    ? (await database.sql`select pid from pg_stat_activity where datname = current_database()`).map((r) => Number(r.pid))
    : []
  const all = allProcCpu()
  const usage = process.cpuUsage()
  return {
    node: (usage.user + usage.system) / 1000,
    receiver: all.get(receiver.child.pid!)?.ownMs ?? 0,
    // Other work on the same server (other databases) is left out; a backend that ended meanwhile is too.
    postgres: local ? new Map(backends.filter((pid) => all.has(pid)).map((pid) => [pid, all.get(pid)!.ownMs])) : null
  }
}

/** CPU ms between two readings, by part. */
function cpuSpent (a: Cpu, b: Cpu): { node: number, receiver: number, postgres: number | null } {
  let postgres: number | null = null
  if (a.postgres !== null && b.postgres !== null) {
    postgres = 0
    for (const [pid, ms] of b.postgres) postgres += ms - (a.postgres.get(pid) ?? 0)
  }
  return { node: b.node - a.node, receiver: b.receiver - a.receiver, postgres }
}

interface DeliveryCounts { total: number, delivered: number, pending: number, failed: number, retried: number }

async function deliveryCounts (database: BenchDb): Promise<DeliveryCounts> {
  const [row] = await database.sql`select count(*)::int as total,
    count(*) filter (where d.status = 'DELIVERED')::int as delivered, count(*) filter (where d.status = 'PENDING')::int as pending,
    count(*) filter (where d.status = 'FAILED')::int as failed, count(*) filter (where d.attempts > 1)::int as retried
    from deliveries d join subscriptions s on s.id = d.subscription_id where s.kind = 'seller-webhook'`
  return row as unknown as DeliveryCounts
}

/** Waits until `total` deliveries are queued and none is pending; throws after `ms`. */
async function drained (database: BenchDb, total: number, ms = 120_000): Promise<DeliveryCounts> {
  const deadline = performance.now() + ms
  for (;;) {
    const counts = await deliveryCounts(database)
    if (counts.total >= total && counts.pending === 0) return counts
    if (performance.now() > deadline) throw new Error(`deliveries not done: ${JSON.stringify(counts)} of ${total}`)
    await sleep(POLL_MS)
  }
}

async function lastSequence (database: BenchDb): Promise<number> {
  const [row] = await database.sql`select coalesce(max(last_sequence), 0)::int as n from seller_event_counters where seller_id = ${SELLER}`
  return row!.n as number
}

export async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const bench = await benchDatabase('webhooks')
  const receiver = await startReceiver()
  const statements = new StatementTimes()
  // The deliverer's own pool, as in a worker process (DB_POOL_MAX's default).
  const delivererDb = openDatabase(bench.url, { max: 10, application: 'oxs-bench-deliverer' })
  const config = loadConfig({ DATABASE_URL: bench.url, LOG_LEVEL: 'silent', ORDER_EXCHANGE_ENV: 'testing' })
  const box = SecretBox.of(config)!
  const logger = pino({ level: 'warn' })
  const notices = logTransport(logger)
  const deliverer = (): Deliverer => new Deliverer({
    db: statements.wrap(delivererDb.db),
    sessionUrl: bench.url,
    box,
    operator: null,
    // The notification channels every database has, to the log (at warn: not written), as in testing.
    channels: { seller: notices, customer: notices, messaging: notices },
    logger,
    concurrency: CONCURRENCY,
    timeoutMs: TIMEOUT_MS,
    allowPrivateNetworks: true
  })
  try {
    const { database } = bench
    const sql = database.sql
    const t0 = performance.now()
    await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    // To try a change of the schema (an index) before writing its migration: run on this database only.
    if (TRY_SQL) {
      await sql.unsafe(TRY_SQL)
      log(`tried: ${TRY_SQL}`)
    }
    await sql`vacuum analyze`
    await sql`checkpoint`
    log(`seeded ${ORDERS.toLocaleString('en')} orders in ${((performance.now() - t0) / 1000).toFixed(0)} s; receiver at ${receiver.url}`)
    const [{ pid }] = await sql`select pg_backend_pid() as pid`
    const local = allProcCpu().has(Number(pid))

    const placement = await placementMaker(sql, SELLER)
    const place = async (n: number): Promise<number[]> => {
      const rows = placement(n)
      const outcome = await placeOrders(database.db, rows, { credentialId: null, autoRejectAfterMs: 24 * 3600 * 1000 })
      if (outcome.inserted !== n) throw new Error(`placement: ${JSON.stringify(outcome).slice(0, 300)}`)
      return rows.map((r) => Number(r.orderId))
    }
    const { id: credentialId } = await issueCredential(database.db, { sellerId: SELLER, kind: 'api-key', environment: 'testing' })
    const caller: Caller = { credentialId, sellerId: SELLER, kind: 'api-key', environment: 'testing', storeIds: null }
    const update = async (items: unknown[]): Promise<void> => {
      const outcome = await updateOrderStatuses(database.db, { seller: caller }, items)
      if (outcome.failed !== 0) throw new Error(`status update: ${JSON.stringify(outcome.errors.slice(0, 3))}`)
    }
    // Two thirds accepted, a third rejected: the second event of orders just placed.
    const moveOn = (ids: number[]): unknown[] => ids.map((id, i) => i % 3 === 2
      ? { Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' }
      : { Order_id: id, Order_Status: 'ORDER_ACCEPTED' })

    let endpointIds: string[] = []
    const createEndpoints = async (): Promise<void> => {
      for (let i = 1; i <= ENDPOINTS; i++) {
        const made = await database.db.transaction((tx) =>
          createEndpoint(tx, { sellerId: SELLER, storeIds: null }, { url: `${receiver.url}/endpoint-${i}`, types: null, description: `bench ${i}` }, box))
        endpointIds.push(made.id)
      }
    }
    const deleteEndpoints = async (): Promise<void> => {
      const scope = { sellerId: SELLER, storeIds: null }
      for (const id of endpointIds) await database.db.transaction((tx) => deleteEndpoint(tx, scope, id))
      endpointIds = []
    }

    // 1. Throughput: a backlog of EVENTS events × ENDPOINTS endpoints, then the deliverer started on it.
    await createEndpoints()
    const from = await lastSequence(database)
    const backlog: number[] = []
    for (let left = EVENTS / 2; left > 0; left -= 1000) backlog.push(...await place(Math.min(1000, left)))
    for (let i = 0; i < backlog.length; i += 600) await update(moveOn(backlog.slice(i, i + 600)))
    const events1 = await lastSequence(database) - from
    const expected1 = events1 * ENDPOINTS
    await sql`vacuum analyze`
    log(`throughput: ${events1} events × ${ENDPOINTS} endpoints = ${expected1} deliveries; deliverer concurrency ${CONCURRENCY}`)
    const taken0 = await take(receiver)
    const cpu0 = await cpuNow(receiver, database, local)
    const st0 = statements.snapshot()
    const d1 = deliverer()
    const started = performance.now()
    await d1.start()
    const counts1 = await drained(database, expected1)
    const seconds1 = (performance.now() - started) / 1000
    const cpu1 = await cpuNow(receiver, database, local)
    const st1 = statements.since(st0)
    const taken1 = await take(receiver)
    await d1.stop()
    const rate1 = counts1.delivered / seconds1
    log(`  ${counts1.delivered} delivered in ${seconds1.toFixed(2)} s: ${rate1.toFixed(0)} deliveries/s ` +
      `(receiver hits ${taken1.hits - taken0.hits}, connections ${taken1.connections - taken0.connections}, failed ${counts1.failed}, retried ${counts1.retried})`)
    log(`  statements: ${[...st1].map(([k, v]) => `${k} ${v.count} (${v.ms.toFixed(0)} ms)`).join(', ')}`)

    // 2. Latency: RATE events a second, a write every TICK_MS on its schedule (not after the one before:
    // a slow write does not slow the arrival of the next), placements and then status changes of them.
    const d2 = deliverer()
    await d2.start()
    await take(receiver)
    const before2 = await deliveryCounts(database)
    const st2 = statements.snapshot()
    let notifications = 0
    const listening = await sql.listen('seller_events', () => { notifications++ })
    const perWrite = Math.max(1, Math.round(RATE * TICK_MS / 1000))
    const ticks = Math.round(SECONDS * 1000 / TICK_MS)
    const from2 = await lastSequence(database)
    log(`latency: ${perWrite} events every ${TICK_MS} ms (${fixed(perWrite * 1000 / TICK_MS)} events/s) for ${SECONDS} s`)
    const writes: Array<Promise<number[]>> = []
    const writeMs: number[] = []
    let late = 0
    const start2 = performance.now()
    for (let k = 0; k < ticks; k++) {
      const wait = start2 + k * TICK_MS - performance.now()
      if (wait > 0) await sleep(wait); else if (wait < -TICK_MS) late++
      const previous = writes[k - 1]
      const t = performance.now()
      const write = k % 2 === 0
        ? place(perWrite)
        : previous!.then(async (ids) => { await update(moveOn(ids)); return [] })
      writes.push(write.then((ids) => { writeMs.push(performance.now() - t); return ids }))
    }
    await Promise.all(writes)
    const writeSeconds = (performance.now() - start2) / 1000
    const events2 = await lastSequence(database) - from2
    // Events still not queued for an endpoint a while after the last write's notification: their wake-up
    // was lost, and they wait for a later notification or the 60 s sweep.
    await sleep(2000)
    const [behind] = await sql`select count(*)::int as endpoints,
        coalesce(sum(c.last_sequence - coalesce(k.last_sequence, 0)), 0)::int as events
      from subscriptions w join seller_event_counters c on c.seller_id = w.seller_id
      left join subscription_cursors k on k.subscription_id = w.id and k.seller_id = c.seller_id
      where w.kind = 'seller-webhook' and w.status = 'ENABLED' and coalesce(k.last_sequence, 0) < c.last_sequence`
    const counts2 = await drained(database, before2.total + events2 * ENDPOINTS)
    const taken2 = await take(receiver)
    await listening.unlisten()
    const st2d = statements.since(st2)
    await d2.stop()
    const latencies = taken2.latencies.sort((a, b) => a - b)
    const overSecond = latencies.filter((ms) => ms > 1000).length
    const lat = {
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies.at(-1)!
    }
    const writesSorted = writeMs.sort((a, b) => a - b)
    log(`  ${events2} events in ${writeSeconds.toFixed(1)} s (${(events2 / writeSeconds).toFixed(0)}/s), ` +
      `${latencies.length} deliveries: p50 ${lat.p50.toFixed(0)} p95 ${lat.p95.toFixed(0)} p99 ${lat.p99.toFixed(0)} ` +
      `max ${lat.max.toFixed(0)} ms; ${notifications} notifications, ${st2d.get('dispatch')?.count ?? 0} dispatch statements; ` +
      `writes p50 ${percentile(writesSorted, 50).toFixed(0)} ms, p99 ${percentile(writesSorted, 99).toFixed(0)} ms, late ${late}`)

    // 3. The status update with and without enabled endpoints. Orders for it: the seller's placed and
    // accepted ones, topped up with new placements (made with no endpoint, so nothing is queued for them).
    await deleteEndpoints()
    const perBatch = (size: number) => ({ placed: size - Math.floor(size / 3), accepted: Math.floor(size / 3) })
    const batches = [30, 30, ...Array<number>(2 * RUNS).fill(STATUS_BATCH)]
    const need = batches.map(perBatch)
      .reduce((a, b) => ({ placed: a.placed + b.placed, accepted: a.accepted + b.accepted }))
    let placed = await ordersIn(sql, SELLER, 'ORDER_PLACED')
    let accepted = await ordersIn(sql, SELLER, 'ORDER_ACCEPTED')
    const toAccept = Math.max(0, 2 * need.accepted - accepted.length)
    const toPlace = Math.max(0, 2 * need.placed + toAccept - placed.length)
    for (let left = toPlace; left > 0; left -= 1000) await place(Math.min(1000, left))
    placed = await ordersIn(sql, SELLER, 'ORDER_PLACED')
    for (let i = 0; i < toAccept; i += 600) {
      await update(placed.splice(0, Math.min(600, toAccept - i)).map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
    }
    placed = await ordersIn(sql, SELLER, 'ORDER_PLACED')
    accepted = await ordersIn(sql, SELLER, 'ORDER_ACCEPTED')
    await sql`vacuum analyze`
    await sql`checkpoint`
    const batch = statusBatchMaker(placed, accepted)

    // The trigger itself (migration 0014), as PostgreSQL times it: an insert into seller_events, rolled back.
    const triggerMs = async (): Promise<number> => {
      const times: number[] = []
      for (let i = 0; i < 21; i++) {
        await sql.begin(async (tx) => {
          const [row] = await tx.unsafe(`explain (analyze, format json) insert into seller_events (seller_id, sequence, type, occurred_at)
            values (${SELLER}, ${9e15 + i}, 'webhook.test', now())`)
          const triggers = (row!['QUERY PLAN'] as Array<{ Triggers: Array<{ 'Trigger Name': string, Time: number }> }>)[0]!.Triggers
          times.push(triggers.find((t) => t['Trigger Name'] === 'seller_events_notify')!.Time)
          throw new Error('rolled back')
        }).catch((err: Error) => { if (err.message !== 'rolled back') throw err })
      }
      return median(times)
    }
    await createEndpoints()
    const trigger = { endpoints: await triggerMs(), none: 0 }
    await deleteEndpoints()
    trigger.none = await triggerMs()
    log(`  the trigger: ${trigger.endpoints.toFixed(3)} ms a statement with endpoints, ${trigger.none.toFixed(3)} ms with none`)

    interface Variant { name: string, medians: Map<Mode, number>, pairs: number[], drainMs: number[] }
    const variants: Variant[] = []
    for (const running of [false, true]) {
      const name = running ? 'deliverer running (this process)' : 'no deliverer'
      const d3 = running ? deliverer() : null
      await d3?.start()
      const times = new Map<Mode, number[]>(MODES.map((m) => [m, []]))
      const drainMs: number[] = []
      log(`status updates, ${name}: batches of ${STATUS_BATCH}, ${RUNS} each way`)
      const run = async (mode: Mode, n: number): Promise<void> => {
        if (mode === 'endpoints' && endpointIds.length === 0) await createEndpoints()
        if (mode === 'none' && endpointIds.length > 0) await deleteEndpoints()
        const items = batch(n < 0 ? 30 : STATUS_BATCH)
        const queued = d3 !== null && mode === 'endpoints' ? (await deliveryCounts(database)).total : 0
        const t = performance.now()
        await update(items)
        const ms = performance.now() - t
        if (n >= 0) times.get(mode)!.push(ms)
        if (d3 !== null && mode === 'endpoints') {
          // Its deliveries (one event an order), before the next batch, untimed: every batch starts with an
          // idle deliverer.
          await drained(database, queued + items.length * ENDPOINTS)
          if (n >= 0) drainMs.push(performance.now() - t - ms)
        }
      }
      for (const mode of MODES) await run(mode, -1)
      for (let n = 0; n < RUNS; n++) {
        for (const mode of n % 2 === 0 ? MODES : [...MODES].reverse()) await run(mode, n)
      }
      await d3?.stop()
      await deleteEndpoints()
      const medians = new Map(MODES.map((m) => [m, median(times.get(m)!)]))
      // Each run's two batches back to back: their ratio, so that the spread shows what is noise here.
      const pairs = times.get('endpoints')!.map((ms, n) => times.get('none')![n]! / ms).sort((a, b) => a - b)
      log(`  with endpoints ${medians.get('endpoints')!.toFixed(0)} ms, without ${medians.get('none')!.toFixed(0)} ms a batch` +
        (drainMs.length > 0 ? `; its ${STATUS_BATCH * ENDPOINTS} deliveries done ${median(drainMs).toFixed(0)} ms after it returned` : ''))
      variants.push({ name, medians, pairs, drainMs })
    }

    // The results, as the tables of bench/results/2026-11-26-webhook-deliveries.md.
    const server = process.env.BENCH_DATABASE_URL ? 'at BENCH_DATABASE_URL' : 'embedded'
    process.stdout.write(`\n${machineLine()}; PostgreSQL ${server}; ${ORDERS.toLocaleString('en')} seeded orders; ` +
      `${ENDPOINTS} endpoints on a receiver in a child process; deliverer concurrency ${CONCURRENCY}\n\n`)
    process.stdout.write('| 1. throughput | deliveries | seconds | deliveries/s | goal ≥ 2,000/s |\n|---|---:|---:|---:|---|\n')
    process.stdout.write(`| ${events1} events × ${ENDPOINTS} endpoints, backlog | ${counts1.delivered} | ${seconds1.toFixed(2)} | ` +
      `${rate1.toFixed(0)} | ${rate1 >= 2000 ? 'met' : `missed (${(100 * rate1 / 2000).toFixed(0)} % of it)`} |\n`)
    const spent = cpuSpent(cpu0, cpu1)
    const perDelivery = (ms: number | null): string => ms === null ? 'n/a' : (ms / counts1.delivered).toFixed(3)
    process.stdout.write(`\nCPU ms a delivery: this process (deliverer) ${perDelivery(spent.node)}, receiver ${perDelivery(spent.receiver)}, ` +
      `PostgreSQL (this database's backends) ${perDelivery(spent.postgres)}; failed ${counts1.failed}, retried ${counts1.retried}; ` +
      `${taken1.connections - taken0.connections} connections for ${taken1.hits - taken0.hits} requests (keep-alive)\n`)
    process.stdout.write('\n| the deliverer\'s statements (part 1) | count | per 1,000 deliveries | mean ms | total s |\n|---|---:|---:|---:|---:|\n')
    for (const [kind, v] of st1) {
      if (v.count === 0) continue
      process.stdout.write(`| ${kind} | ${v.count} | ${(1000 * v.count / counts1.delivered).toFixed(1)} | ${(v.ms / v.count).toFixed(1)} | ` +
        `${(v.ms / 1000).toFixed(1)} |\n`)
    }
    process.stdout.write(`\n| 2. latency at ${fixed(events2 / writeSeconds)} events/s for ${writeSeconds.toFixed(0)} s | deliveries | p50 ms | p95 ms | p99 ms | max ms | goal p99 < 500 ms |\n` +
      '|---|---:|---:|---:|---:|---:|---|\n')
    process.stdout.write(`| commit → received (${events2} events × ${ENDPOINTS}) | ${latencies.length} | ${lat.p50.toFixed(0)} | ${lat.p95.toFixed(0)} | ` +
      `${lat.p99.toFixed(0)} | ${lat.max.toFixed(0)} | ${lat.p99 < 500 ? 'met' : 'missed'} |\n`)
    process.stdout.write(`\nwake-up: ${notifications} notifications on seller_events, ${st2d.get('dispatch')?.count ?? 0} dispatch statements, ` +
      `${st2d.get('claim')?.count ?? 0} claims over ${writeSeconds.toFixed(0)} s (the sweep: every 60 s); writes p50 ` +
      `${percentile(writesSorted, 50).toFixed(0)} ms, p99 ${percentile(writesSorted, 99).toFixed(0)} ms, ${late} started over a tick late; ` +
      `failed ${counts2.failed - before2.failed}, retried ${counts2.retried - before2.retried}\n`)
    process.stdout.write(`\nlate: ${overSecond} deliveries over 1 s; 2 s after the last write, ${behind!.events} event(s) × endpoint ` +
      `not yet queued (${behind!.endpoints} endpoint(s) behind: a lost wake-up, left for a later notification or the sweep)\n`)
    process.stdout.write(`\n| 3. status update, batch of ${STATUS_BATCH} | with ${ENDPOINTS} endpoints: orders/s | no endpoint: orders/s | ` +
      'with / without (medians) | runs\' own ratios: median (range) | deliveries done after |\n|---|---:|---:|---:|---:|---:|\n')
    for (const v of variants) {
      const [withMs, withoutMs] = MODES.map((m) => v.medians.get(m)!)
      process.stdout.write(`| ${v.name} | ${fixed(STATUS_BATCH / (withMs! / 1000))} | ${fixed(STATUS_BATCH / (withoutMs! / 1000))} | ` +
        `${(100 * withoutMs! / withMs!).toFixed(0)} % | ${(100 * median(v.pairs)).toFixed(0)} % ` +
        `(${(100 * v.pairs[0]!).toFixed(0)}–${(100 * v.pairs.at(-1)!).toFixed(0)} %) | ` +
        `${v.drainMs.length > 0 ? `${median(v.drainMs).toFixed(0)} ms` : '—'} |\n`)
    }
    process.stdout.write('\nthe trigger itself (EXPLAIN ANALYZE of an insert into seller_events, rolled back, median of 21): ' +
      `${trigger.endpoints.toFixed(3)} ms a statement with ${ENDPOINTS} enabled endpoints (EXISTS + pg_notify), ` +
      `${trigger.none.toFixed(3)} ms with none\n`)
  } finally {
    receiver.child.send('stop')
    await delivererDb.close()
    await bench.dispose()
  }
}
