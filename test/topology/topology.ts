import t from 'tap'
import { migrate } from '../../src/db/migrate.js'
import { openDatabase } from '../../src/db/client.js'
import { rawClient, type TestDatabase } from '../helpers/build.js'
import { credential } from '../helpers/fixtures.js'
import { answerAfter, startReceiver } from '../helpers/receiver.js'
import { eventually } from '../helpers/eventually.js'
import { freePort, ready, startServer, type ServerProcess } from '../helpers/server-process.js'
import { spawnWorker, type WorkerProcess } from '../helpers/worker-process.js'
import { accept, complete, createShop, reject } from '../helpers/status-update.js'
import { startTopology, topologyAvailable, type Topology } from './cluster.js'

/*
 * npm run test:topology — the service as it is deployed past one machine, on this machine: a primary,
 * a hot standby streaming from it (pg_basebackup), PgBouncer in transaction mode in front of the primary;
 * two API instances (writes through PgBouncer, GraphQL reads on the standby) and two workers (direct).
 * Mixed traffic for a bounded time — page walks, status batches, syncs — with one API instance and one
 * worker killed (SIGKILL) in the middle; then the standby's replay is paused to show reads stay within
 * the documented bound. The invariants are the single-process tests' own.
 */

const available = topologyAvailable()

const TRAFFIC_MS = Number(process.env.TOPOLOGY_TRAFFIC_MS ?? 20_000)
const ORDERS = 400
const PAGE = 50
const MAX_LAG_MS = 500
const POLL_MS = 100
const WEBHOOK_SECRET = 'whsec_dG9wb2xvZ3ktd2ViaG9vay1zZWNyZXQh'

interface Instance { port: number, server: ServerProcess, alive: boolean }

t.test('API instances and workers behind PgBouncer, reads on a streaming standby', { skip: available.ok ? false : `topology not available here: ${available.reason}` }, async (t) => {
  const topology: Topology = await startTopology({ log: (line) => t.comment(line) })
  t.teardown(() => topology.stop())
  await migrate(topology.primaryUrl)
  // The test's own handle on the primary, direct (fixtures and invariants).
  const database: TestDatabase = { ...openDatabase(topology.primaryUrl, { max: 4, application: 'oxs-test' }), sql: rawClient(topology.primaryUrl) }
  t.teardown(async () => { await database.close(); await database.sql.end({ timeout: 5 }) })

  const shop = await createShop(database, { pointsBalance: '10000000.00' })
  const orderIds = await shop.orders(ORDERS, { paymentMode: 'PREPAID' })
  const apiKey = await shop.apiKey()
  const token = await credential(database, shop.sellerId, 'access-token')
  const receiver = await startReceiver(t, answerAfter(5))
  await topology.waitForReplay()

  const common = {
    DATABASE_URL: topology.bouncerUrl,
    DATABASE_POOL_MODE: 'transaction',
    WORKER_DATABASE_URL: topology.primaryUrl,
    READ_DATABASE_URL: topology.standbyUrl,
    READ_MAX_LAG_MS: String(MAX_LAG_MS),
    REPLICA_LAG_POLL_MS: String(POLL_MS),
    LOG_LEVEL: 'warn',
    SEED_DEMO: 'false',
    RATE_LIMIT_ENABLED: 'false',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    SHED_HEAP_USED_BYTES: '0',
    // The operator's firehose: every event once, Standard Webhooks; the notification channels write to the log.
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET,
    WORKER_POLL_INTERVAL_MS: '200',
    WORKER_RECOVERY_INTERVAL_MS: '500',
    DB_POOL_MAX: '8',
    METRICS_TOKEN: 'metrics-token-0123456789'
  }
  const instances: Instance[] = []
  for (let i = 0; i < 2; i++) {
    const port = await freePort()
    const server = startServer({ ...common, PORT: String(port), WORKER_ENABLED: 'false' })
    instances.push({ port, server, alive: true })
  }
  t.teardown(async () => {
    for (const instance of instances) {
      if (!t.passing()) t.comment(`API :${instance.port} said:\n${instance.server.stdout().slice(-3000)}\n${instance.server.stderr().slice(-3000)}`)
      if (instance.server.child.exitCode === null) { instance.server.child.kill('SIGKILL'); await instance.server.exited }
    }
  })
  for (const instance of instances) await eventually(t, `API :${instance.port} ready`, () => ready(instance.port), { timeoutMs: 60_000 })
  // The harness sets no timeouts on the role: an instance behind the pooler says what that leaves off.
  t.match(instances[0]!.server.lines().find((l) => /session timeouts are not sent/.test(l.msg ?? '')),
    { missing: ['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'] }, 'the missing role timeouts are named at start')
  const workers: WorkerProcess[] = []
  for (let i = 0; i < 2; i++) workers.push(await spawnWorker(t, { ...common, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '4' }))

  /** A request to a live instance; a refused or cut connection (a killed instance) goes to the other. */
  async function call (path: string, init: RequestInit): Promise<{ status: number, body: any }> {
    let lastError: unknown
    return await eventually(t, () => `an answer to ${path} (last: ${String(lastError)})`, async () => {
      const live = instances.filter((i) => i.alive)
      const instance = live[Math.floor(Math.random() * live.length)]!
      try {
        const res = await fetch(`http://127.0.0.1:${instance.port}${path}`, init)
        const body = await res.json()
        if (res.status !== 503) return { status: res.status, body }
        lastError = new Error(`503 ${JSON.stringify(body)}`)
      } catch (err) {
        lastError = err
      }
      return null
    }, { timeoutMs: 10_000 })
  }

  const deadline = Date.now() + TRAFFIC_MS
  const stats = { batches: 0, changed: 0, walks: 0, pages: 0, syncs: 0 }
  const failures: string[] = []

  // Status batches: 20 random orders, each to a random status; an Idempotency-Key makes a retry after
  // a cut connection safe (the first answer is replayed, nothing applied twice).
  const statusTraffic = async (lane: number): Promise<void> => {
    let n = 0
    while (Date.now() < deadline) {
      const items = Array.from({ length: 20 }, () => {
        const id = orderIds[Math.floor(Math.random() * orderIds.length)]!
        const pick = Math.random()
        return pick < 0.5 ? accept(id) : pick < 0.75 ? complete(id) : reject(id, 'Out of stock')
      })
      const res = await call('/v2/accounting/orders/update-status', {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': `topology-${lane}-${n++}` },
        body: JSON.stringify({ order_status: items })
      })
      if (res.status !== 200) failures.push(`status batch: ${res.status} ${JSON.stringify(res.body)}`)
      else { stats.batches++; stats.changed += res.body.data.successful }
    }
  }

  // Page walks over every order, from the standby while it keeps up: each walk must see every order once.
  const walkTraffic = async (): Promise<void> => {
    while (Date.now() < deadline) {
      const seen: number[] = []
      for (let page = 1; ; page++) {
        const res = await call('/v2/graphql', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: `{ orders(input: { page: ${page}, limit: ${PAGE} }) { pageInfo { total hasNext } nodes { orderId } } }` })
        })
        if (res.status !== 200 || res.body.errors) { failures.push(`page ${page}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`); return }
        stats.pages++
        const connection = res.body.data.orders
        for (const node of connection.nodes) seen.push(Number(node.orderId))
        if (!connection.pageInfo.hasNext) break
      }
      const unique = new Set(seen)
      if (seen.length !== ORDERS || unique.size !== ORDERS || !orderIds.every((id) => unique.has(id))) {
        failures.push(`page walk incomplete: ${seen.length} seen, ${unique.size} distinct`)
      }
      stats.walks++
    }
  }

  // Syncs, one client in sequence: each replaces the same 2,000 rows' quantities; the last answered one wins.
  let lastSynced = -1
  const syncTraffic = async (): Promise<void> => {
    let quantity = 1
    while (Date.now() < deadline) {
      quantity++
      const rows = Array.from({ length: 2_000 }, (_, i) => ({ retailerSyncId: `R-${i % 97}`, shopSyncId: `S-${i % 7}`, offerSyncId: `O-${i}`, outstandingQuantity: quantity }))
      const res = await call('/v2/shipments/outstanding/sync-data', {
        method: 'PUT', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(rows)
      })
      if (res.status !== 200) failures.push(`sync: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`)
      else { stats.syncs++; lastSynced = quantity }
    }
  }

  // Once every kind of traffic is under way: one API instance and one worker die without warning.
  const killing = (async () => {
    await eventually(t, () => `every kind of traffic under way (${JSON.stringify(stats)})`,
      () => stats.batches >= 5 && stats.walks >= 1 && stats.syncs >= 1, { timeoutMs: TRAFFIC_MS })
    instances[0]!.alive = false
    instances[0]!.server.child.kill('SIGKILL')
    workers[0]!.child.kill('SIGKILL')
    t.comment('killed API instance 1 and worker 1')
  })()
  await Promise.all([statusTraffic(1), statusTraffic(2), walkTraffic(), walkTraffic(), syncTraffic(), killing])
  t.comment(`traffic: ${JSON.stringify(stats)}`)
  t.same(failures, [], 'every request answered as it would be by one process')
  t.ok(stats.batches > 0 && stats.walks > 0 && stats.syncs > 0, 'each kind of traffic ran')

  // Effects exactly once: the ledger holds at most one entry per order and kind (a unique key), and sums
  // to the balance, whose last entry it is.
  const [balance] = await database.sql`select s.points_balance::text as balance,
      (select sum(amount)::text from points_ledger where seller_id = s.id) as ledger,
      (select balance_after::text from points_ledger where seller_id = s.id order by id desc limit 1) as last
    from sellers s where s.id = ${shop.sellerId}`
  t.equal(balance!.ledger, balance!.balance, 'the ledger sums to the balance')
  t.equal(balance!.last, balance!.balance, 'the last entry carries the balance')
  const [refunds] = await database.sql`select count(*)::int as n, count(distinct order_id)::int as orders from refunds where order_id = any(${orderIds})`
  t.equal(refunds!.n, refunds!.orders, 'at most one refund per order')

  // Every event delivered, to the operator's endpoint and to the three notification channels: the surviving
  // worker's deliverer takes over the dead one's deliveries (their leases end) and its jobs.
  await eventually(t, 'the queue drained', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs`)[0]!.n === 0, { timeoutMs: 90_000 })
  const events = (await database.sql`select 'evt_' || seller_id || '_' || sequence as id from seller_events
    where seller_id = ${shop.sellerId} order by sequence`).map((e) => e.id as string)
  t.ok(events.length > 0, `${events.length} events`)
  const queued = async () => (await database.sql`select s.kind::text as kind, d.status::text as status,
      'evt_' || d.seller_id || '_' || d.sequence as id
    from deliveries d join subscriptions s on s.id = d.subscription_id where d.seller_id = ${shop.sellerId}`)
    .map((d) => ({ kind: d.kind as string, status: d.status as string, id: d.id as string }))
  await eventually(t, 'every event dispatched and delivered', async () => {
    const rows = await queued()
    return rows.length === 4 * events.length && rows.every((d) => d.status === 'DELIVERED')
  }, { timeoutMs: 90_000 })
  const deliveries = await queued()
  t.same(deliveries.filter((d) => d.status !== 'DELIVERED'), [], 'each one delivered')
  // Every change here is an acceptance, completion or rejection: heard by each of the three channels.
  for (const kind of ['operator-webhook', 'notify-seller', 'notify-customer', 'notify-messaging']) {
    t.same(deliveries.filter((d) => d.kind === kind).map((d) => d.id).sort(), [...events].sort(), `${kind}: one delivery per event`)
  }
  const received = receiver.received.map((r) => r.headers['webhook-id'] as string)
  t.same([...new Set(received)].sort(), [...events].sort(), 'the receiver got every event id, and no other')
  t.comment(`${received.length} webhook requests for ${events.length} events (a worker killed after sending and before recording sends again, with the same id)`)

  // The last answered sync is what is stored.
  const synced = await database.sql`select distinct outstanding_quantity::int as q from outstanding_shipments where seller_id = ${shop.sellerId}`
  t.same(synced.map((r) => r.q), [lastSynced], 'the outstanding quantities are the last sync\'s')
  t.equal(instances[1]!.server.child.exitCode, null, 'the surviving instance lives on')

  // Lag: replay paused, a write, then a read after the bound has passed goes to the primary and sees it.
  const survivor = instances[1]!
  const readiness = async (): Promise<any> => (await fetch(`http://127.0.0.1:${survivor.port}/health/ready`)).json()
  await topology.waitForReplay()
  await eventually(t, 'reads on the standby', async () => (await readiness()).replica?.reads === 'replica', { timeoutMs: 10_000 })
  await topology.pauseReplay()
  t.teardown(() => topology.resumeReplay().catch(() => {}))
  const [placed] = await shop.orders(1)
  const status = async (): Promise<string | undefined> => {
    const res = await call('/v2/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      // Oldest first: the new order is the first of page 5 (after the 400 placed before it).
      body: JSON.stringify({ query: `{ orders(input: { page: ${ORDERS / 100 + 1}, limit: 100 }) { nodes { orderId orderStatus } } }` })
    })
    if (res.status !== 200 || !res.body.data) throw new Error(`orders: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body.data.orders.nodes.find((o: { orderId: number }) => Number(o.orderId) === placed)?.orderStatus
  }
  await eventually(t, 'the standby behind', async () => (await topology.replayLagBytes()) > 0, { timeoutMs: 10_000 })
  // The bound passes: the survivor's next polls measure the lag past it and send reads to the primary.
  const lagging = await eventually(t, 'reads moved to the primary', async () => {
    const state = await readiness()
    return state.replica?.reads === 'primary' ? state : null
  }, { timeoutMs: 10_000 })
  t.equal(lagging.replica.reads, 'primary', `past the bound reads go to the primary (${JSON.stringify(lagging.replica)})`)
  t.ok(lagging.replica.lagMs > MAX_LAG_MS, 'the lag is reported')
  t.equal(await status(), 'ORDER_PLACED', 'a read after the bound sees a write the standby has not replayed')
  const standby = rawClient(topology.standbyUrl)
  t.teardown(() => standby.end({ timeout: 5 }))
  t.same(await standby`select id from orders where id = ${placed}`, [], 'the standby indeed lacks it')
  await topology.resumeReplay()
  await topology.waitForReplay()
  await eventually(t, 'reads back on the standby', async () => (await readiness()).replica?.reads === 'replica', { timeoutMs: 10_000 })
  t.equal(await status(), 'ORDER_PLACED', 'and the standby, caught up, answers the same')
  const metrics = await (await fetch(`http://127.0.0.1:${survivor.port}/metrics`, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text()
  const reads = (target: string): number => Number(new RegExp(`oxs_graphql_reads_total\\{database="${target}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0)
  t.ok(reads('replica') > 0 && reads('primary') > 0, `the survivor's reads: ${reads('replica')} on the standby, ${reads('primary')} on the primary`)
})
