import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { print } from 'graphql'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { issueCredential } from '../../src/credentials/service.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'

/*
 * npm run bench:cost — what the GraphQL cost budget (issue 21) lets one credential read. The real server
 * (`npm start`'s command, in a child process, over HTTP on 127.0.0.1) on a seeded database, and clients
 * here that read the seller's orders with the full selection (src/graphql/operations/orders.graphql) at
 * limit 100, one request at a time each, over keep-alive connections (Node's fetch), as urql or
 * graphql-request would. A 429 is waited out (Retry-After) and retried; 429s and the time waited count.
 *
 *   1. One sequential client walks every page of the seller (10,000+ orders), from a fresh bucket.
 *   2. BENCH_CLIENTS (8) clients on ONE credential (a fresh bucket), each walking pages in turn (each from
 *      its own starting page, round the seller's pages), for BENCH_DURATION seconds.
 * Both with rate limits on (the server's default budget, or BENCH_COST_BUCKET / BENCH_COST_RESTORE) and
 * off (RATE_LIMIT_ENABLED=false), one server at a time, each warmed up first with a credential of its own.
 * The stated rate of a budget: restoreRate / (median actualQueryCost of a page) × 100 orders a second;
 * a flood from a full bucket also gets the bucket's worth (capacity / median actual × 100 orders) once.
 *
 *   BENCH_ORDERS=17000       orders seeded (seller 1 gets 60 % of them, 1 % deleted: 10,000+ live)
 *   BENCH_DURATION=15        seconds of the parallel phase
 *   BENCH_CLIENTS=8          clients of the parallel phase
 *   BENCH_COST_BUCKET        GRAPHQL_COST_BUCKET of the limited server (unset: the service's default)
 *   BENCH_COST_RESTORE       GRAPHQL_COST_RESTORE_PER_SECOND of the limited server (unset: default)
 *   BENCH_WALK_TIMEOUT=150   seconds at most for a sequential walk (it stops there, reported incomplete)
 *   BENCH_DATABASE_URL       a PostgreSQL server instead of an embedded one
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const ORDERS = numberKnob('BENCH_ORDERS', 17_000, { min: 1, integer: true })
const DURATION = numberKnob('BENCH_DURATION', 15, { above: 0 })
const CLIENTS = numberKnob('BENCH_CLIENTS', 8, { min: 1, integer: true })
const BUCKET = process.env.BENCH_COST_BUCKET
const RESTORE = process.env.BENCH_COST_RESTORE
const WALK_TIMEOUT = numberKnob('BENCH_WALK_TIMEOUT', 150, { above: 0 })
const SELLER = 1
const LIMIT = 100
const WARM_UP_PAGES = 10
const QUERY = print(OrdersDocument)
/** The shared machine's load when the run starts (other work on it shows here). */
const LOADAVG = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

function log (line: string): void { process.stderr.write(`${line}\n`) }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function freePort (): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

interface Server { child: ChildProcess, base: string }

/** The real server, as `npm start` runs it; the budget's variables only as given (else its defaults). */
async function startServer (url: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const start = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string
  const [, ...args] = start.split(/\s+/)
  const inherited = Object.fromEntries(Object.entries(process.env)
    .filter(([k]) => !k.startsWith('RATE_LIMIT_') && !k.startsWith('GRAPHQL_COST_') && !k.startsWith('SHED_')))
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...inherited,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      WORKER_ENABLED: 'false',
      ORDER_EXCHANGE_ENV: 'testing',
      ...env
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try { if ((await fetch(`${base}/health/ready`)).ok) return { child, base } } catch {}
    if (i > 300) { child.kill('SIGTERM'); throw new Error('server not ready in 60 s') }
    await sleep(200)
  }
}

async function stopServer (server: Server): Promise<void> {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

interface QueryCost {
  requestedQueryCost: number
  actualQueryCost: number
  throttleStatus: { maximumAvailable: number, currentlyAvailable: number, restoreRate: number }
}

interface Answer {
  status: number
  ms: number
  orders: number
  hasNext: boolean
  total: number
  cost: QueryCost | null
  /** Seconds to wait, for a 429 (or 503). */
  retryAfter: number
}

async function fetchPage (base: string, token: string, page: number): Promise<Answer> {
  const started = performance.now()
  const res = await fetch(`${base}/v2/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: QUERY, variables: { input: { page, limit: LIMIT } } })
  })
  const text = await res.text()
  const ms = performance.now() - started
  if (res.status === 429 || res.status === 503) {
    const retryAfter = Number(res.headers.get('retry-after') ?? 1)
    return { status: res.status, ms, orders: 0, hasNext: true, total: 0, cost: null, retryAfter }
  }
  const body = JSON.parse(text) as {
    data?: { orders: { pageInfo: { total: number, hasNext: boolean }, nodes: unknown[] } }
    errors?: unknown
    extensions?: { cost?: QueryCost }
  }
  if (res.status !== 200 || body.errors || !body.data) throw new Error(`page ${page}: ${res.status} ${text.slice(0, 500)}`)
  const { pageInfo, nodes } = body.data.orders
  return {
    status: 200,
    ms,
    orders: nodes.length,
    hasNext: pageInfo.hasNext,
    total: pageInfo.total,
    cost: body.extensions?.cost ?? null,
    retryAfter: 0
  }
}

/** What a phase saw, summed over its clients. */
interface Tally {
  orders: number
  pages: number
  refused: number
  /** 503s (load shedding), waited out and retried like a 429. */
  unavailable: number
  waitedMs: number
  latencies: number[]
  requested: number[]
  actual: number[]
  lowestAvailable: number
  budget: { capacity: number, restore: number } | null
  /** The first 429: the page it came on (pages read before it + 1) and when, seconds from the start. */
  first429: { page: number, at: number } | null
}

function tally (): Tally {
  return {
    orders: 0,
    pages: 0,
    refused: 0,
    unavailable: 0,
    waitedMs: 0,
    latencies: [],
    requested: [],
    actual: [],
    lowestAvailable: Infinity,
    budget: null,
    first429: null
  }
}

/** Counts one answer in; for a 429/503 waits its Retry-After (never past `deadline`). */
async function count (t: Tally, a: Answer, t0: number, deadline: number): Promise<void> {
  if (a.status !== 200) {
    if (a.status === 429) {
      t.refused++
      t.first429 ??= { page: t.pages + 1, at: (performance.now() - t0) / 1000 }
    } else {
      t.unavailable++
    }
    const wait = Math.max(0, Math.min(a.retryAfter * 1000, deadline - performance.now()))
    t.waitedMs += wait
    await sleep(wait)
    return
  }
  t.orders += a.orders
  t.pages++
  t.latencies.push(a.ms)
  if (a.cost) {
    t.requested.push(a.cost.requestedQueryCost)
    t.actual.push(a.cost.actualQueryCost)
    t.lowestAvailable = Math.min(t.lowestAvailable, a.cost.throttleStatus.currentlyAvailable)
    t.budget ??= { capacity: a.cost.throttleStatus.maximumAvailable, restore: a.cost.throttleStatus.restoreRate }
  }
}

/** One client, one request at a time, every page of the seller from page 1 (at most WALK_TIMEOUT s). */
async function sequentialWalk (base: string, token: string): Promise<{ t: Tally, seconds: number, done: boolean }> {
  const t = tally()
  const t0 = performance.now()
  const deadline = t0 + WALK_TIMEOUT * 1000
  let page = 1
  let done = false
  while (performance.now() < deadline) {
    const a = await fetchPage(base, token, page)
    await count(t, a, t0, deadline)
    if (a.status !== 200) continue
    if (!a.hasNext) { done = true; break }
    page++
  }
  return { t, seconds: (performance.now() - t0) / 1000, done }
}

/**
 * CLIENTS clients on one token, each walking pages in turn from its own starting page (round the
 * seller's pages), until DURATION has passed: no request starts after it; the time is until the last ends.
 */
async function parallelFlood (base: string, token: string, pages: number): Promise<{ t: Tally, seconds: number }> {
  const t = tally()
  const t0 = performance.now()
  const deadline = t0 + DURATION * 1000
  await Promise.all(Array.from({ length: CLIENTS }, async (_, i) => {
    let page = 1 + Math.floor((i * pages) / CLIENTS)
    while (performance.now() < deadline) {
      const a = await fetchPage(base, token, page)
      await count(t, a, t0, deadline)
      if (a.status === 200) page = page % pages + 1
    }
  }))
  return { t, seconds: (performance.now() - t0) / 1000 }
}

const median = (values: number[]): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

interface Row {
  phase: string
  limits: string
  t: Tally
  seconds: number
  note: string
}

const bench = await benchDatabase('graphql_cost')
const rows: Row[] = []
let liveOrders = 0
let seedSeconds = 0
try {
  const s0 = performance.now()
  await seed(bench.database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
  await bench.database.sql`vacuum analyze`
  seedSeconds = (performance.now() - s0) / 1000
  const [live] = await bench.database.sql<Array<{ n: number, lines: number }>>`
    select count(*)::int as n, (select count(*)::int from order_items i join orders o on o.id = i.order_id
      where o.seller_id = ${SELLER} and not o.is_deleted) as lines
    from orders where seller_id = ${SELLER} and not is_deleted`
  liveOrders = live!.n
  log(`seeded ${ORDERS.toLocaleString('en')} orders in ${seedSeconds.toFixed(0)} s: seller ${SELLER} has ` +
    `${liveOrders.toLocaleString('en')} live orders, ${(live!.lines / liveOrders).toFixed(2)} lines an order`)
  if (liveOrders < 10_000) log(`WARNING: seller ${SELLER} has fewer than 10,000 live orders (BENCH_ORDERS=${ORDERS})`)
  const pages = Math.ceil(liveOrders / LIMIT)
  const token = async (): Promise<string> =>
    (await issueCredential(bench.database.db, { sellerId: SELLER, kind: 'access-token', environment: 'testing' })).secret

  const budget: Record<string, string> = {
    ...(BUCKET ? { GRAPHQL_COST_BUCKET: BUCKET } : {}),
    ...(RESTORE ? { GRAPHQL_COST_RESTORE_PER_SECOND: RESTORE } : {})
  }
  const budgetLabel = BUCKET || RESTORE ? 'on (BENCH_COST_*)' : 'on (defaults)'
  for (const [limits, env] of [[budgetLabel, budget], ['off', { RATE_LIMIT_ENABLED: 'false' }]] as const) {
    const server = await startServer(bench.url, env)
    try {
      // Warm-up (JIT, prepared statements, caches) with a credential of its own: its bucket is not the measured one.
      const warm = await token()
      for (let p = 1; p <= WARM_UP_PAGES; p++) {
        const a = await fetchPage(server.base, warm, p)
        if (a.status !== 200) await sleep(a.retryAfter * 1000)
      }
      log(`limits ${limits}: sequential walk`)
      const walk = await sequentialWalk(server.base, await token())
      rows.push({
        phase: '1 sequential client',
        limits,
        t: walk.t,
        seconds: walk.seconds,
        note: walk.done ? '' : `stopped after ${WALK_TIMEOUT} s (BENCH_WALK_TIMEOUT), walk incomplete`
      })
      log(`limits ${limits}: ${CLIENTS} parallel clients, ${DURATION} s`)
      const flood = await parallelFlood(server.base, await token(), pages)
      rows.push({ phase: `${CLIENTS} parallel clients, 1 credential`, limits, t: flood.t, seconds: flood.seconds, note: '' })
    } finally {
      await stopServer(server)
    }
  }
} finally {
  await bench.dispose()
}

const fmt = (n: number, digits = 0): string => Number.isFinite(n)
  ? n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })
  : '–'
const budget = rows.find((r) => r.t.budget)?.t.budget ?? null
const lines = [
  `machine: ${machineLine()}; load average at the start ${LOADAVG}`,
  `command: ${BUCKET ? `BENCH_COST_BUCKET=${BUCKET} ` : ''}${RESTORE ? `BENCH_COST_RESTORE=${RESTORE} ` : ''}BENCH_ORDERS=${ORDERS} BENCH_DURATION=${DURATION} BENCH_CLIENTS=${CLIENTS} npm run bench:cost`,
  `data: seed(${ORDERS.toLocaleString('en')} orders) in ${seedSeconds.toFixed(0)} s; seller ${SELLER} has ${liveOrders.toLocaleString('en')} live orders (${Math.ceil(liveOrders / LIMIT)} pages of ${LIMIT})`,
  `budget (limits on, from extensions.cost): ${budget ? `bucket ${fmt(budget.capacity)} points, restore ${fmt(budget.restore)} points/s` : 'not reported'}`,
  '',
  '| phase | limits | orders | pages | s | orders/s | pages/s | p50 ms/page | 429s | s waiting on Retry-After (all clients) | first 429 (page, s) | median requested / page | median actual / page | lowest currentlyAvailable | stated rate orders/s | orders/s after the initial bucket | that vs stated |',
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|'
]
for (const r of rows) {
  const { t } = r
  const actual = median(t.actual)
  // The budget's sustained rate, and a full bucket's worth of orders (what a flood gets once, on top).
  const stated = t.budget ? (t.budget.restore / actual) * LIMIT : NaN
  const bucketOrders = t.budget ? (t.budget.capacity / actual) * LIMIT : NaN
  // Only where the bucket bound (429s came): otherwise the flood never took the initial bucket.
  const afterBucket = t.refused > 0 ? (t.orders - bucketOrders) / r.seconds : NaN
  lines.push(`| ${r.phase} | ${r.limits} | ${fmt(t.orders)} | ${fmt(t.pages)} | ${fmt(r.seconds, 1)} | ` +
    `${fmt(t.orders / r.seconds)} | ${fmt(t.pages / r.seconds, 1)} | ${fmt(median(t.latencies))} | ${fmt(t.refused)}` +
    `${t.unavailable ? ` (+${t.unavailable} 503)` : ''} | ${fmt(t.waitedMs / 1000, 1)} | ` +
    `${t.first429 ? `page ${t.first429.page}, ${fmt(t.first429.at, 1)} s` : '–'} | ${fmt(median(t.requested))} | ` +
    `${fmt(actual)} | ${fmt(t.lowestAvailable)} | ${fmt(stated)} | ${fmt(afterBucket)} | ` +
    `${Number.isFinite(afterBucket) ? `${fmt((100 * afterBucket) / stated)} %` : '–'} |${r.note ? ` ${r.note}` : ''}`)
}
const walkOn = rows.find((r) => r.phase.startsWith('1 ') && r.t.budget)
const walkOff = rows.find((r) => r.phase.startsWith('1 ') && r.limits === 'off')
if (walkOn && walkOff) {
  const spent = walkOn.t.actual.reduce((a, b) => a + b, 0)
  const perSecond = (walkOff.t.pages / walkOff.seconds) * median(walkOn.t.actual)
  lines.push('', `The sequential walk's actual cost in all: ${fmt(spent)} points; unthrottled (limits off) it spends ` +
    `${fmt(walkOff.t.pages / walkOff.seconds, 1)} pages/s × ${fmt(median(walkOn.t.actual))} = ${fmt(perSecond)} ` +
    'points/s. Each page is let through only while the bucket holds its requested cost.')
}
lines.push('', 'stated rate = restoreRate / median actualQueryCost per page × 100 orders/s; "after the initial bucket" = ' +
  '(orders − capacity / median actual × 100) / s, i.e. the flood\'s rate once the full bucket it started with is ' +
  'taken out (shown only where 429s came: elsewhere the bucket never bound). The sequential walk\'s orders/s include the time waited on 429s; lowest currentlyAvailable is ' +
  'from the 200 answers (after their refund).')
process.stdout.write(lines.join('\n') + '\n')
if (rows.some((r) => r.note)) process.exitCode = 1
