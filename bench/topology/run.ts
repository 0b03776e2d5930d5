import { performance } from 'node:perf_hooks'
import { openClient, openDatabase } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { issueCredential } from '../../src/credentials/service.js'
import { seed, DEFAULT_ANCHOR } from '../../src/seed/seed.js'
import { startTopology, topologyAvailable } from '../../test/topology/cluster.js'
import { eventually } from '../../test/helpers/eventually.js'
import { freePort, ready, startServer, type ServerProcess } from '../../test/helpers/server-process.js'
import { machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * npm run bench:topology — one primary, as deployed past one machine (test/topology/cluster.ts: a
 * primary, a streaming standby, PgBouncer in transaction mode), served by one API instance and then by
 * two, on the same data and the same load. For each: status updates (orders/s, batches of 100 accepts
 * of distinct placed orders), GraphQL pages (pages/s, limit 100, read on the standby) and syncs (rows/s,
 * two clients each replacing 10,000 rows). Writes go through PgBouncer, reads to the standby.
 *
 *   BENCH_SECONDS=10       seconds per measurement
 *   BENCH_CLIENTS=8        concurrent clients (status and pages)
 *   BENCH_ORDERS=400000    orders seeded (the first seller gets 60 %, a quarter of them placed)
 */

const SECONDS = numberKnob('BENCH_SECONDS', 10, { above: 0 })
const CLIENTS = numberKnob('BENCH_CLIENTS', 8, { min: 1, integer: true })
const ORDERS = numberKnob('BENCH_ORDERS', 400_000, { min: 1, integer: true })
const log = (line: string): void => { process.stdout.write(`${line}\n`) }

const available = topologyAvailable()
if (!available.ok) {
  log(`bench:topology cannot run here: ${available.reason}`)
  process.exit(1)
}

log(`machine: ${machineLine()}`)
const topology = await startTopology({ log })
const database = openDatabase(topology.primaryUrl, { max: 4 })
const sql = openClient(topology.primaryUrl, { max: 2 })
const instances: ServerProcess[] = []
try {
  await migrate(topology.primaryUrl)
  const t0 = performance.now()
  const summary = await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
  await sql`vacuum analyze`
  log(`seeded ${ORDERS.toLocaleString('en')} orders in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
  const seller = summary.sellers[0]!.companyId
  const apiKey = (await issueCredential(database.db, { sellerId: seller, kind: 'api-key', environment: 'testing' })).secret
  const token = (await issueCredential(database.db, { sellerId: seller, kind: 'access-token', environment: 'testing' })).secret
  // Points enough for every acceptance (a top-up entry, so the ledger still sums to the balance).
  await sql`with s as (update sellers set points_balance = points_balance + 100000000 where id = ${seller} returning points_balance)
    insert into points_ledger (seller_id, kind, amount, balance_after) select ${seller}, 'TOP_UP', 100000000, points_balance from s`
  const placed = (await sql`select id from orders where seller_id = ${seller} and status = 'ORDER_PLACED' and not is_deleted order by id`).map((r) => Number(r.id))
  log(`${placed.length.toLocaleString('en')} placed orders to accept`)
  await topology.waitForReplay(120_000)

  const env = {
    DATABASE_URL: topology.bouncerUrl,
    DATABASE_POOL_MODE: 'transaction',
    WORKER_DATABASE_URL: topology.primaryUrl,
    READ_DATABASE_URL: topology.standbyUrl,
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    WORKER_ENABLED: 'false',
    RATE_LIMIT_ENABLED: 'false',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    SHED_HEAP_USED_BYTES: '0',
    DB_POOL_MAX: '10'
  }

  /**
   * `clients` loops calling `once` (round robin over the ports) for SECONDS, or until one returns null
   * (nothing left to send); the sum of what they returned, per second of the time it took.
   */
  async function load (ports: number[], clients: number,
    once: (port: number, client: number, n: number) => Promise<number | null>): Promise<number> {
    const started = Date.now()
    const end = started + SECONDS * 1000
    let total = 0
    let exhausted = false
    await Promise.all(Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; Date.now() < end && !exhausted; n++) {
        const done = await once(ports[(client + n) % ports.length]!, client, n)
        if (done === null) exhausted = true
        else total += done
      }
    }))
    if (exhausted) log(`  (ran out of placed orders after ${((Date.now() - started) / 1000).toFixed(1)} s)`)
    return total / ((Date.now() - started) / 1000)
  }
  async function post (port: number, path: string, method: string, headers: Record<string, string>,
    body: string): Promise<any> {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body })
    const json = await res.json()
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
    return json
  }

  const results: Array<{ instances: number, status: number, pages: number, rows: number }> = []
  let quantity = 1
  for (const count of [1, 2]) {
    const ports: number[] = []
    for (let i = 0; i < count; i++) {
      const port = await freePort()
      instances.push(startServer({ ...env, PORT: String(port) }))
      ports.push(port)
    }
    for (const port of ports) await eventually(null, `API :${port}`, () => ready(port), { timeoutMs: 60_000 })

    const status = await load(ports, CLIENTS, async (port) => {
      const ids = placed.splice(0, 100)
      if (ids.length < 100) return null
      const body = await post(port, '/v2/accounting/orders/update-status', 'POST', { authorization: `Bearer ${apiKey}` },
        JSON.stringify({ order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })) }))
      return body.data.successful as number
    })
    const pages = await load(ports, CLIENTS, async (port, client, n) => {
      const page = 1 + ((client * 7 + n) % 50)
      await post(port, '/v2/graphql', 'POST', { authorization: `Bearer ${token}` },
        JSON.stringify({ query: `{ orders(input: { page: ${page}, limit: 100 }) { pageInfo { total } nodes { orderId orderStatus orderTotal orderItems { id quantity } } } }` }))
      return 1
    })
    const rows = await load(ports, 2, async (port, client) => {
      quantity++
      const body = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ retailerSyncId: `R-${client}-${i % 101}`, shopSyncId: null, offerSyncId: `O-${i}`, outstandingQuantity: quantity })))
      await post(port, '/v2/shipments/outstanding/sync-data', 'PUT', { 'x-api-key': apiKey }, body)
      return 10_000
    })
    results.push({ instances: count, status, pages, rows })
    log(`  ${count} instance(s): ${status.toFixed(0)} status updates/s, ${pages.toFixed(1)} pages/s, ${rows.toFixed(0)} sync rows/s`)
    for (const server of instances.splice(0)) { server.child.kill('SIGTERM'); await server.exited }
  }
  const [one, two] = results
  log('\n| API instances | status updates (orders/s) | GraphQL pages of 100 (pages/s, standby) | sync (rows/s) |')
  log('|---:|---:|---:|---:|')
  for (const r of results) log(`| ${r.instances} | ${r.status.toFixed(0)} | ${r.pages.toFixed(1)} | ${r.rows.toFixed(0)} |`)
  log(`| 2 vs 1 | ${(two!.status / one!.status).toFixed(2)}× | ${(two!.pages / one!.pages).toFixed(2)}× | ${(two!.rows / one!.rows).toFixed(2)}× |`)
} finally {
  for (const server of instances) server.child.kill('SIGKILL')
  await database.close()
  await sql.end({ timeout: 5 })
  await topology.stop()
}
