import { performance } from 'node:perf_hooks'
import { print } from 'graphql'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueCredential, type Caller } from '../../src/credentials/service.js'
import { recordEvents, type OrderEvent } from '../../src/events/record-events.js'
import { EventsDocument, OrdersDocument } from '../../src/graphql/generated/operations.js'
import { placeOrders } from '../../src/platform/place-orders.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { updateOrderStatuses } from '../../src/status-update/update-batch.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { alternate, WRITE_TABLE_HEAD, writeTableRow, type WriteResult } from '../lib/event-log-ab.js'
import { injectLoad } from '../lib/inject-load.js'
import { median } from '../lib/median.js'
import { numberKnob } from '../lib/knobs.js'
import { ordersIn, placementMaker, statusBatchMaker } from './fixtures.js'
import { main as webhooksMain } from './webhooks.js'
import { main as fairnessMain } from './fairness.js'

/*
 * npm run bench:events — what the event log costs the writes it records, and how fast the feed reads, each
 * as a ratio measured in one run, in one process, on one database (issue 24; the targets are issue 40's,
 * thin events: a status batch and a placement with the log at ≥ 95 % of their orders/s without it, a page
 * of 100 events with full orders at ≥ 90 % of the orders page's rate):
 *
 *   1. placements: batches of BENCH_PLACE_BATCH (1,000) new orders of 1–4 lines for seller 1, through the
 *      platform's own service (placeOrders, what POST /v2/platform/orders calls), with the event log and
 *      without it (the same code with the log's statement left out: events/record-events.ts EventLogging,
 *      which only this bench sets), alternating, BENCH_RUNS (6) batches each: orders per second;
 *   2. status updates: batches of BENCH_STATUS_BATCH (600) orders, a third each accepted, rejected and
 *      completed (as bench:status), through updateOrderStatuses (what the route calls), with and without
 *      the log, alternating, BENCH_RUNS each: orders per second;
 *   3. reads: a page of 100 events with their full orders (the contract's full selection, the client's
 *      document; each event's order built as it is now, in the page's statement) against a page of 100
 *      orders with the same selection, both through app.inject (no HTTP: the service's own work) from
 *      BENCH_CONCURRENCY (4) loops for BENCH_DURATION (5) s, BENCH_ROUNDS (3) rounds alternating, at random
 *      cursors and pages: requests per second, medians.
 *
 * On a database seeded with BENCH_ORDERS (40,000) demo orders, VACUUM ANALYZE. BENCH_DATABASE_URL picks the
 * server (else an embedded PostgreSQL). Quick run:
 *   BENCH_ORDERS=20000 BENCH_RUNS=3 BENCH_DURATION=3 BENCH_ROUNDS=2 npm run bench:events
 *
 * BENCH_WEBHOOKS=1 runs issue 25's webhook deliveries instead (webhooks.ts: throughput, commit-to-delivery
 * latency, and what enabled endpoints cost the status update); BENCH_WEBHOOKS=fairness one seller's endpoint
 * hanging with 10,000 deliveries pending against another seller's test ping (fairness.ts).
 */

const ORDERS = numberKnob('BENCH_ORDERS', 40_000, { min: 1, integer: true })
const RUNS = numberKnob('BENCH_RUNS', 6, { min: 1, integer: true })
const PLACE_BATCH = numberKnob('BENCH_PLACE_BATCH', 1000, { min: 1, integer: true })
const STATUS_BATCH = numberKnob('BENCH_STATUS_BATCH', 600, { min: 1, integer: true })
const DURATION = numberKnob('BENCH_DURATION', 5, { above: 0 })
const CONCURRENCY = numberKnob('BENCH_CONCURRENCY', 4, { min: 1, integer: true })
const ROUNDS = numberKnob('BENCH_ROUNDS', 3, { min: 1, integer: true })
const SELLER = 1
/** Issue 40: a page of 100 events with full orders at ≥ 90 % of the orders page's rate. */
const READ_GOAL = 0.9

const log = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`) }

interface ReadResult { target: string, rps: number[], p50: number, bytes: number }

async function measureReads (app: FastifyInstance, token: string, target: string, query: string,
  input: () => Record<string, unknown>, result: ReadResult): Promise<void> {
  const { bytes, times, seconds } = await injectLoad({
    app, token, target, query, variables: () => ({ input: input() }), concurrency: CONCURRENCY, seconds: DURATION
  })
  result.bytes = bytes
  const rps = times.length / seconds
  result.rps.push(rps)
  result.p50 = median(times)
  log(`  ${target}: ${rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(0)} ms, ${result.bytes.toLocaleString('en')} B`)
}

async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const bench = await benchDatabase('events')
  try {
    const { database } = bench
    const sql = database.sql
    const t0 = performance.now()
    await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    await sql`vacuum analyze`
    await sql`checkpoint`
    log(`seeded ${ORDERS.toLocaleString('en')} orders in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

    // 1. Placements: rows of the platform's order for seller 1 (fixtures.ts).
    const placement = await placementMaker(sql, SELLER)
    log(`placements: batches of ${PLACE_BATCH}, ${RUNS} each way`)
    const results: WriteResult[] = await alternate('placements', PLACE_BATCH, RUNS, async (mode, n) => {
      const size = n < 0 ? 100 : PLACE_BATCH
      const outcome = await placeOrders(database.db, placement(size),
        { credentialId: null, autoRejectAfterMs: 24 * 3600 * 1000, eventLogging: mode })
      if (outcome.inserted !== size) throw new Error(`placement: ${JSON.stringify(outcome).slice(0, 300)}`)
    }, log)

    // Every order placed through the platform has its order.placed event; the seed records none (its orders
    // are history), so the seller's orders without one get it here, as the platform would have written it:
    // the feed then pages through a log of the seller's orders, as the orders page does through its orders.
    const bare = await sql`select o.id, o.store_id, o.status from orders o where o.seller_id = ${SELLER}
      and not exists (select 1 from seller_events e where e.order_id = o.id) order by o.id`
    for (let at = 0; at < bare.length; at += PLACE_BATCH) {
      await database.db.transaction((tx) => recordEvents(tx, bare.slice(at, at + PLACE_BATCH).map((r): OrderEvent => ({
        sellerId: SELLER,
        storeId: r.store_id,
        orderId: Number(r.id),
        type: 'order.placed',
        status: r.status,
        previousStatus: null,
        reason: null
      }))))
    }
    await sql`vacuum analyze`
    log(`order.placed recorded for the seed's ${bare.length.toLocaleString('en')} orders of seller ${SELLER}`)

    // 2. Status updates: the seller's placed orders (the seed's and the ones just placed), each used once.
    const { id: credentialId } = await issueCredential(database.db, { sellerId: SELLER, kind: 'api-key', environment: 'testing' })
    const caller: Caller = { credentialId, sellerId: SELLER, kind: 'api-key', environment: 'testing', storeIds: null }
    const batch = statusBatchMaker(await ordersIn(sql, SELLER, 'ORDER_PLACED'), await ordersIn(sql, SELLER, 'ORDER_ACCEPTED'))
    log(`status updates: batches of ${STATUS_BATCH}, ${RUNS} each way`)
    results.push(...await alternate('status updates', STATUS_BATCH, RUNS, async (mode, n) => {
      const size = n < 0 ? 30 : STATUS_BATCH
      const outcome = await updateOrderStatuses(database.db, { seller: caller }, batch(size), { eventLogging: mode })
      if (outcome.failed !== 0) throw new Error(`status update: ${JSON.stringify(outcome.errors.slice(0, 3))}`)
    }, log))

    // 3. Reads: the feed's page of 100 events with full orders against the orders page of 100. A page builds
    // each order it names once: how many distinct orders a page of the log holds says what it builds.
    const [{ events, last, perPage }] = await sql`select count(*)::int as events, max(sequence)::int as last,
        (select avg(n)::float8 from (select count(distinct order_id) as n from seller_events
          where seller_id = ${SELLER} group by (sequence - 1) / 100) w) as "perPage"
      from seller_events where seller_id = ${SELLER}`
    log(`reads: seller ${SELLER}'s log holds ${events} events (${perPage.toFixed(1)} distinct orders a page of 100); ` +
      `${ROUNDS} rounds of ${DURATION} s, ${CONCURRENCY} loops`)
    const { secret: token } = await issueCredential(database.db, { sellerId: SELLER, kind: 'access-token', environment: 'testing' })
    const app = await buildApp({
      config: loadConfig({ DATABASE_URL: bench.url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false', SHED_EVENT_LOOP_DELAY_MS: '0', SHED_HEAP_USED_BYTES: '0' }),
      database
    })
    await app.ready()
    const [{ n: sellerOrders }] = await sql`select count(*)::int as n from orders where seller_id = ${SELLER} and not is_deleted`
    const pages = Math.max(1, Math.floor(sellerOrders / 100) - 1)
    const ordersRead: ReadResult = { target: 'orders, page of 100 (full selection)', rps: [], p50: 0, bytes: 0 }
    const eventsRead: ReadResult = { target: 'events, page of 100 with full orders', rps: [], p50: 0, bytes: 0 }
    const random = (n: number) => Math.floor(Math.random() * n)
    for (let round = 0; round < ROUNDS; round++) {
      await measureReads(app, token, ordersRead.target, print(OrdersDocument),
        () => ({ limit: 100, page: 1 + random(pages) }), ordersRead)
      await measureReads(app, token, eventsRead.target, print(EventsDocument),
        () => ({ limit: 100, after: String(random(Math.max(1, last - 100))) }), eventsRead)
    }
    const passed = (await app.metrics.graphqlPassThrough.get()).values.find((v) => v.labels.outcome === 'answered')?.value ?? 0
    await app.close()

    const ratios = Array.from({ length: ROUNDS }, (_, i) => eventsRead.rps[i]! / ordersRead.rps[i]!)
    process.stdout.write(`\n${machineLine()}; PostgreSQL ${process.env.BENCH_DATABASE_URL ? 'at BENCH_DATABASE_URL' : 'embedded'}; ` +
      `${ORDERS.toLocaleString('en')} seeded orders; ${passed} reads answered by the pass-through\n\n`)
    process.stdout.write(WRITE_TABLE_HEAD)
    for (const what of ['placements', 'status updates']) process.stdout.write(writeTableRow(results, what))
    const ratio = median(ratios)
    process.stdout.write(`\n| read | req/s (median of ${ROUNDS}) | p50 ms | answer bytes |\n|---|---:|---:|---:|\n`)
    for (const r of [ordersRead, eventsRead]) {
      process.stdout.write(`| ${r.target} | ${median(r.rps).toFixed(0)} | ${r.p50.toFixed(0)} | ${r.bytes.toLocaleString('en')} |\n`)
    }
    process.stdout.write(`\nevents / orders: ${(100 * ratio).toFixed(0)} % (rounds: ${ratios.map((x) => `${(100 * x).toFixed(0)} %`).join(', ')}); ` +
      `goal ≥ ${100 * READ_GOAL} %: ${ratio >= READ_GOAL ? 'met' : 'missed'}\n`)
  } finally {
    await bench.dispose()
  }
}

// BENCH_WEBHOOKS=1: the sellers' webhook deliveries instead (issue 25, webhooks.ts); =fairness: one seller's
// hanging endpoint against another's test ping (security finding 2, fairness.ts).
const chosen = process.env.BENCH_WEBHOOKS === '1' ? webhooksMain : process.env.BENCH_WEBHOOKS === 'fairness' ? fairnessMain : main
chosen().catch((err) => { console.error(err); process.exit(1) })
