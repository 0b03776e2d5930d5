import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres from 'postgres'
import { benchDatabase, machineLine, type BenchDatabase } from '../lib/database.js'
import { alternate, WRITE_TABLE_HEAD, writeTableRow } from '../lib/event-log-ab.js'
import { numberKnob } from '../lib/knobs.js'
import { allProcCpu, parseProcStat } from '../lib/proc-cpu.js'
import { copyInto } from '../shipment-sync/rows.js'
import { issueCredential } from '../../src/credentials/service.js'
import { openClient } from '../../src/db/client.js'
import * as schema from '../../src/db/schema.js'
import { placeOrders } from '../../src/platform/place-orders.js'
import { PLATFORM_ORDERS_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'
import { Random } from '../../src/seed/random.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import {
  COPY_COLUMNS, copyText, emptyExpected, expect, ID_BASE, makeOrder, makeWorld, orderRow, sellerRows,
  type Expected, type GeneratedOrder, type World
} from './orders.js'

/*
 * Platform intake benchmark (`npm run bench:intake`): orders placed by the marketplace through
 * POST /v2/platform/orders, over real HTTP, into a database that already holds a million orders.
 *
 *   1. a fresh database (embedded PostgreSQL, or BENCH_DATABASE_URL's server), BENCH_BACKGROUND_ORDERS
 *      (1,000,000) background orders written by the demo seed, VACUUM ANALYZE;
 *   2. the intake world: sellers by PUT /v2/platform/sellers (half with auto-rejection on), retailers,
 *      their links and shops, items/SKUs/offers and today's daily deals by SQL (their platform routes are
 *      on other branches);
 *   3. placement: the real server (`npm start`'s command, in a child process: its CPU is its own) takes
 *      BENCH_INTAKE_ORDERS (50,000) orders of 3–5 lines in batches of 1,000 from BENCH_CONNECTIONS (4)
 *      keep-alive connections; every answer must say 1,000 inserted; then every effect is counted;
 *   4. the limit: the same orders (new ids) as rows of orders, order_items and order_status_history,
 *      written by COPY with no checks, batches of 1,000 orders in one transaction each, from as many
 *      connections;
 *   5. today's seed: `seed()` writing the same number of orders on the same database.
 *
 * Knobs: BENCH_BACKGROUND_ORDERS, BENCH_INTAKE_ORDERS (a multiple of 1,000), BENCH_CONNECTIONS,
 * BENCH_DEAL_LINES (share of lines on a deal, 0.25), BENCH_EVENT_PAIRS (10: pairs of in-process batches with
 * and without the event log, after the placement), BENCH_DATABASE_URL. Quick run:
 *   BENCH_BACKGROUND_ORDERS=20000 BENCH_INTAKE_ORDERS=5000 npm run bench:intake
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BATCH = 1000
const BACKGROUND = numberKnob('BENCH_BACKGROUND_ORDERS', 1_000_000, { min: 1, integer: true })
const N = numberKnob('BENCH_INTAKE_ORDERS', 50_000, { min: BATCH, integer: true })
const CONNECTIONS = numberKnob('BENCH_CONNECTIONS', 4, { min: 1, integer: true })
const DEAL_SHARE = numberKnob('BENCH_DEAL_LINES', 0.25, { min: 0, max: 1 })
// Pairs of in-process batches with and without the event log (issue 24); their ids fit below FIRST_ID.copy.
const EVENT_PAIRS = numberKnob('BENCH_EVENT_PAIRS', 10, { min: 1, max: 190, integer: true })
const WARM_UP = 1000
if (!Number.isInteger(N) || N < BATCH || N % BATCH !== 0) throw new Error(`BENCH_INTAKE_ORDERS must be a multiple of ${BATCH}`)

/** Where each phase's orders start: far apart, above the seed's ids. */
const FIRST_ID = {
  warmUp: 10_000_000,
  placed: 11_000_000,
  inProcess: 19_000_000,
  explained: 19_500_000,
  eventLog: 19_600_000,
  copy: 20_000_000
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`)

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)) })
  })
}

async function startServer (databaseUrl: string): Promise<{ child: ChildProcess, port: number, command: string }> {
  const port = await freePort()
  const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string
  // `exec node …`: the shell's exec (npm start runs node in its place) is not part of the command.
  const [command, ...args] = start.split(/\s+/).filter((w) => w !== 'exec')
  if (command !== 'node') throw new Error(`expected the start script to run node, got: ${start}`)
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // Throughput is measured, not limits: rate limits off. The worker off, so the jobs placement made
    // are still there to count (and deliver nothing meanwhile).
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ORDER_EXCHANGE_ENV: 'testing',
      RATE_LIMIT_ENABLED: 'false',
      WORKER_ENABLED: 'false',
      SEED_DEMO: 'false',
      // Load shedding off: a batch of 1,000 holds the event loop for a while, and 4 of them queued past
      // the default 1 s of lag got 503s (bench/load measures the shedder).
      SHED_EVENT_LOOP_DELAY_MS: '0'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).ok) return { child, port, command: start }
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error('server did not become ready in 60 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })

function post (port: number, urlPath: string, method: 'PUT' | 'POST', key: string, body: Buffer):
Promise<{ status: number, text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: urlPath,
      method,
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': body.length }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

interface BatchData { received: number, inserted: number, unchanged: number, failed: number, errors: unknown[] }

async function send (port: number, urlPath: string, method: 'PUT' | 'POST', key: string, body: Buffer, want: number): Promise<void> {
  const { status, text } = await post(port, urlPath, method, key, body)
  const data = status === 200 ? (JSON.parse(text) as { data: BatchData }).data : undefined
  if (!data || data.inserted !== want || data.failed !== 0) {
    throw new Error(`${method} ${urlPath} answered ${status}, expected ${want} inserted: ${text.slice(0, 600)}`)
  }
}

/** Runs `jobs` from `connections` loops, each taking the next job when its last one is done. Per-job ms. */
async function concurrently<T> (jobs: T[], connections: number, run: (job: T) => Promise<void>):
Promise<{ ms: number, each: number[] }> {
  const each: number[] = []
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < jobs.length) {
      const job = jobs[next++]
      const t0 = performance.now()
      await run(job)
      each.push(performance.now() - t0)
    }
  }))
  return { ms: performance.now() - start, each: each.sort((a, b) => a - b) }
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]

/** CPU of every process of the PostgreSQL server, exited backends included (graphql-orders/run.ts). */
function pgCpuMs (postmaster: number | null): number {
  if (postmaster === null) return NaN
  let total = 0
  for (const [pid, cpu] of allProcCpu()) {
    if (pid === postmaster) total += cpu.ownMs + cpu.childrenMs
    else if (cpu.ppid === postmaster) total += cpu.ownMs
  }
  return total
}

async function postmasterOf (bench: BenchDatabase): Promise<number | null> {
  const [row] = await bench.database.sql<Array<{ pid: number }>>`select pg_backend_pid() as pid`
  try { return parseProcStat(fs.readFileSync(`/proc/${row.pid}/stat`, 'utf8')).ppid } catch { return null }
}

const processCpuMs = (pid: number): number => parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).ownMs
const selfCpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

interface Phase {
  name: string
  orders: number
  ms: number
  batches: number[]
  nodeCpuMs: number
  pgCpuMs: number
  note: string
}

/** The world's retailers, shops, links, catalogue and deals, straight into the tables. */
async function writeWorld (sql: postgres.Sql, world: World): Promise<void> {
  const chunked = async <R extends Record<string, unknown>>(table: string, rows: R[]) => {
    for (let i = 0; i < rows.length; i += 2000) await sql`insert into ${sql(table)} ${sql(rows.slice(i, i + 2000) as never)}`
  }
  await chunked('retailers', world.retailers.map((r) => ({ id: r.id, name: r.name, first_name: r.name.split(' ')[0], last_name: r.name.split(' ')[1], phone: r.phone, whatsapp: null })))
  await chunked('shops', world.retailers.flatMap((r) => r.shopIds.map((id, i) => ({ id, retailer_id: r.id, shop_name: `${r.name.split(' ')[1]} Stores ${i + 1}` }))))
  await chunked('seller_retailers', world.links.map((l) => ({ seller_id: l.sellerId, retailer_id: l.retailerId, sync_id: `RET-${l.sellerId}-${l.retailerId}` })))
  const shopOf = new Map(world.retailers.map((r) => [r.id, r.shopIds]))
  await chunked('seller_shops', world.links.flatMap((l) => shopOf.get(l.retailerId)!.map((shopId) => ({ seller_id: l.sellerId, shop_id: shopId, sync_id: `SHOP-${l.sellerId}-${shopId}` }))))
  const offers = world.sellers.flatMap((s) => s.offers.map((o) => ({ seller: s.companyId, ...o })))
  const price = (p: number) => (p / 100).toFixed(2)
  await chunked('items', offers.map((o) => ({ id: o.id, seller_id: o.seller, item_name: `Product ${o.id}`, item_sync_id: `ITEM-${o.id}` })))
  await chunked('skus', offers.map((o) => ({ id: o.id, seller_id: o.seller, item_id: o.id, sku_nick_name: `SKU ${o.id}` })))
  await chunked('offers', offers.map((o) => ({
    id: o.id,
    seller_id: o.seller,
    sku_id: o.id,
    offer_sync_id: `VAR-${o.id}`,
    purchase_price: price(Math.round(o.pricePaise * 0.85)),
    mrp_price_amount: price(Math.round(o.pricePaise * 1.1)),
    final_price_with_tax: price(o.pricePaise)
  })))
  await chunked('daily_deals', world.sellers.flatMap((s) => s.deals.map((d) => ({
    id: d.id, seller_id: s.companyId, offer_id: d.offer.id, deal_date: world.day, deal_price: price(d.pricePaise), max_quantity: '100000000'
  }))))
}

/** Counts every effect of the placed orders (ids from..to) and compares each with what was sent. */
async function verify (sql: postgres.Sql, world: World, e: Expected, ranges: Array<[number, number]>):
Promise<string[]> {
  const inRange = (col: string) => sql.unsafe(ranges.map(([a, b]) => `(${col} between ${a} and ${b})`).join(' or '))
  const problems: string[] = []
  const check = (what: string, got: number, want: number) => { if (got !== want) problems.push(`${what}: ${got}, expected ${want}`) }
  const [o] = await sql`select count(*)::int as n, count(*) filter (where status = 'ORDER_PLACED' and is_actionable)::int as placed from orders where ${inRange('id')}`
  check('orders', o.n, e.orders); check('orders placed and actionable', o.placed, e.orders)
  const [l] = await sql`select count(*)::int as n, count(deal_id)::int as deal from order_items where ${inRange('order_id')}`
  check('order lines', l.n, e.lines); check('lines on deals', l.deal, e.dealLines)
  const [h] = await sql`select count(*)::int as n from order_status_history where ${inRange('order_id')}
    and from_status is null and to_status = 'ORDER_PLACED' and source = 'platform'`
  check('history rows (null → ORDER_PLACED, platform)', h.n, e.orders)
  // A placement's notification (to the seller) is a delivery the deliverer dispatches from its order.placed
  // event after commit: what the placement itself must have written is that one event per order.
  const [ev] = await sql`select count(*)::int as n, count(distinct order_id)::int as orders from seller_events
    where ${inRange('order_id')} and type = 'order.placed' and status = 'ORDER_PLACED'`
  check('order.placed events (one notification each, to the seller)', ev.n, e.orders)
  check('orders with an order.placed event', ev.orders, e.orders)
  const [hears] = await sql`select count(*)::int as n from subscriptions
    where kind = 'notify-seller' and status = 'ENABLED' and 'order.placed' = any(types)`
  check('notify-seller subscriptions hearing order.placed', hears.n, 1)
  const [aj] = await sql`select count(*)::int as n from graphile_worker._private_jobs
    where key = any(select 'auto-reject:' || id from orders where ${inRange('id')})`
  check('auto-rejection jobs', aj.n, e.autoRejectJobs)
  const [p] = await sql`select count(*)::int as n from payout_schedules where ${inRange('order_id')} and status = 'ON_HOLD'`
  check('payouts held (PREPAID)', p.n, e.prepaid)
  const deals = await sql`select id, (grabbed_quantity * 1000)::bigint::text as milli from daily_deals where id >= ${ID_BASE.deal}`
  let dealsOk = 0
  for (const d of deals) {
    if (Number(d.milli) === (e.grabbed.get(d.id) ?? 0)) dealsOk++
    else problems.push(`deal ${d.id} grabbed ${Number(d.milli) / 1000}, expected ${(e.grabbed.get(d.id) ?? 0) / 1000}`)
  }
  const counts = await sql`select seller_id, store_id, live_orders::int as n from order_counts where seller_id >= ${ID_BASE.seller}`
  const got = new Map(counts.map((c) => [`${c.seller_id}:${c.store_id}`, c.n as number]))
  for (const [key, want] of e.live) check(`order_counts ${key}`, got.get(key) ?? 0, want)
  return [
    `orders ${fmt(o.n)}, lines ${fmt(l.n)} (${fmt(l.deal)} on deals), history ${fmt(h.n)}, order.placed events ${fmt(ev.n)} (a seller's notification each), ` +
    `auto-rejection jobs ${fmt(aj.n)} (sellers with it on: ${world.sellers.filter((s) => s.autoReject).length} of ${world.sellers.length}), ` +
    `payouts held ${fmt(p.n)}, deals with the right grabbed sum ${dealsOk} of ${deals.length}, order_counts rows right ${e.live.size - problems.filter((x) => x.startsWith('order_counts')).length} of ${e.live.size}`,
    ...problems
  ]
}

/**
 * Where one batch's time goes: the batch placed in this process on a connection with auto_explain
 * (EXPLAIN ANALYZE of every statement, nested ones included: the order_counts trigger, add_jobs), the
 * plans received as notices. Returns the statements by duration; every plan goes to `file`.
 */
async function explainBatch (url: string, rows: unknown[], credentialId: number, file: string): Promise<string[]> {
  const notices: string[] = []
  const client = postgres(url, {
    max: 1,
    onnotice: (n) => { notices.push(String(n.message)) },
    types: { numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => v } },
    connection: {
      client_min_messages: 'log',
      plan_cache_mode: 'force_generic_plan',
      'auto_explain.log_min_duration': '0',
      'auto_explain.log_analyze': 'on',
      'auto_explain.log_buffers': 'on',
      'auto_explain.log_nested_statements': 'on'
    } as Record<string, string>
  })
  try {
    await client`load 'auto_explain'`
    const t0 = performance.now()
    const outcome = await placeOrders(drizzle(client, { schema }), rows,
      { credentialId, autoRejectAfterMs: 24 * 3600_000 })
    const ms = performance.now() - t0
    if (outcome.inserted !== rows.length) throw new Error(`explained batch: ${JSON.stringify(outcome).slice(0, 300)}`)
    fs.writeFileSync(file, notices.join('\n\n'))
    const summary = notices.map((n) => {
      const duration = Number(/duration: ([\d.]+) ms/.exec(n)?.[1] ?? NaN)
      const text = (/Query Text: ([\s\S]*?)\n\S/.exec(n)?.[1] ?? n).replace(/\s+/g, ' ').slice(0, 110)
      return { duration, text }
    }).filter((x) => !Number.isNaN(x.duration)).sort((a, b) => b.duration - a.duration)
    return [`batch placed in ${ms.toFixed(0)} ms with auto_explain on (its timing adds overhead); ${summary.length} plans (nested included):`,
      ...summary.slice(0, 14).map((x) => `  ${x.duration.toFixed(1).padStart(8)} ms  ${x.text}`)]
  } finally {
    await client.end({ timeout: 5 })
  }
}

async function main (): Promise<void> {
  let statements = 0
  const bench = await benchDatabase('intake', { onQuery: () => { statements++ } })
  const { database } = bench
  const { sql } = database
  let child: ChildProcess | undefined
  try {
    const [pgVersion] = await sql`select current_setting('server_version') as v`
    const postmaster = await postmasterOf(bench)

    let t0 = performance.now()
    await seed(database, { orders: BACKGROUND, seed: 1, anchor: DEFAULT_ANCHOR })
    const backgroundSeedS = (performance.now() - t0) / 1000
    log(`background: ${fmt(BACKGROUND)} orders seeded in ${backgroundSeedS.toFixed(0)} s`)
    await sql`vacuum analyze`
    await sql`checkpoint`

    // Today, as the marketplace's orders are placed (their own +05:30 day is the deals' day).
    const day = new Date(Date.now() + 5.5 * 3600_000).toISOString().slice(0, 10)
    const world = makeWorld({ sellers: 20, retailers: 4000, offersPerSeller: 40, dealsPerSeller: 8, day })
    const platform = await issueCredential(database.db, { kind: 'platform-key', environment: 'testing' })
    const server = await startServer(bench.url)
    child = server.child
    await send(server.port, PLATFORM_SELLERS_PATH, 'PUT', platform.secret, Buffer.from(JSON.stringify(sellerRows(world))), world.sellers.length)
    await writeWorld(sql, world)
    await sql`vacuum analyze`
    await sql`checkpoint`
    log(`world: ${world.sellers.length} sellers (PUT ${PLATFORM_SELLERS_PATH}), ${world.retailers.length} retailers, ${world.links.length} links, ` +
      `${world.sellers.length * world.sellers[0].offers.length} offers, ${world.sellers.length * world.sellers[0].deals.length} deals of ${day}`)

    // The orders: generated and serialised before any timing.
    const expected = emptyExpected()
    const generate = (firstId: number, count: number, prefix: string, rnd: Random): GeneratedOrder[] =>
      Array.from({ length: count }, (_, n) => makeOrder(world, rnd, firstId, n, prefix, DEAL_SHARE))
    const body = (list: GeneratedOrder[]) => Buffer.from(JSON.stringify(list.map(orderRow)))
    const warmUp = generate(FIRST_ID.warmUp, WARM_UP, 'WARM', new Random(1))
    const placed = generate(FIRST_ID.placed, N, 'ORD', new Random(2))
    for (const o of [...warmUp, ...placed]) expect(expected, o)
    const bodies: Buffer[] = []
    for (let i = 0; i < N; i += BATCH) bodies.push(body(placed.slice(i, i + BATCH)))
    const bodyKb = bodies.reduce((s, b) => s + b.length, 0) / bodies.length / 1024

    // Warm-up (JIT, prepared statements, caches): one batch, not timed.
    await send(server.port, PLATFORM_ORDERS_PATH, 'POST', platform.secret, body(warmUp), WARM_UP)

    const phases: Phase[] = []
    const pid = child.pid!
    let node0 = processCpuMs(pid); let pg0 = pgCpuMs(postmaster); const client0 = selfCpuMs()
    const placement = await concurrently(bodies, CONNECTIONS, (b) => send(server.port, PLATFORM_ORDERS_PATH, 'POST', platform.secret, b, BATCH))
    phases.push({
      name: 'placement, POST /v2/platform/orders',
      orders: N,
      ms: placement.ms,
      batches: placement.each,
      nodeCpuMs: processCpuMs(pid) - node0,
      pgCpuMs: pgCpuMs(postmaster) - pg0,
      note: `HTTP, ${CONNECTIONS} keep-alive connections; the server process's CPU (bench client: ${((selfCpuMs() - client0) / N).toFixed(3)} ms/order)`
    })
    log(`placement: ${fmt(N)} orders in ${(placement.ms / 1000).toFixed(1)} s, ${fmt(N / (placement.ms / 1000))} orders/s`)

    const effects = await verify(sql, world, expected,
      [[FIRST_ID.warmUp, FIRST_ID.warmUp + WARM_UP - 1], [FIRST_ID.placed, FIRST_ID.placed + N - 1]])
    log(`effects (warm-up + measured orders): ${effects[0]}`)
    if (effects.length > 1) throw new Error(`placement's effects are wrong:\n${effects.slice(1, 20).join('\n')}`)

    // Round trips of one batch of 1,000, in this process (no HTTP): statements the service sends.
    const inProcess = generate(FIRST_ID.inProcess, BATCH, 'INP', new Random(3))
    statements = 0
    t0 = performance.now()
    const outcome = await placeOrders(database.db, inProcess.map(orderRow),
      { credentialId: platform.id, autoRejectAfterMs: 24 * 3600_000 })
    const inProcessMs = performance.now() - t0
    const perBatch = statements
    if (outcome.inserted !== BATCH) throw new Error(`in-process batch: ${JSON.stringify(outcome).slice(0, 300)}`)
    log(`one batch of ${BATCH} in process (placeOrders, no HTTP): ${inProcessMs.toFixed(0)} ms, ${perBatch} statements`)

    // What the event log costs a placement on this world (issue 24: ≤ 10 %): in process, one connection,
    // batches with the log and without it alternating (bench/lib/event-log-ab.ts).
    log(`event log: ${EVENT_PAIRS} pairs of in-process batches of ${BATCH}, with and without`)
    let nextEventLogId = FIRST_ID.eventLog
    const eventLog = await alternate('placements', BATCH, EVENT_PAIRS, async (mode, n) => {
      const rows = generate(nextEventLogId, BATCH, 'EVL', new Random(5 + n + 1)).map(orderRow)
      nextEventLogId += BATCH
      const placedHere = await placeOrders(database.db, rows,
        { credentialId: platform.id, autoRejectAfterMs: 24 * 3600_000, eventLogging: mode })
      if (placedHere.inserted !== BATCH) throw new Error(`event log batch: ${JSON.stringify(placedHere).slice(0, 300)}`)
    }, log)
    const [withLog] = eventLog
    const [{ n: recorded }] = await sql`select count(*)::int as n from seller_events
      where order_id >= ${FIRST_ID.eventLog} and order_id < ${nextEventLogId}`
    // With the log: the warm-up batch and one batch a pair, an order.placed each; without: none.
    if (recorded !== BATCH * (EVENT_PAIRS + 1)) throw new Error(`event log: ${recorded} events recorded`)

    // Where a batch's time goes (EXPLAIN ANALYZE of each statement), on this database.
    const explainFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-intake-')), 'plans.txt')
    const explained = await explainBatch(bench.url, generate(FIRST_ID.explained, BATCH, 'EXP', new Random(4)).map(orderRow), platform.id, explainFile)
    log(`${explained.join('\n')}\n  plans: ${explainFile}`)

    // The limit: the same orders (new ids), COPY into orders, order_items and order_status_history, no checks.
    const copyOrders = generate(FIRST_ID.copy, N, 'CPY', new Random(2))
    const copyBatches: Array<ReturnType<typeof copyText>> = []
    for (let i = 0; i < N; i += BATCH) copyBatches.push(copyText(copyOrders.slice(i, i + BATCH), platform.id))
    const copier = openClient(bench.url, { max: CONNECTIONS, application: 'oxs-bench-copy' })
    try {
      node0 = selfCpuMs(); pg0 = pgCpuMs(postmaster)
      const copy = await concurrently(copyBatches, CONNECTIONS, async (text) => {
        await copier.begin(async (tx) => {
          await copyInto(tx.unsafe(`copy ${COPY_COLUMNS.orders} from stdin`), text.orders)
          await copyInto(tx.unsafe(`copy ${COPY_COLUMNS.lines} from stdin`), text.lines)
          await copyInto(tx.unsafe(`copy ${COPY_COLUMNS.history} from stdin`), text.history)
        })
      })
      phases.push({
        name: 'limit: COPY orders, order_items, history',
        orders: N,
        ms: copy.ms,
        batches: copy.each,
        nodeCpuMs: selfCpuMs() - node0,
        pgCpuMs: pgCpuMs(postmaster) - pg0,
        note: `${CONNECTIONS} connections, one transaction of 3 COPYs per batch; no deal, count check, job or notification (the order_counts trigger and foreign keys still run)`
      })
      log(`COPY: ${fmt(N)} orders in ${(copy.ms / 1000).toFixed(1)} s, ${fmt(N / (copy.ms / 1000))} orders/s`)
    } finally {
      await copier.end({ timeout: 5 })
    }
    const [c] = await sql`select (select count(*) from orders where id >= ${FIRST_ID.copy})::int as o,
      (select count(*) from order_items where order_id >= ${FIRST_ID.copy})::int as l,
      (select count(*) from order_status_history where order_id >= ${FIRST_ID.copy})::int as h`
    if (c.o !== N || c.h !== N || c.l !== copyOrders.reduce((s, o) => s + o.lines.length, 0)) throw new Error(`COPY wrote ${JSON.stringify(c)}`)

    // Today's seed, the same number of orders, on the same database (in this process, one transaction).
    node0 = selfCpuMs(); pg0 = pgCpuMs(postmaster)
    t0 = performance.now()
    const seeded = await seed(database, { orders: N, seed: 2, anchor: DEFAULT_ANCHOR })
    const seedMs = performance.now() - t0
    phases.push({
      name: 'today\'s seed, seed()',
      orders: N,
      ms: seedMs,
      batches: [],
      nodeCpuMs: selfCpuMs() - node0,
      pgCpuMs: pgCpuMs(postmaster) - pg0,
      note: `one transaction, unnest inserts of 20,000 orders; its ${fmt(seeded.orderItems)} lines (1–5 an order), history only for moved orders, its own 3 sellers' catalogue and retailers included`
    })
    log(`seed: ${fmt(N)} orders in ${(seedMs / 1000).toFixed(1)} s`)

    const [size] = await sql`select count(*)::int as n from orders`
    const rate = (p: Phase) => p.orders / (p.ms / 1000)
    const [place, limit, today] = phases
    console.log(`\nPlatform intake bench — ${machineLine()}`)
    console.log(`PostgreSQL ${String(pgVersion.v)} (${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded, fsync on'}); ` +
      `server \`${server.command}\` (worker, rate limits and load shedding off)`)
    console.log(`Background: ${fmt(BACKGROUND)} orders by seed() in ${backgroundSeedS.toFixed(0)} s; ${fmt(size.n)} orders at the end. ` +
      `Placed: ${fmt(N)} orders (${fmt(expected.lines - (warmUp.reduce((s, o) => s + o.lines.length, 0)))} lines) in ${N / BATCH} batches of ${fmt(BATCH)}, ` +
      `${bodyKb.toFixed(0)} KB a body, ${(DEAL_SHARE * 100).toFixed(0)} % of lines on a deal, after a warm-up batch.`)
    console.log('\n| path | orders | s | orders/s | p50 ms / batch of 1,000 | p99 ms / batch | Node CPU ms / order | PG CPU ms / order | vs COPY | vs seed | how |')
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
    for (const p of phases) {
      const vs = (q: Phase) => p === q ? '' : `${(rate(p) / rate(q) * 100).toFixed(0)} %`
      const ms = (x: number) => Number.isNaN(x) ? '–' : x.toFixed(0)
      console.log(`| ${p.name} | ${fmt(p.orders)} | ${(p.ms / 1000).toFixed(1)} | ${fmt(rate(p))} | ${ms(percentile(p.batches, 0.5))} | ${ms(percentile(p.batches, 0.99))} | ` +
        `${(p.nodeCpuMs / p.orders).toFixed(3)} | ${Number.isNaN(p.pgCpuMs) ? '–' : (p.pgCpuMs / p.orders).toFixed(3)} | ${vs(limit)} | ${vs(today)} | ${p.note} |`)
    }
    console.log(`\nEffects checked after placement: ${effects[0]}`)
    console.log(`One batch of ${fmt(BATCH)} placed in process (placeOrders, no HTTP): ${inProcessMs.toFixed(0)} ms, ${perBatch} SQL statements.`)
    console.log(`Another, ${explained.join('\n')}`)
    console.log(`\nThe event log's cost, ${EVENT_PAIRS} pairs of in-process batches (placeOrders, one connection, alternating; ${withLog!.medianMs.toFixed(0)} ms a batch with it):\n`)
    console.log(WRITE_TABLE_HEAD + writeTableRow(eventLog, 'placements'))
    console.log('\nTargets:')
    console.log(`- placement ≥ 5,000 orders/s: ${fmt(rate(place))} → ${rate(place) >= 5000 ? 'met' : 'NOT met'}`)
    console.log(`- placement ≥ 25 % of COPY: ${(rate(place) / rate(limit) * 100).toFixed(0)} % → ${rate(place) / rate(limit) >= 0.25 ? 'met' : 'NOT met'}`)
    console.log(`- placement vs today's seed: ${(rate(place) / rate(today)).toFixed(2)}×`)
  } finally {
    agent.destroy()
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await bench.dispose()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
