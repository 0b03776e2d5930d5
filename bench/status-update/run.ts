import { performance } from 'node:perf_hooks'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import type { Caller } from '../../src/credentials/service.js'
import { issueCredential } from '../../src/credentials/service.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { updateOrderStatusesWith, type BatchStrategy } from './strategies.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob, numberListKnob } from '../lib/knobs.js'

/*
 * Status update benchmark: batches of mixed accept / reject / complete on a seeded database, each order
 * used once (a repeated order would be a cheap no-op). For each way of writing a batch: orders per
 * second, SQL statements per order (counted with openDatabase's onQuery), and how the cost grows from
 * 100 to 1,000 orders. "http" is the endpoint itself (set-based, through app.inject, auth included).
 *
 *   npm run bench:status
 *   BENCH_SIZES=1,100 BENCH_RUNS=3 BENCH_STRATEGIES=set-based npm run bench:status   # quick smoke run
 *
 * BENCH_SIZES (default 1,100,1000), BENCH_RUNS (runs per size; default 100 / 10 / 3 for 1 / 100 / 1,000),
 * BENCH_STRATEGIES (default http,set-based,savepoint-per-order,transaction-per-order), BENCH_ORDERS
 * (seeded orders; default: enough for every run), BENCH_DATABASE_URL (else an embedded PostgreSQL).
 */

type Mode = 'http' | BatchStrategy
const ALL_MODES: Mode[] = ['http', 'set-based', 'savepoint-per-order', 'transaction-per-order']
const sizes = numberListKnob('BENCH_SIZES', [1, 100, 1000], { min: 1, integer: true })
const modes = (process.env.BENCH_STRATEGIES?.split(',') ?? ALL_MODES) as Mode[]
const RUNS = numberKnob('BENCH_RUNS', undefined, { min: 1, integer: true })
const runsFor = (size: number): number => RUNS ?? (size === 1 ? 100 : size <= 100 ? 10 : 3)
for (const m of modes) if (!ALL_MODES.includes(m)) throw new Error(`Unknown strategy ${m}; one of ${ALL_MODES.join(', ')}`)

// The seed gives the first seller 60 % of the orders, a quarter of them placed and a quarter accepted.
const needed = modes.length * sizes.reduce((sum, size) => sum + size * (runsFor(size) + 1), 0)
const seedOrders = numberKnob('BENCH_ORDERS', Math.max(10_000, Math.ceil(needed / (0.6 * 0.24) * 1.1)), { min: 1, integer: true })

let statements = 0
const bench = await benchDatabase('status_update', { onQuery: () => { statements++ } })
try {
  const { database } = bench
  const t0 = performance.now()
  const summary = await seed(database, { orders: seedOrders, seed: 1, anchor: DEFAULT_ANCHOR })
  console.log(`seeded ${seedOrders} orders in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  // Measure a settled database, not one that autovacuum and the checkpointer are still digesting.
  await database.sql`vacuum analyze`
  await database.sql`checkpoint`
  const seller = summary.sellers[0]
  const { id: credentialId, secret } = await issueCredential(database.db, { sellerId: seller.companyId, kind: 'api-key', environment: 'testing' })
  const caller: Caller = { credentialId, sellerId: seller.companyId, kind: 'api-key', environment: 'testing', storeIds: null }
  // Throughput, not limits, is measured here: rate limits off (bench/load measures them).
  const app = await buildApp({ config: loadConfig({ DATABASE_URL: bench.url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false' }), database })
  await app.ready()

  const pool = async (status: string): Promise<number[]> =>
    (await database.sql`select id from orders where seller_id = ${seller.companyId} and status = ${status} and not is_deleted order by id`).map((r) => Number(r.id))
  const placed = await pool('ORDER_PLACED')
  const accepted = await pool('ORDER_ACCEPTED')
  const take = (from: number[], n: number): number[] => {
    if (from.length < n) throw new Error('Not enough seeded orders left: raise BENCH_ORDERS')
    return from.splice(0, n)
  }
  /** A third each of accept, reject (with a reason) and complete; a batch of one rotates through them. */
  const batch = (size: number, run: number): unknown[] => {
    if (size === 1) {
      const kind = run % 3
      if (kind === 0) return [{ Order_id: take(placed, 1)[0], Order_Status: 'ORDER_ACCEPTED' }]
      if (kind === 1) return [{ Order_id: take(placed, 1)[0], Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' }]
      return [{ Order_id: take(accepted, 1)[0], Order_Status: 'ORDER_COMPLETED_BY_SELLER' }]
    }
    const third = Math.floor(size / 3)
    return [
      ...take(placed, size - 2 * third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })),
      ...take(placed, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' })),
      ...take(accepted, third).map((id) => ({ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }))
    ]
  }
  const runOnce = async (mode: Mode, items: unknown[]): Promise<void> => {
    if (mode === 'http') {
      const res = await app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${secret}` }, payload: { order_status: items } })
      const body = res.json()
      if (res.statusCode !== 200 || body.data.failed !== 0) throw new Error(`http batch failed: ${res.body.slice(0, 300)}`)
      return
    }
    const outcome = await updateOrderStatusesWith(mode, database.db, caller, items)
    if (outcome.failed !== 0) throw new Error(`${mode} batch failed: ${JSON.stringify(outcome.errors.slice(0, 3))}`)
  }

  interface Row {
    mode: Mode, size: number, runs: number, medianMs: number, ordersPerSecond: number, statementsPerOrder: number
  }
  const rows: Row[] = []
  for (const mode of modes) {
    await runOnce(mode, batch(sizes[0], 0)) // warm-up: JIT, prepared statements
    for (const size of sizes) {
      const times: number[] = []
      let counted = 0
      const runs = runsFor(size)
      for (let run = 0; run < runs; run++) {
        const items = batch(size, run)
        statements = 0
        const start = performance.now()
        await runOnce(mode, items)
        times.push(performance.now() - start)
        counted += statements
      }
      times.sort((a, b) => a - b)
      const medianMs = times[Math.floor(times.length / 2)]
      rows.push({
        mode,
        size,
        runs,
        medianMs,
        ordersPerSecond: size / (medianMs / 1000),
        statementsPerOrder: counted / (runs * size)
      })
      console.log(`${mode} × ${size}: ${medianMs.toFixed(1)} ms, ${Math.round(size / (medianMs / 1000))} orders/s`)
    }
  }
  await app.close()

  console.log(`\n${machineLine()}; PostgreSQL ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded'}; ${seedOrders} seeded orders\n`)
  console.log('| strategy | batch | runs | median ms / batch | orders/s | SQL statements / order |')
  console.log('|---|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    console.log(`| ${r.mode} | ${r.size} | ${r.runs} | ${r.medianMs.toFixed(1)} | ${Math.round(r.ordersPerSecond)} | ${r.statementsPerOrder.toFixed(2)} |`)
  }
  if (sizes.includes(100) && sizes.includes(1000)) {
    console.log('\nGrowth from 100 to 1,000 orders (time of a 1,000-order batch ÷ time of a 100-order batch; 10 = linear):')
    for (const mode of modes) {
      const a = rows.find((r) => r.mode === mode && r.size === 100)!
      const b = rows.find((r) => r.mode === mode && r.size === 1000)!
      console.log(`  ${mode}: ${(b.medianMs / a.medianMs).toFixed(1)}×`)
    }
    const target = rows.find((r) => r.mode === 'http' && r.size === 1000) ?? rows.find((r) => r.mode === 'set-based' && r.size === 1000)
    if (target) console.log(`\nTarget ≥ 2,000 orders/s for a 1,000-order batch (${target.mode}): ${Math.round(target.ordersPerSecond)} → ${target.ordersPerSecond >= 2000 ? 'met' : 'NOT met'}`)
  }
} finally {
  await bench.dispose()
}
