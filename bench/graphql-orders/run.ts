import { fork, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSchema, print } from 'graphql'
import { benchDatabase, machineLine, type BenchDatabase } from '../lib/database.js'
import { httpLoad, LOAD_TOOL } from '../lib/http-load.js'
import { numberKnob } from '../lib/knobs.js'
import { allProcCpu, parseProcStat } from '../lib/proc-cpu.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { issueCredential } from '../../src/credentials/service.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { orderConnectionQuery } from '../../src/orders/order-json.js'
import { answerSurround, PassThrough } from '../../src/graphql/pass-through.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'
import { parseOrderListInput } from '../../src/orders/order-list-input.js'

/*
 * npm run bench:orders — the orders query under load. Every target runs in its own process (serve.ts)
 * on the same data; the HTTP load (wrk, or autocannon where wrk is missing: ../lib/http-load.ts) is sent
 * from here. The targets: the service (GraphQL pass-through), the same service with standard execution
 * (GRAPHQL_PASS_THROUGH=false, what it was before), the bare-Fastify baseline, PostGraphile 5 (Amber),
 * the limit (the page statement alone from a bare postgres.js client, no HTTP), and optionally the
 * loader variant. Each is checked to return the same orders before it is timed. Per request it reports
 * req/s, p50, p99 and CPU: the target process's (Node) and PostgreSQL's (every process of the server,
 * read from /proc). Then allocation.ts measures heap allocated per request.
 *
 *   BENCH_ORDERS=100000        orders seeded for the main table
 *   BENCH_ORDERS_LARGE=0       set to 1000000 for the p99 comparison at scale (the seed takes ~2 min)
 *   BENCH_DURATION=10          whole seconds per measurement (after a 2 s warm-up; wrk takes no fraction)
 *   BENCH_ROUNDS=3             rounds: every target measured once per round, in turn, so that a drift of
 *                              the shared machine's speed hits all of them; the tables show medians, and
 *                              each ratio is the median of the ratios within a round
 *   BENCH_CONNECTIONS=10       concurrent connections (and each target's pool size)
 *   BENCH_TARGETS              comma-separated subset of service,standard,baseline,postgraphile,limit,loaders
 *                              (default: all but loaders)
 *   BENCH_DATABASE_URL         a PostgreSQL server to use instead of an embedded one
 *   BENCH_LOAD                 wrk or autocannon (default: wrk when it is on the PATH)
 */

const here = path.dirname(fileURLToPath(import.meta.url))
const SIZE = numberKnob('BENCH_ORDERS', 100_000, { min: 1, integer: true })
const LARGE = numberKnob('BENCH_ORDERS_LARGE', 0, { min: 0, integer: true })
// Whole seconds: wrk takes -d<n>s.
const DURATION = numberKnob('BENCH_DURATION', 10, { min: 1, integer: true })
const CONNECTIONS = numberKnob('BENCH_CONNECTIONS', 10, { min: 1, integer: true })
const ROUNDS = numberKnob('BENCH_ROUNDS', 3, { min: 1, integer: true })
const ALL_TARGETS = ['service', 'standard', 'baseline', 'postgraphile', 'limit', 'loaders'] as const
type Target = typeof ALL_TARGETS[number]
const TARGETS = (process.env.BENCH_TARGETS ?? 'service,standard,baseline,postgraphile,limit').split(',').map((t) => t.trim()) as Target[]
for (const t of TARGETS) if (!ALL_TARGETS.includes(t)) throw new Error(`unknown target ${t}`)
// The others are compared with the service's page: it comes first.
if (TARGETS[0] !== 'service') throw new Error('BENCH_TARGETS must start with service')
const TIME_ZONE = 'Asia/Kolkata'
const SELLER = 1
/** A day inside the seed's 90 days. */
const DAY = '2026-10-15'

interface Scenario { name: string, input: { page: number, limit: number, fromDate?: string, toDate?: string } }
const SCENARIOS: Scenario[] = [
  { name: 'page 1, limit 20', input: { page: 1, limit: 20 } },
  { name: 'page 1, limit 100', input: { page: 1, limit: 100 } },
  { name: `one day (${DAY}), page 1, limit 20`, input: { page: 1, limit: 20, fromDate: DAY, toDate: DAY } },
  { name: `one day (${DAY}), page 2, limit 100`, input: { page: 2, limit: 100, fromDate: DAY, toDate: DAY } }
]

interface Server { target: Target, port: number, child: ChildProcess }
interface Measure {
  target: Target,
  round: number,
  scenario: string,
  orders: number,
  rps: number,
  p50: number,
  p99: number,
  statements: number,
  errors: number
  /** CPU milliseconds per request: the target's process, and PostgreSQL's. */
  nodeCpu: number,
  pgCpu: number,
  /** CPU milliseconds per request of the HTTP load generator (none for the limit: its loops are its own process's). */
  clientCpu: number
}

function log (line: string): void { process.stderr.write(`${line}\n`) }

async function start (target: Target, url: string): Promise<Server> {
  // PostGraphile 5 needs Promise.withResolvers (Node 22): polyfilled first on Node 20.
  const execArgv = ['--import', 'tsx', ...(target === 'postgraphile' ? ['--import', path.join(here, '../lib/promise-with-resolvers.mjs')] : [])]
  const child = fork(path.join(here, 'serve.ts'), [target, url, TIME_ZONE, String(CONNECTIONS)], {
    execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, GRAPHILE_ENV: process.env.GRAPHILE_ENV ?? 'production' }
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port))
    child.once('exit', (code) => reject(new Error(`${target} exited with ${code}`)))
  })
  return { target, port, child }
}

function call<T> (server: Server, message: unknown, key: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (m: unknown): void => {
      if (typeof m === 'object' && m !== null && key in m) {
        server.child.off('message', listener)
        resolve((m as Record<string, T>)[key]!)
      }
    }
    server.child.on('message', listener)
    server.child.send(message as never)
  })
}

async function stop (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.send('stop')
  await exited
}

/**
 * The full order selection in PostGraphile's names (its inflection of the same tables). The sync IDs
 * are the seller's own (migration 0009): the retailer's and the shop's link to the seller, a connection
 * of seller_retailers / seller_shops filtered on the seller (one node, or none when the seller has no link).
 */
const PGL_SELECTION = `totalCount pageInfo { hasNextPage } nodes {
  rowId orderNumber serviceOrderNumber status deliveryType sellerId storeId retailerName isActionable currencyCode
  orderTotal orderTotalFinal orderTaxAmount orderCessAmount appliedPoints totalExtraCharges roundOff totalItemsInOrder isDeleted createdAt updatedAt
  retailerByRetailerId { rowId name firstName lastName phone whatsapp
    sellerRetailersByRetailerId(condition: {sellerId: ${SELLER}}) { nodes { syncId } } }
  shopByShopId { rowId shopName sellerShopsByShopId(condition: {sellerId: ${SELLER}}) { nodes { syncId } }
    retailerByRetailerId { sellerRetailersByRetailerId(condition: {sellerId: ${SELLER}}) { nodes { syncId } } } }
  orderItemsByOrderId(orderBy: ROW_ID_ASC) { nodes { rowId skuId quantity
    offerByOfferId { rowId offerSyncId finalPriceWithTax }
    itemByItemId { rowId itemName itemSyncId }
    skusBySkuId { itemId skuNickName images tags
      offersBySkuId(orderBy: ROW_ID_ASC) { nodes { rowId skuId offerSyncId purchasePrice mrpPriceAmount currency priceRange } }
      sellingUnitsBySkuId(orderBy: ROW_ID_ASC) { nodes { rowId name multiplier isBaseUnit skuId } } } } } }`

/** PostGraphile's document for a scenario: allOrders, or the day function for a date range. */
function postgraphileQuery (scenario: Scenario): string {
  const { page, limit, fromDate, toDate } = scenario.input
  const window = `first: ${limit}, offset: ${(page - 1) * limit}`
  if (fromDate) {
    return `{ ordersOnDays(seller: ${SELLER}, fromDay: "${fromDate}", toDay: "${toDate}", tz: "${TIME_ZONE}", ${window}) { ${PGL_SELECTION} } }`
  }
  return `{ allOrders(condition: {sellerId: ${SELLER}, isDeleted: false}, orderBy: [CREATED_AT_ASC, ROW_ID_ASC], ${window}) { ${PGL_SELECTION} } }`
}

/**
 * What PostGraphile needs of the bench database: a set-returning function for the date range (its way
 * to a range condition), and the tables it cannot build types for (enum values with dashes) left out.
 */
async function preparePostgraphile (bench: BenchDatabase): Promise<void> {
  await bench.database.sql.unsafe(`create or replace function orders_on_days(seller integer, from_day date, to_day date, tz text)
    returns setof orders language sql stable as $$
      select * from orders o where o.seller_id = seller and not o.is_deleted
        and o.created_at >= from_day::timestamp at time zone tz and o.created_at < (to_day + 1)::timestamp at time zone tz
      order by o.created_at, o.id $$`)
  for (const table of ['credentials', 'order_status_history', 'order_counts', 'order_effects']) {
    await bench.database.sql.unsafe(`comment on table ${table} is E'@behavior -*'`)
  }
}

function request (server: Server, token: string, scenario: Scenario): {
  path: string, headers: Record<string, string>, body: string
} {
  if (server.target === 'baseline') {
    return { path: '/orders', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sellerId: SELLER, ...scenario.input }) }
  }
  if (server.target === 'postgraphile') {
    return { path: '/graphql', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: postgraphileQuery(scenario) }) }
  }
  return {
    path: '/v2/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: print(OrdersDocument), variables: { input: scenario.input } })
  }
}

async function fetchPage (server: Server, token: string, scenario: Scenario): Promise<string> {
  if (server.target === 'limit') return await call<string>(server, { page: scenario.input }, 'body')
  const r = request(server, token, scenario)
  const res = await fetch(`http://127.0.0.1:${server.port}${r.path}`, { method: 'POST', headers: r.headers, body: r.body })
  const text = await res.text()
  if (res.status !== 200 || text.includes('"errors"')) throw new Error(`${server.target} answered ${res.status}: ${text.slice(0, 2000)}`)
  return text
}

type ServiceOrders = {
  pageInfo: { total: number, hasNext: boolean }
  nodes: Array<{
    orderId: string
    orderTotal: number
    retailer: { id: number, syncId: string | null }
    shop: { id: number, syncId: string | null, retailerSyncId: string | null } | null
    orderItems: Array<{ id: string, sku: { offers: Array<{ id: number }> } }>
  }>
}
/** A seller's link to a retailer or a shop as PostGraphile lists it: the condition leaves one node, or none. */
type PglLinks = { nodes: Array<{ syncId: string | null }> }
type PglOrders = {
  totalCount: number
  pageInfo: { hasNextPage: boolean }
  nodes: Array<{
    rowId: string
    orderTotal: string
    retailerByRetailerId: { rowId: number, sellerRetailersByRetailerId: PglLinks }
    shopByShopId: {
      rowId: number, sellerShopsByShopId: PglLinks, retailerByRetailerId: { sellerRetailersByRetailerId: PglLinks }
    } | null
    orderItemsByOrderId: {
      nodes: Array<{ rowId: string, skusBySkuId: { offersBySkuId: { nodes: Array<{ rowId: number }> } } }>
    }
  }>
}

/** The seller's sync ID from its link (none linked: null, as the service answers). */
function linkSyncId (links: PglLinks): string | null {
  if (links.nodes.length > 1) throw new Error('PostGraphile: more than one link of the seller')
  return links.nodes[0]?.syncId ?? null
}

/**
 * The orders of a page as ids (orders, their lines, each line's SKU offers), money and the seller's sync IDs
 * of the retailer, the shop and the shop's retailer, to compare engines.
 */
function shapeOf (target: Target, body: string): string {
  if (target === 'postgraphile') {
    const data = (JSON.parse(body) as { data: Record<string, PglOrders> }).data
    const c = Object.values(data)[0]!
    return JSON.stringify([c.totalCount, c.pageInfo.hasNextPage, c.nodes.map((o) => [o.rowId, Number(o.orderTotal),
      [o.retailerByRetailerId.rowId, linkSyncId(o.retailerByRetailerId.sellerRetailersByRetailerId)],
      o.shopByShopId === null
        ? null
        : [o.shopByShopId.rowId, linkSyncId(o.shopByShopId.sellerShopsByShopId),
            linkSyncId(o.shopByShopId.retailerByRetailerId.sellerRetailersByRetailerId)],
      o.orderItemsByOrderId.nodes.map((l) => [l.rowId, l.skusBySkuId.offersBySkuId.nodes.map((f) => f.rowId)])])])
  }
  const c = (JSON.parse(body) as { data: { orders: ServiceOrders } }).data.orders
  return JSON.stringify([c.pageInfo.total, c.pageInfo.hasNext, c.nodes.map((o) => [o.orderId, o.orderTotal,
    [o.retailer.id, o.retailer.syncId],
    o.shop === null ? null : [o.shop.id, o.shop.syncId, o.shop.retailerSyncId],
    o.orderItems.map((l) => [l.id, l.sku.offers.map((f) => f.id)])])])
}

/**
 * CPU time of every process of the PostgreSQL server, in ms: the postmaster and its live children, plus
 * the children that have exited (the postmaster's cutime and cstime). Without the exited ones the sum
 * drops whenever a backend ends: PostGraphile's pool closes connections idle for 10 s, and their CPU then
 * vanished from the figures of whatever ran next (the limit target's PostgreSQL CPU read 6–9 ms a page of
 * 100 instead of the 15 ms it cost when measured alone).
 */
function pgCpuMs (postmaster: number): number {
  let total = 0
  for (const [pid, cpu] of allProcCpu()) {
    if (pid === postmaster) total += cpu.ownMs + cpu.childrenMs
    else if (cpu.ppid === postmaster) total += cpu.ownMs
  }
  return total
}

async function postmasterOf (bench: BenchDatabase): Promise<number> {
  const [row] = await bench.database.sql<Array<{ pid: number }>>`select pg_backend_pid() as pid`
  return parseProcStat(fs.readFileSync(`/proc/${row!.pid}/stat`, 'utf8')).ppid
}

function percentile (sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function measure (server: Server, token: string, scenario: Scenario, orders: number, postmaster: number,
  round: number): Promise<Measure> {
  let rps: number; let p50: number; let p99: number; let total: number; let errors = 0
  let before: number; let nodeBefore: number; let pgBefore: number
  let clientCpu = 0
  if (server.target === 'limit') {
    await call(server, { run: { input: scenario.input, seconds: 2, connections: CONNECTIONS } }, 'result') // warm-up
    before = await call<number>(server, 'statements', 'statements'); nodeBefore = await call<number>(server, 'cpu', 'cpu'); pgBefore = pgCpuMs(postmaster)
    const result = await call<{ requests: number, latencies: number[] }>(server, { run: { input: scenario.input, seconds: DURATION, connections: CONNECTIONS } }, 'result')
    const sorted = result.latencies.sort((a, b) => a - b)
    total = result.requests; rps = total / DURATION
    p50 = Math.round(percentile(sorted, 0.5)); p99 = Math.round(percentile(sorted, 0.99))
  } else {
    const r = request(server, token, scenario)
    const options = { url: `http://127.0.0.1:${server.port}${r.path}`, method: 'POST' as const, headers: r.headers, body: r.body, connections: CONNECTIONS }
    await httpLoad({ ...options, seconds: 2 }) // warm-up: JIT, prepared statements, caches
    before = await call<number>(server, 'statements', 'statements'); nodeBefore = await call<number>(server, 'cpu', 'cpu'); pgBefore = pgCpuMs(postmaster)
    const result = await httpLoad({ ...options, seconds: DURATION })
    total = result.requests; rps = result.perSecond; p50 = result.p50; p99 = result.p99; errors = result.errors
    clientCpu = result.cpuMs / total
  }
  const pgCpu = (pgCpuMs(postmaster) - pgBefore) / total
  const nodeCpu = ((await call<number>(server, 'cpu', 'cpu')) - nodeBefore) / 1000 / total
  const statements = ((await call<number>(server, 'statements', 'statements')) - before) / total
  const m: Measure = {
    target: server.target,
    round,
    scenario: scenario.name,
    orders,
    rps,
    p50,
    p99,
    statements,
    errors,
    nodeCpu,
    pgCpu,
    clientCpu
  }
  log(`  ${round}/${ROUNDS} ${m.target.padEnd(12)} ${m.scenario.padEnd(36)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms  ` +
    `CPU/req node ${m.nodeCpu.toFixed(2)} ms pg ${m.pgCpu.toFixed(2)} ms client ${m.clientCpu.toFixed(2)} ms  ${m.statements.toFixed(2)} statements/req${errors ? `  ERRORS ${errors}` : ''}`)
  return m
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

/**
 * The plan of the filtered page as the service sends it (the pass-through's statement): which index serves it,
 * its time inside PostgreSQL.
 */
async function explain (bench: BenchDatabase, scenario: Scenario): Promise<string> {
  const passThrough = new PassThrough(buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8')))
  const part = passThrough.plan(print(OrdersDocument), { input: scenario.input }, null)?.parts[0]
  if (!part || part.kind !== 'orders') throw new Error('the full selection is not passed through')
  const query = orderConnectionQuery(bench.database.db, { sellerId: SELLER, storeIds: null }, parseOrderListInput(scenario.input), part.entries, TIME_ZONE, answerSurround(['orders'], 0))
  const rows = await bench.database.sql.unsafe(`explain (analyze, costs off) ${query.sql}`, query.params as never[])
  const plan = rows.map((r) => (r as Record<string, string>)['QUERY PLAN']!)
  const scans = [...new Set(plan.filter((l) => /Scan using orders_|Seq Scan on orders/.test(l)).map((l) => l.trim().replace(/\s*\(actual.*$/, '').replace(/^->\s*/, '')))]
  return `${scans.join('; ')}; ${plan.find((l) => l.startsWith('Execution Time'))}`
}

/** Runs the allocation measurement (allocation.ts) in a process of its own with a large young generation. */
function allocation (url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(here, 'allocation.ts'), [url, TIME_ZONE], {
      execArgv: ['--import', 'tsx', '--expose-gc', '--max-semi-space-size=256'], stdio: ['ignore', 'pipe', 'inherit', 'ipc']
    })
    let out = ''
    child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
    child.once('exit', (code) => code === 0 ? resolve(out) : reject(new Error(`allocation.ts exited with ${code}`)))
  })
}

async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const results: Measure[] = []
  const plans: string[] = []
  let allocationTable = ''
  const main = await prepare('graphql_orders', SIZE)
  try {
    if (TARGETS.includes('postgraphile')) await preparePostgraphile(main.bench)
    const postmaster = await postmasterOf(main.bench)
    const servers = await Promise.all(TARGETS.map((t) => start(t, main.bench.url)))
    try {
      for (const scenario of SCENARIOS) {
        // Every target must answer the same page before its speed means anything: the standard execution
        // and the limit byte for byte, the others the same orders, lines, offers, totals and money.
        const pages = await Promise.all(servers.map((s) => fetchPage(s, main.token, scenario)))
        const service = pages[0]!
        servers.forEach((server, i) => {
          const same = server.target === 'standard' || server.target === 'limit'
            ? pages[i] === service
            : shapeOf(server.target, pages[i]!) === shapeOf('service', service)
          if (!same) {
            const a = same ? '' : server.target === 'standard' || server.target === 'limit' ? service : shapeOf('service', service)
            const b = server.target === 'standard' || server.target === 'limit' ? pages[i]! : shapeOf(server.target, pages[i]!)
            let at = 0
            while (at < a.length && a[at] === b[at]) at++
            throw new Error(`${server.target} answers ${scenario.name} differently from the service, from character ${at}:\n  service: ${a.slice(Math.max(0, at - 80), at + 300)}\n  ${server.target}: ${b.slice(Math.max(0, at - 80), at + 300)}`)
          }
        })
        for (let round = 1; round <= ROUNDS; round++) {
          for (const server of servers) {
            results.push(await measure(server, main.token, scenario, SIZE, postmaster, round))
          }
        }
      }
      plans.push(`${SIZE.toLocaleString('en')} orders: ${await explain(main.bench, SCENARIOS[3]!)}`)
    } finally {
      for (const s of servers) await stop(s)
    }
    allocationTable = await allocation(main.bench.url)
  } finally {
    await main.bench.dispose()
  }
  if (LARGE > 0) {
    const large = await prepare('graphql_orders_large', LARGE)
    try {
      const postmaster = await postmasterOf(large.bench)
      const service = await start('service', large.bench.url)
      try {
        for (const scenario of [SCENARIOS[1]!, SCENARIOS[3]!]) {
          for (let round = 1; round <= ROUNDS; round++) {
            results.push(await measure(service, large.token, scenario, LARGE, postmaster, round))
          }
        }
        plans.push(`${LARGE.toLocaleString('en')} orders: ${await explain(large.bench, SCENARIOS[3]!)}`)
      } finally {
        await stop(service)
      }
    } finally {
      await large.bench.dispose()
    }
  }

  const fmt = (n: number) => n.toLocaleString('en', { maximumFractionDigits: 0 })
  const median = (values: number[]): number => {
    const sorted = [...values].sort((a, b) => a - b)
    const mid = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
  }
  const rounds = (target: Target, m: { scenario: string, orders: number }): Measure[] =>
    results.filter((r) => r.target === target && r.scenario === m.scenario && r.orders === m.orders)
  // A ratio: within each round, this target's req/s over the other's; the median of those, and their range.
  const ratio = (m: { target: Target, scenario: string, orders: number }, target: Target): string => {
    if (m.target === target) return ''
    const per = rounds(m.target, m).flatMap((a) => {
      const b = rounds(target, m).find((r) => r.round === a.round)
      return b ? [a.rps / b.rps] : []
    })
    if (per.length === 0) return ''
    const pct = (x: number) => (100 * x).toFixed(0)
    return per.length === 1 ? `${pct(per[0]!)} %` : `${pct(median(per))} % (${pct(Math.min(...per))}–${pct(Math.max(...per))})`
  }
  const lines = [
    `machine: ${machineLine()}`,
    `command: BENCH_ORDERS=${SIZE} BENCH_ORDERS_LARGE=${LARGE} BENCH_DURATION=${DURATION} BENCH_ROUNDS=${ROUNDS} BENCH_CONNECTIONS=${CONNECTIONS} BENCH_TARGETS=${TARGETS.join(',')} npm run bench:orders`,
    '',
    `HTTP load: ${LOAD_TOOL}, ${CONNECTIONS} connections, ${DURATION} s after a 2 s warm-up (the limit: ${CONNECTIONS} loops in its own process).`,
    `Figures: medians of ${ROUNDS} round(s); req/s with its range; a ratio is the median of the ratios within a round (range).`,
    '',
    '| orders | page | target | req/s | p50 ms | p99 ms | Node CPU ms/req | PG CPU ms/req | load CPU ms/req | statements/req | vs limit | vs standard | vs PostGraphile |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  const seen = new Set<string>()
  for (const first of results) {
    const key = `${first.orders}|${first.scenario}|${first.target}`
    if (seen.has(key)) continue
    seen.add(key)
    const all = rounds(first.target, first)
    const med = (f: (m: Measure) => number) => median(all.map(f))
    const rps = all.length === 1 ? fmt(all[0]!.rps) : `${fmt(med((m) => m.rps))} (${fmt(Math.min(...all.map((m) => m.rps)))}–${fmt(Math.max(...all.map((m) => m.rps)))})`
    const errors = all.reduce((n, m) => n + m.errors, 0)
    lines.push(`| ${fmt(first.orders)} | ${first.scenario} | ${first.target} | ${rps} | ${med((m) => m.p50).toFixed(0)} | ${med((m) => m.p99).toFixed(0)} | ` +
      `${med((m) => m.nodeCpu).toFixed(2)} | ${med((m) => m.pgCpu).toFixed(2)} | ${first.target === 'limit' ? '–' : med((m) => m.clientCpu).toFixed(2)} | ` +
      `${first.target === 'postgraphile' ? '–' : med((m) => m.statements).toFixed(2)} | ${ratio(first, 'limit')} | ${ratio(first, 'standard')} | ` +
      `${first.target === 'service' ? ratio(first, 'postgraphile') : ''} |${errors ? ` ${errors} errors` : ''}`)
  }
  if (LARGE > 0) {
    lines.push('')
    for (const scenario of [SCENARIOS[1]!, SCENARIOS[3]!]) {
      const small = median(rounds('service', { scenario: scenario.name, orders: SIZE }).map((m) => m.p99))
      const big = median(rounds('service', { scenario: scenario.name, orders: LARGE }).map((m) => m.p99))
      lines.push(`p99 of "${scenario.name}" at ${fmt(LARGE)} vs ${fmt(SIZE)} orders (medians): ${big.toFixed(0)} / ${small.toFixed(0)} ms = ${(big / small).toFixed(2)}×`)
    }
  }
  lines.push('', 'plans of the filtered page (EXPLAIN ANALYZE, no bench load):', ...plans.map((p) => `- ${p}`))
  lines.push('', allocationTable)
  process.stdout.write(lines.join('\n') + '\n')
  if (results.some((m) => m.errors > 0)) process.exitCode = 1
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`)
  process.exit(1)
})
