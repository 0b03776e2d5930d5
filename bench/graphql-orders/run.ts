import { fork, type ChildProcess } from 'node:child_process'
import { isDeepStrictEqual } from 'node:util'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { print } from 'graphql'
import { benchDatabase, machineLine, type BenchDatabase } from '../lib/database.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { issueCredential } from '../../src/credentials/service.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { sql } from 'drizzle-orm'
import { orderPageStatement, type OrderSelection } from '../../src/orders/read-orders.js'
import { parseOrderListInput } from '../../src/orders/order-list-input.js'

/*
 * npm run bench:orders — the orders query under load, against a bare Fastify + one-SQL baseline (and the
 * loader variant) in the same run. Every target runs in its own process; autocannon runs here.
 *
 *   BENCH_ORDERS=100000        orders seeded for the main table
 *   BENCH_ORDERS_LARGE=0       set to 1000000 for the p99 comparison at scale (the seed takes ~2 min)
 *   BENCH_DURATION=10          seconds per measurement (after a 2 s warm-up)
 *   BENCH_CONNECTIONS=10       concurrent connections
 *   BENCH_LOADERS=1            0 skips the loader variant
 *   BENCH_DATABASE_URL         a PostgreSQL server to use instead of an embedded one
 */

const here = path.dirname(fileURLToPath(import.meta.url))
const SIZE = Number(process.env.BENCH_ORDERS ?? 100_000)
const LARGE = Number(process.env.BENCH_ORDERS_LARGE ?? 0)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
const LOADERS = process.env.BENCH_LOADERS !== '0'
const TIME_ZONE = 'Asia/Kolkata'
const SELLER = 1
/** A day inside the seed's 90 days; page 2 so the offset is exercised. */
const DAY = '2026-10-15'

type Target = 'service' | 'baseline' | 'loaders'
interface Scenario { name: string, input: { page: number, limit: number, fromDate?: string, toDate?: string } }
const SCENARIOS: Scenario[] = [
  { name: 'page 1, limit 20', input: { page: 1, limit: 20 } },
  { name: 'page 1, limit 100', input: { page: 1, limit: 100 } },
  { name: `one day (${DAY}), page 2, limit 100`, input: { page: 2, limit: 100, fromDate: DAY, toDate: DAY } }
]

interface Server { target: Target, port: number, child: ChildProcess }
interface Measure { target: Target, scenario: string, orders: number, rps: number, p50: number, p99: number, statements: number, errors: number }

function log (line: string): void { process.stderr.write(`${line}\n`) }

async function start (target: Target, url: string): Promise<Server> {
  const child = fork(path.join(here, 'serve.ts'), [target, url, TIME_ZONE], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`${target} exited with ${code}`)))
  })
  return { target, port, child }
}

function ask (server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (m) => resolve((m as { statements: number }).statements))
    server.child.send('statements')
  })
}

async function stop (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.send('stop')
  await exited
}

function request (server: Server, token: string, scenario: Scenario): { path: string, headers: Record<string, string>, body: string } {
  if (server.target === 'baseline') {
    return { path: '/orders', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sellerId: SELLER, ...scenario.input }) }
  }
  return {
    path: '/v2/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: print(OrdersDocument), variables: { input: scenario.input } })
  }
}

async function fetchPage (server: Server, token: string, scenario: Scenario): Promise<unknown> {
  const r = request(server, token, scenario)
  const res = await fetch(`http://127.0.0.1:${server.port}${r.path}`, { method: 'POST', headers: r.headers, body: r.body })
  if (res.status !== 200) throw new Error(`${server.target} answered ${res.status}: ${await res.text()}`)
  return res.json()
}

async function measure (server: Server, token: string, scenario: Scenario, orders: number): Promise<Measure> {
  const r = request(server, token, scenario)
  const options = { url: `http://127.0.0.1:${server.port}${r.path}`, method: 'POST' as const, headers: r.headers, body: r.body, connections: CONNECTIONS }
  await autocannon({ ...options, duration: 2 }) // warm-up: JIT, prepared statements, caches
  const before = await ask(server)
  const result = await autocannon({ ...options, duration: DURATION })
  const statements = (await ask(server)) - before
  const errors = result.errors + result.timeouts + result.non2xx
  const m = { target: server.target, scenario: scenario.name, orders, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, statements: statements / result.requests.total, errors }
  log(`  ${m.target.padEnd(8)} ${m.scenario.padEnd(36)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  ${m.statements.toFixed(2)} statements/req${errors ? `  ERRORS ${errors}` : ''}`)
  return m
}

/** Every field of spec 2.1–2.7: what the benchmark's documents select. */
const FULL_SELECTION: OrderSelection = {
  total: true, nodes: true, retailer: true, shop: true, orderItems: { offer: true, item: true, sku: { offers: true, itemSellingUnits: true } }
}

async function prepare (label: string, orders: number): Promise<{ bench: BenchDatabase, token: string }> {
  const bench = await benchDatabase(label)
  try {
    const t0 = Date.now()
    await seed(bench.database, { orders, seed: 1, anchor: DEFAULT_ANCHOR })
    // What autovacuum does on a live table: statistics, and the visibility map for index-only scans.
    await bench.database.sql`vacuum analyze`
    log(`seeded ${orders.toLocaleString('en')} orders in ${((Date.now() - t0) / 1000).toFixed(0)} s`)
    const { secret } = await issueCredential(bench.database.db, { sellerId: SELLER, kind: 'access-token', environment: 'testing' })
    return { bench, token: secret }
  } catch (err) {
    await bench.dispose() // never leave an embedded server running behind a failed run
    throw err
  }
}

/** The plan of the filtered page: proves which index serves it, and its time inside PostgreSQL. */
async function explain (bench: BenchDatabase, scenario: Scenario): Promise<string> {
  const statement = orderPageStatement({ sellerId: SELLER, storeIds: null }, parseOrderListInput(scenario.input), FULL_SELECTION, TIME_ZONE)
  const rows = await bench.database.db.execute<{ 'QUERY PLAN': string }>(sql`explain (analyze, costs off) ${statement}`)
  const plan = rows.map((r) => r['QUERY PLAN'])
  const scans = [...new Set(plan.filter((l) => /Scan using orders_|Seq Scan on orders/.test(l)).map((l) => l.trim().replace(/\s*\(actual.*$/, '').replace(/^->\s*/, '')))]
  return `${scans.join('; ')}; ${plan.find((l) => l.startsWith('Execution Time'))}`
}

async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const results: Measure[] = []
  const plans: string[] = []
  const main = await prepare('graphql_orders', SIZE)
  try {
    const targets: Target[] = ['service', 'baseline', ...(LOADERS ? ['loaders' as const] : [])]
    const servers = await Promise.all(targets.map((t) => start(t, main.bench.url)))
    try {
      for (const scenario of SCENARIOS) {
        // Every target must answer the same page before its speed means anything.
        const pages = await Promise.all(servers.map((s) => fetchPage(s, main.token, scenario)))
        for (let i = 1; i < pages.length; i++) {
          if (!isDeepStrictEqual(pages[0], pages[i])) {
            const a = JSON.stringify(pages[0]); const b = JSON.stringify(pages[i])
            let at = 0
            while (at < a.length && a[at] === b[at]) at++
            throw new Error(`${servers[i].target} answers ${scenario.name} differently from the service, from character ${at}:\n  service: ${a.slice(Math.max(0, at - 80), at + 400)}\n  ${servers[i].target}: ${b.slice(Math.max(0, at - 80), at + 400)}`)
          }
        }
        for (const server of servers) results.push(await measure(server, main.token, scenario, SIZE))
      }
      plans.push(`${SIZE.toLocaleString('en')} orders: ${await explain(main.bench, SCENARIOS[2])}`)
    } finally {
      for (const s of servers) await stop(s)
    }
  } finally {
    await main.bench.dispose()
  }
  if (LARGE > 0) {
    const large = await prepare('graphql_orders_large', LARGE)
    try {
      const service = await start('service', large.bench.url)
      try {
        for (const scenario of SCENARIOS.slice(1)) results.push(await measure(service, large.token, scenario, LARGE))
        plans.push(`${LARGE.toLocaleString('en')} orders: ${await explain(large.bench, SCENARIOS[2])}`)
      } finally {
        await stop(service)
      }
    } finally {
      await large.bench.dispose()
    }
  }

  const fmt = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 0 })
  const lines = [
    `machine: ${machineLine()}`,
    `command: BENCH_ORDERS=${SIZE} BENCH_ORDERS_LARGE=${LARGE} BENCH_DURATION=${DURATION} BENCH_CONNECTIONS=${CONNECTIONS} npm run bench:orders`,
    '',
    '| orders | page | target | req/s | p50 ms | p99 ms | SQL statements/request | req/s vs baseline |',
    '|---:|---|---|---:|---:|---:|---:|---:|'
  ]
  for (const m of results) {
    const base = results.find((b) => b.target === 'baseline' && b.scenario === m.scenario && b.orders === m.orders)
    const ratio = base && m.target !== 'baseline' ? `${(100 * m.rps / base.rps).toFixed(0)} %` : ''
    lines.push(`| ${fmt(m.orders)} | ${m.scenario} | ${m.target} | ${fmt(m.rps)} | ${m.p50} | ${m.p99} | ${m.statements.toFixed(2)} | ${ratio} |${m.errors ? ` ${m.errors} errors` : ''}`)
  }
  if (LARGE > 0) {
    lines.push('')
    for (const scenario of SCENARIOS.slice(1)) {
      const small = results.find((m) => m.target === 'service' && m.scenario === scenario.name && m.orders === SIZE)!
      const big = results.find((m) => m.target === 'service' && m.scenario === scenario.name && m.orders === LARGE)!
      lines.push(`p99 of "${scenario.name}" at ${fmt(LARGE)} vs ${fmt(SIZE)} orders: ${big.p99} / ${small.p99} ms = ${(big.p99 / small.p99).toFixed(2)}×`)
    }
  }
  lines.push('', 'plans of the filtered page (EXPLAIN ANALYZE, no bench load):', ...plans.map((p) => `- ${p}`))
  process.stdout.write(lines.join('\n') + '\n')
  if (results.some((m) => m.errors > 0)) process.exitCode = 1
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
