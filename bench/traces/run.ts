import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { print } from 'graphql'
import { benchDatabase, machineLine } from '../lib/database.js'
import { httpLoad, LOAD_TOOL } from '../lib/http-load.js'
import { listKnob, numberKnob } from '../lib/knobs.js'
import { parseProcStat } from '../lib/proc-cpu.js'
import { eventually } from '../../test/helpers/eventually.js'
import { freePort, ready, ROOT } from '../../test/helpers/server-process.js'
import { startOtlpReceiver } from '../../test/helpers/otlp-receiver.js'
import { issueCredential } from '../../src/credentials/service.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { median } from '../lib/median.js'

/*
 * npm run bench:traces — what OpenTelemetry costs (issue 26). The real server (built: dist/server.js) on one seeded
 * database, three ways: tracing off, on with every trace kept, and on keeping 1 % (parentbased_traceidratio
 * 0.01), the last two exporting http/protobuf to an OTLP receiver in this process that only counts what it
 * gets. Each round starts each of them afresh, one at a time, in an order rotating from round to round, so
 * a drift of the shared machine's speed hits all three:
 *
 * - orders: bench:orders' query (the service's Orders document, page 1, limit 100) from BENCH_CONNECTIONS
 *   connections for BENCH_DURATION (whole) seconds: requests/s, and the server process's CPU per request;
 * - status: bench:status's batches of 1,000 (a third each accept, reject with a reason, complete; every
 *   order used once), BENCH_BATCHES in a row: orders/s, and CPU per batch.
 *
 * Each figure is the median over the rounds; each "cost" is the median of the per-round ratios to off.
 * The worker is off in the servers (as in bench:status): the jobs a batch enqueues wait.
 *
 * BENCH_BASELINE_DIR adds a fourth server: the same command in another checkout (the commit before
 * tracing, `git archive <commit> | tar -x -C <dir>` with node_modules linked), to show that with tracing off
 * the figures did not move.
 *
 *   BENCH_ROUNDS=6 BENCH_DURATION=6 BENCH_CONNECTIONS=10 BENCH_BATCHES=1
 *   BENCH_ORDERS       seeded orders (default: enough for every batch)
 *   BENCH_DATABASE_URL a PostgreSQL server to use instead of an embedded one
 *   BENCH_LOAD         wrk or autocannon (default: wrk when it is on the PATH)
 *   BENCH_NODE_FLAGS   flags for every server's node, off and on alike (e.g. --max-semi-space-size=64)
 *   BENCH_TRACED_NODE_FLAGS  flags for the traced servers' node only: what docs/operate/observability.md
 *                      recommends with tracing on, against off as `npm start` runs (e.g. --max-semi-space-size=64)
 */

// Many short rounds rather than a few long ones: on a shared machine one measurement moves by ±15 %.
const ROUNDS = numberKnob('BENCH_ROUNDS', 6, { min: 1, integer: true })
// Whole seconds: wrk takes -d<n>s.
const DURATION = numberKnob('BENCH_DURATION', 6, { min: 1, integer: true })
const CONNECTIONS = numberKnob('BENCH_CONNECTIONS', 10, { min: 1, integer: true })
const BATCHES = numberKnob('BENCH_BATCHES', 1, { min: 1, integer: true })
const BASELINE = process.env.BENCH_BASELINE_DIR
/** Extra flags for every server's node (off and on alike), e.g. a garbage collector setting to compare. */
const NODE_FLAGS = listKnob('BENCH_NODE_FLAGS')
/** Extra flags for the traced servers only: a setting recommended with tracing on, against off as it runs. */
const TRACED_NODE_FLAGS = listKnob('BENCH_TRACED_NODE_FLAGS')
const BATCH = 1000
const STATUS_URL = '/v2/accounting/orders/update-status'

interface Variant { name: string, env: Record<string, string>, dir: string, traced: boolean }
const VARIANTS: Variant[] = [
  { name: 'off', env: {}, dir: ROOT, traced: false },
  { name: 'on, 100 %', env: { OTEL_TRACES_SAMPLER: 'parentbased_always_on' }, dir: ROOT, traced: true },
  {
    name: 'on, 1 %',
    env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' },
    dir: ROOT,
    traced: true
  },
  ...(BASELINE ? [{ name: `before (${path.basename(BASELINE)})`, env: {}, dir: path.resolve(BASELINE), traced: false }] : [])
]

// Every batch takes 667 placed orders (accept, reject) and 333 accepted ones (complete); the seed gives the
// first seller 60 % of the orders, a quarter of them placed and a quarter accepted.
const batches = ROUNDS * VARIANTS.length * (BATCHES + 0.03)
const seedOrders = numberKnob('BENCH_ORDERS', Math.ceil(batches * 667 / (0.6 * 0.24) * 1.1), { min: 1, integer: true })

function log (line: string): void { process.stderr.write(`${line}\n`) }
function cpuMs (pid: number): number { return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).ownMs }

const receiver = await startOtlpReceiver({ decode: false })
const bench = await benchDatabase('traces')
let running: ChildProcess | null = null
const stop = async (): Promise<void> => {
  const child = running
  running = null
  if (!child || child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}
try {
  const { database } = bench
  const t0 = performance.now()
  const summary = await seed(database, { orders: seedOrders, seed: 1, anchor: DEFAULT_ANCHOR })
  log(`seeded ${seedOrders} orders in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  await database.sql`vacuum analyze`
  await database.sql`checkpoint`
  const seller = summary.sellers[0].companyId
  const { secret: apiKey } = await issueCredential(database.db, { sellerId: seller, kind: 'api-key', environment: 'testing' })
  const { secret: token } = await issueCredential(database.db, { sellerId: seller, kind: 'access-token', environment: 'testing' })
  const pool = async (status: string): Promise<number[]> => (await database.sql`select id from orders
    where seller_id = ${seller} and status = ${status} and not is_deleted order by id`).map((r) => Number(r.id))
  const placed = await pool('ORDER_PLACED')
  const accepted = await pool('ORDER_ACCEPTED')
  const take = (from: number[], n: number): number[] => {
    if (from.length < n) throw new Error('not enough seeded orders left: raise BENCH_ORDERS')
    return from.splice(0, n)
  }
  const batch = (size: number): string => {
    const third = Math.floor(size / 3)
    return JSON.stringify({
      order_status: [
        ...take(placed, size - 2 * third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })),
        ...take(placed, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' })),
        ...take(accepted, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }))
      ]
    })
  }

  const ordersBody = JSON.stringify({ query: print(OrdersDocument), variables: { input: { page: 1, limit: 100 } } })
  interface OrdersRun { rps: number, p50: number, errors: number, requests: number }
  const orders = async (port: number, seconds: number): Promise<OrdersRun> => {
    const r = await httpLoad({
      url: `http://127.0.0.1:${port}/v2/graphql`,
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: ordersBody,
      connections: CONNECTIONS,
      seconds
    })
    return { rps: r.perSecond, p50: r.p50, errors: r.errors, requests: r.requests }
  }
  const status = async (port: number, size = BATCH): Promise<void> => {
    const res = await fetch(`http://127.0.0.1:${port}${STATUS_URL}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: batch(size)
    })
    const body = await res.json() as { data?: { failed: number } }
    if (res.status !== 200 || body.data?.failed !== 0) throw new Error(`batch answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`)
  }

  // The service as production runs it (npm run start:built): compiled, without tsx and its source maps, which
  // would hold every loaded module's map in the heap (the SDK's too) and make the GC's work look larger.
  for (const dir of new Set(VARIANTS.map((v) => v.dir))) {
    log(`building ${dir}`)
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  }

  /** The built server in the variant's checkout; resolves once it is ready. */
  const start = async (variant: Variant): Promise<{ child: ChildProcess, port: number }> => {
    const port = await freePort()
    const tracing = variant.traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...variant.env } : {}
    const nodeFlags = ['--max-old-space-size=1024', ...NODE_FLAGS, ...(variant.traced ? TRACED_NODE_FLAGS : [])]
    const child = spawn(process.execPath, [...nodeFlags, 'dist/server.js'], {
      cwd: variant.dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        DATABASE_URL: bench.url,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        WORKER_ENABLED: 'false',
        RATE_LIMIT_ENABLED: 'false',
        // Throughput, not overload, is measured: no 503 when the shared machine stalls the event loop.
        SHED_EVENT_LOOP_DELAY_MS: '0',
        SHED_HEAP_USED_BYTES: '0',
        DB_POOL_MAX: String(CONNECTIONS),
        ...tracing
      }
    })
    running = child
    await eventually(null, `${variant.name} ready`, () => ready(port), { timeoutMs: 120_000 })
    return { child, port }
  }

  interface Figures { rps: number, ordersCpu: number, p50: number, statusRate: number, statusCpu: number }
  const measured = new Map<string, Figures[]>(VARIANTS.map((v) => [v.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...VARIANTS.slice(round % VARIANTS.length), ...VARIANTS.slice(0, round % VARIANTS.length)]
    for (const variant of order) {
      // A fresh process each round: one process's own speed (its heap, its JIT's choices) is not the variant's.
      const { child, port } = await start(variant)
      const pid = child.pid!
      // Warm-up: JIT, prepared statements, the exporter's first connection.
      await orders(port, 2)
      await status(port, 30)
      let cpu = cpuMs(pid)
      const o = await orders(port, DURATION)
      if (o.errors > o.requests / 100) throw new Error(`${variant.name}: ${o.errors} of ${o.requests} orders requests failed`)
      const ordersCpu = (cpuMs(pid) - cpu) / o.requests
      cpu = cpuMs(pid)
      const started = performance.now()
      for (let b = 0; b < BATCHES; b++) await status(port)
      const seconds = (performance.now() - started) / 1000
      const figures = {
        rps: o.rps,
        ordersCpu,
        p50: o.p50,
        statusRate: BATCHES * BATCH / seconds,
        statusCpu: (cpuMs(pid) - cpu) / BATCHES
      }
      await stop()
      measured.get(variant.name)!.push(figures)
      log(`round ${round + 1} ${variant.name}: orders ${o.rps.toFixed(0)} req/s (${ordersCpu.toFixed(2)} ms CPU/req), ` +
        `status ${figures.statusRate.toFixed(0)} orders/s (${figures.statusCpu.toFixed(0)} ms CPU/batch)`)
    }
  }

  const off = measured.get('off')!
  /** The throughput lost against off, median of the rounds' ratios. */
  const costOf = (name: string, key: keyof Figures): string => {
    const cost = median(measured.get(name)!.map((f, round) => 1 - f[key] / off[round][key])) * 100
    return `${cost >= 0 ? '+' : '−'}${Math.abs(cost).toFixed(1)} %`
  }
  console.log(`\n${machineLine()}; PostgreSQL ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded'}; ` +
    `${seedOrders} seeded orders; load: ${LOAD_TOOL}, ${CONNECTIONS} connections, ${DURATION} s; ${ROUNDS} rounds; ` +
    `${BATCHES} batches of ${BATCH} per round; ${receiver.requests.protobuf} export requests, ` +
    `${(receiver.requests.bytes / 2 ** 20).toFixed(1)} MiB received; node flags: every server ` +
    `${NODE_FLAGS.join(' ') || '(none)'}, traced ones ${TRACED_NODE_FLAGS.join(' ') || '(none)'}\n`)
  console.log('| tracing | orders (limit 100) req/s | cost | CPU ms / request | p50 ms | status (batches of 1,000) orders/s | cost | CPU ms / batch |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const { name, dir } of VARIANTS) {
    const f = measured.get(name)!
    const first = name === 'off' || dir !== ROOT
    console.log(`| ${name} | ${median(f.map((x) => x.rps)).toFixed(0)} | ${first ? '—' : costOf(name, 'rps')} | ` +
      `${median(f.map((x) => x.ordersCpu)).toFixed(2)} | ${median(f.map((x) => x.p50)).toFixed(1)} | ` +
      `${median(f.map((x) => x.statusRate)).toFixed(0)} | ${first ? '—' : costOf(name, 'statusRate')} | ` +
      `${median(f.map((x) => x.statusCpu)).toFixed(0)} |`)
  }
  const baseline = VARIANTS.find((v) => v.dir !== ROOT)
  if (baseline) {
    const change = (key: keyof Figures): string => {
      const before = measured.get(baseline.name)!
      const cost = median(off.map((f, round) => 1 - f[key] / before[round][key])) * 100
      return `${cost >= 0 ? '+' : '−'}${Math.abs(cost).toFixed(1)} %`
    }
    console.log(`\nTracing off against ${baseline.name}: throughput cost orders ${change('rps')}, status ${change('statusRate')}`)
  }
  const at1 = ['rps', 'statusRate'].map((key) => {
    const ratios = measured.get('on, 1 %')!.map((f, round) => 1 - f[key as keyof Figures] / off[round][key as keyof Figures])
    return median(ratios)
  })
  console.log(`\nTarget: at most 5 % throughput cost at 1 % sampling: orders ${(at1[0] * 100).toFixed(1)} %, status ` +
    `${(at1[1] * 100).toFixed(1)} % → ${at1.every((c) => c <= 0.05) ? 'met' : 'NOT met'}`)
} finally {
  await stop()
  await bench.dispose()
  await receiver.close()
}
