import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import pino from 'pino'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/client.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { Deliverer } from '../../src/delivery/deliverer.js'
import { logTransport } from '../../src/effects/transports/log.js'
import { createEndpoint, sendTestEvent } from '../../src/webhooks/endpoints.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * BENCH_WEBHOOKS=fairness npm run bench:events — security finding 2: one seller's endpoint must not hold up
 * the others'. Seller 1 (A) has an endpoint on a local HTTP server that never answers; seller 2 (B) one on a
 * server that answers 200 at once (both in this process, as the deliverer). One Deliverer with the
 * production defaults (concurrency BENCH_WH_CONCURRENCY, 64; timeout 15 s), private networks allowed
 * explicitly. B's ping — sendTestEvent, what POST …/test runs, in its own transaction — is timed from the
 * call to B's server having the request, BENCH_FAIR_PINGS (50) times one after another, BENCH_FAIR_GAP_MS (400)
 * apart (so that a phase outlasts A's 15 s timeout and its next attempts' claims), twice:
 *
 *   1. baseline: A idle (its endpoint enabled, nothing queued for it);
 *   2. A hanging: A's queue filled to MAX_PENDING_DELIVERIES (10,000: its own test event, then copies of it
 *      written into deliveries, as a long replay or a backlog of orders would leave it), the
 *      deliverer started and A's first attempts hanging before the first ping.
 *
 * p50/p95/p99/max per phase (goal: p99 < 1 s while A hangs), with A's requests received and its
 * deliveries leased (in flight) at the end. A ping not received within BENCH_FAIR_GIVE_UP_MS (60,000) is
 * counted missed at that figure (the code before the fix left B's ping behind all 10,000 of A's, ~40 min).
 * BENCH_DATABASE_URL picks the server, else an embedded one.
 */

const PINGS = numberKnob('BENCH_FAIR_PINGS', 50, { min: 1, integer: true })
const GAP_MS = numberKnob('BENCH_FAIR_GAP_MS', 400, { min: 0 })
const GIVE_UP_MS = numberKnob('BENCH_FAIR_GIVE_UP_MS', 60_000, { above: 0 })
const CONCURRENCY = numberKnob('BENCH_WH_CONCURRENCY', 64, { min: 1, integer: true })
/** The production default of WEBHOOK_DELIVERY_TIMEOUT_MS. */
const TIMEOUT_MS = 15_000
const A = 1
const B = 2
const PENDING = 10_000

const log = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`) }
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** A server on 127.0.0.1: answers 200 at once, or never (`hang`); calls `onRequest` with each body. */
async function server (hang: boolean, onRequest: (body: string) => void): Promise<{ url: string, close: () => void }> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      onRequest(Buffer.concat(chunks).toString('utf8'))
      if (!hang) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, close: () => { s.closeAllConnections(); s.close() } }
}

export async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const bench = await benchDatabase('webhooks_fair')
  const { database } = bench
  const sql = database.sql
  const config = loadConfig({ DATABASE_URL: bench.url, LOG_LEVEL: 'silent', ORDER_EXCHANGE_ENV: 'testing', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
  const box = SecretBox.of(config)!
  const delivererDb = openDatabase(bench.url, { max: 10, application: 'oxs-bench-deliverer' })
  let aHits = 0
  const waiting = new Map<string, () => void>()
  const aServer = await server(true, () => { aHits++ })
  const bServer = await server(false, (body) => {
    const id = /"id":"([^"]+)"/.exec(body)?.[1]
    if (id !== undefined) waiting.get(id)?.()
  })
  let deliverer: Deliverer | null = null
  try {
    await seed(database, { orders: 100, seed: 1, anchor: DEFAULT_ANCHOR })
    const endpoint = async (seller: number, url: string): Promise<string> => (await database.db.transaction((tx) =>
      createEndpoint(tx, { sellerId: seller, storeIds: null }, { url, types: null, description: 'bench' }, box))).id
    const a = await endpoint(A, aServer.url)
    const b = await endpoint(B, bServer.url)
    const notices = logTransport(pino({ level: 'warn' }))
    const newDeliverer = (): Deliverer => new Deliverer({
      db: delivererDb.db,
      sessionUrl: bench.url,
      box,
      operator: null,
      // The notification channels every database has, to the log (at warn: not written), as in testing.
      channels: { seller: notices, customer: notices, messaging: notices },
      logger: pino({ level: 'warn' }),
      concurrency: CONCURRENCY,
      timeoutMs: TIMEOUT_MS,
      allowPrivateNetworks: true
    })
    deliverer = newDeliverer()

    let missed = 0
    const pings = async (n = PINGS): Promise<number[]> => {
      const ms: number[] = []
      for (let i = 0; i < n; i++) {
        if (i > 0) await sleep(GAP_MS)
        const t = performance.now()
        let arrived = (): void => {}
        const received = new Promise<void>((resolve) => { arrived = resolve })
        const { eventId } = await database.db.transaction(async (tx) => {
          const sent = await sendTestEvent(tx, { sellerId: B, storeIds: null }, b)
          waiting.set(sent.eventId, arrived)
          return sent
        })
        let timer: NodeJS.Timeout | undefined
        const gaveUp = await Promise.race([received.then(() => false),
          new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), GIVE_UP_MS) })])
        clearTimeout(timer)
        waiting.delete(eventId)
        if (gaveUp) missed++
        ms.push(gaveUp ? GIVE_UP_MS : performance.now() - t)
      }
      return ms.sort((x, y) => x - y)
    }

    await deliverer.start()
    await pings(5) // warm-up: connections, plans
    const idle = await pings()
    const idleMissed = missed
    missed = 0
    log(`A idle: p99 ${percentile(idle, 99).toFixed(0)} ms`)

    await deliverer.stop()
    const aScope = { sellerId: A, storeIds: null }
    const aEvent = (await database.db.transaction((tx) => sendTestEvent(tx, aScope, a))).sequence
    await sql`insert into deliveries (subscription_id, seller_id, sequence, type)
      select ${a}, ${A}, ${aEvent}, 'webhook.test' from generate_series(2, ${PENDING})`
    await sql`vacuum analyze deliveries`
    deliverer = newDeliverer()
    await deliverer.start()
    // A's first attempts hanging before the first ping (polled: its server counts them).
    for (let n = 0; n < 500; n++) {
      if (aHits > 0) break
      await sleep(20)
    }
    const started = performance.now()
    const hanging = await pings()
    const seconds = (performance.now() - started) / 1000
    const [state] = await sql`select count(*) filter (where leased_until > now())::int as leased,
      count(*) filter (where status = 'PENDING')::int as pending from deliveries where subscription_id = ${a}`
    log(`A hanging: p99 ${percentile(hanging, 99).toFixed(0)} ms`)

    const server = process.env.BENCH_DATABASE_URL ? 'at BENCH_DATABASE_URL' : 'embedded'
    process.stdout.write(`\n${machineLine()}; PostgreSQL ${server}; deliverer concurrency ${CONCURRENCY}, timeout ${TIMEOUT_MS / 1000} s; ` +
      `${PINGS} pings of B a phase, one after another\n\n`)
    process.stdout.write(`| B's ping (sendTestEvent → received) | p50 ms | p95 ms | p99 ms | max ms | not received in ${GIVE_UP_MS / 1000} s | ` +
      'goal p99 < 1 s |\n|---|---:|---:|---:|---:|---:|---|\n')
    const phases = [['A idle (nothing queued)', idle, idleMissed], [`A hanging, ${PENDING.toLocaleString('en')} pending`, hanging, missed]] as const
    for (const [name, ms, lost] of phases) {
      const p99 = percentile(ms, 99)
      process.stdout.write(`| ${name} | ${percentile(ms, 50).toFixed(0)} | ${percentile(ms, 95).toFixed(0)} | ${p99.toFixed(0)} | ` +
        `${ms.at(-1)!.toFixed(0)} | ${lost} | ${p99 < 1000 ? 'met' : 'missed'} |\n`)
    }
    process.stdout.write(`\nwhile A hung (${seconds.toFixed(1)} s of pings): A's server received ${aHits} requests; at the end ` +
      `${state!.leased} of A's deliveries leased (in flight), ${state!.pending} pending\n`)
  } finally {
    await deliverer?.stop(100)
    aServer.close()
    bServer.close()
    await delivererDb.close()
    await bench.dispose()
  }
}
