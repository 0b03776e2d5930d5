import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { print } from 'graphql'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { issueCredential } from '../../src/credentials/service.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'

/*
 * npm run bench:load — the service pushed past its limits, bounded in time: does it answer the excess
 * fast (429 / 503) while the process stays healthy? The real server (`npm start`'s command, in a child
 * process) with its production defaults, autocannon here, and a prober that every 100 ms times
 * /health/live and one refused request while the load runs.
 *
 *   1. GraphQL past the cost budget: full pages of 100 orders (about 85,000 points each) from one token.
 *   2. Status updates past the per-minute limit from one API key.
 *   3. Overload without rate limits: many connections of full pages, the same load twice, with load
 *      shedding (SHED_EVENT_LOOP_DELAY_MS=100) and without it (0): the peer run of the same process.
 *
 *   BENCH_ORDERS=20000   orders seeded     BENCH_DURATION=10   seconds per phase
 *   BENCH_DATABASE_URL   a PostgreSQL server instead of an embedded one
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const ORDERS = numberKnob('BENCH_ORDERS', 20_000, { min: 1, integer: true })
const DURATION = numberKnob('BENCH_DURATION', 10, { above: 0 })

function log (line: string): void { process.stderr.write(`${line}\n`) }

function freePort (): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)) })
  })
}

interface Server { child: ChildProcess, base: string }

async function startServer (url: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort()
  const start = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string
  // `exec node …`: the shell's exec (npm start runs node in its place) is not part of the command.
  const [, ...args] = start.split(/\s+/).filter((w) => w !== 'exec')
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', WORKER_ENABLED: 'false', ORDER_EXCHANGE_ENV: 'testing', ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try { if ((await fetch(`${base}/health/ready`)).ok) return { child, base } } catch {}
    if (i > 300) throw new Error('server not ready in 60 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function stopServer (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

function rssMb (pid: number): number {
  try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024 } catch { return 0 }
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

/** Times `probe` every 100 ms until stopped; also samples the server's RSS. */
function prober (server: Server, probe: () => Promise<number>): {
  stop: () => Promise<{ latencies: number[], statuses: number[], peakRss: number }>
} {
  const latencies: number[] = []
  const statuses: number[] = []
  let peakRss = 0
  const state = { running: true }
  const loop = (async () => {
    while (state.running) {
      const started = performance.now()
      try { statuses.push(await probe()) } catch { statuses.push(0) }
      latencies.push(performance.now() - started)
      peakRss = Math.max(peakRss, rssMb(server.child.pid!))
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  return { stop: async () => { state.running = false; await loop; return { latencies, statuses, peakRss } } }
}

interface Phase {
  name: string
  requests: number
  rps: number
  byStatus: Record<string, number>
  p50: number
  p99: number
  liveP50: number
  liveP99: number
  liveFailures: number
  refusedP50: number
  refusedP99: number
  refusedSamples: number
  peakRss: number
}

async function phase (name: string, server: Server, request: { method: 'POST' | 'PUT', path: string, headers: Record<string, string>, body: string }, connections: number,
  refusedProbe?: () => Promise<number>): Promise<Phase> {
  log(`  ${name}: ${connections} connections for ${DURATION} s`)
  const live = prober(server, async () => (await fetch(`${server.base}/health/live`)).status)
  const refused = refusedProbe ? prober(server, refusedProbe) : null
  const result = await autocannon({ url: `${server.base}${request.path}`, method: request.method, headers: request.headers, body: request.body, connections, duration: DURATION })
  const liveRun = await live.stop()
  const refusedRun = refused ? await refused.stop() : null
  const byStatus: Record<string, number> = {}
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) byStatus[code] = stats?.count ?? 0
  return {
    name,
    requests: result.requests.total,
    rps: result.requests.average,
    byStatus,
    p50: result.latency.p50,
    p99: result.latency.p99,
    liveP50: percentile(liveRun.latencies, 50),
    liveP99: percentile(liveRun.latencies, 99),
    liveFailures: liveRun.statuses.filter((s) => s !== 200).length,
    refusedP50: refusedRun
      ? percentile(refusedRun.latencies.filter((_, i) => refusedRun.statuses[i] !== 200), 50)
      : NaN,
    refusedP99: refusedRun
      ? percentile(refusedRun.latencies.filter((_, i) => refusedRun.statuses[i] !== 200), 99)
      : NaN,
    refusedSamples: refusedRun ? refusedRun.statuses.filter((s) => s !== 200).length : 0,
    peakRss: Math.max(liveRun.peakRss, refusedRun?.peakRss ?? 0)
  }
}

const bench = await benchDatabase('load')
try {
  log(`seeding ${ORDERS} orders`)
  await seed(bench.database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
  const token = (await issueCredential(bench.database.db, { sellerId: 1, kind: 'access-token', environment: 'testing' })).secret
  const key = (await issueCredential(bench.database.db, { sellerId: 1, kind: 'api-key', environment: 'testing' })).secret
  const ordersPage = {
    method: 'POST' as const,
    path: '/v2/graphql',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: print(OrdersDocument), variables: { input: { page: 1, limit: 100 } } })
  }
  const statusUpdate = {
    method: 'POST' as const,
    path: '/v2/accounting/orders/update-status',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ order_status: [{ Order_id: 999_999_999, Order_Status: 'ORDER_ACCEPTED' }] })
  }
  const send = (server: Server, r: typeof ordersPage) => async () => (await fetch(`${server.base}${r.path}`, { method: r.method, headers: r.headers, body: r.body })).status
  const phases: Phase[] = []

  const limited = await startServer(bench.url, {})
  phases.push(await phase('1. GraphQL past the cost budget (production defaults)', limited, ordersPage, 20, send(limited, ordersPage)))
  phases.push(await phase('2. Status updates past 120 a minute (production defaults)', limited, statusUpdate, 20, send(limited, statusUpdate)))
  await stopServer(limited)

  for (const [label, shed] of [['with load shedding (SHED_EVENT_LOOP_DELAY_MS=100)', '100'], ['without load shedding (SHED_EVENT_LOOP_DELAY_MS=0)', '0']] as const) {
    const server = await startServer(bench.url, { RATE_LIMIT_ENABLED: 'false', SHED_EVENT_LOOP_DELAY_MS: shed })
    phases.push(await phase(`3. Overload, ${label}`, server, ordersPage, 200, send(server, ordersPage)))
    await stopServer(server)
  }

  const rows = phases.map((p) => `| ${p.name} | ${p.requests} | ${p.rps.toFixed(0)} | ${Object.entries(p.byStatus).map(([c, n]) => `${c}: ${n}`).join(', ')} | ` +
    `${p.p50} / ${p.p99} | ${Number.isNaN(p.refusedP50) ? '–' : `${p.refusedP50.toFixed(1)} / ${p.refusedP99.toFixed(1)} (${p.refusedSamples})`} | ` +
    `${p.liveP50.toFixed(1)} / ${p.liveP99.toFixed(1)} (${p.liveFailures} failed) | ${p.peakRss.toFixed(0)} |`)
  console.log(`Machine: ${machineLine()}`)
  console.log(`Command: BENCH_ORDERS=${ORDERS} BENCH_DURATION=${DURATION} npm run bench:load`)
  console.log('')
  console.log('| phase | requests | req/s | answers by status | latency p50 / p99 (ms) | probe refused, p50 / p99 ms (samples) | /health/live p50 / p99 (ms) | peak RSS (MB) |')
  console.log('|---|---:|---:|---|---:|---:|---:|---:|')
  for (const row of rows) console.log(row)
} finally {
  await bench.dispose()
}
