import http from 'node:http'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { openClient, openDatabase, withDatabaseName } from '../../src/db/client.js'
import { rawClient, type TestDatabase as Database } from '../helpers/build.js'
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js'
import { LIVENESS_LOCK_CLASS } from '../../src/effects/crash-recovery.js'
import { createTestDatabaseUrl } from '../helpers/test-server.js'
import { eventually } from '../helpers/eventually.js'
import { freePort, ready, startServer, type ServerProcess } from '../helpers/server-process.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import { answerAfter, startReceiver } from '../helpers/receiver.js'
import { injectAfter, probeFor } from '../helpers/faults.js'
import { accept, createShop, reject } from '../helpers/status-update.js'

/*
 * Faults injected into a real server process (src/server.ts) on a real PostgreSQL: its backends
 * terminated in the middle of a batch, a sync and jobs. What the client saw must be true of the
 * database, nothing is half-applied, a retry converges, and the process lives on.
 */

interface Running { server: ServerProcess, port: number, database: Database, url: string }

async function runServer (t: Test, env: Record<string, string> = {}, databaseUrl?: string): Promise<Running> {
  const { url, drop } = databaseUrl ? { url: databaseUrl, drop: async () => {} } : await createTestDatabaseUrl()
  // The test's own connections are not the service's (application_name), so terminating those spares these.
  const database: Database = { ...openDatabase(url, { max: 3, application: 'oxs-test' }), sql: rawClient(url) }
  const port = await freePort()
  const server = startServer({ DATABASE_URL: url, PORT: String(port), LOG_LEVEL: 'info', WORKER_ENABLED: 'false', ...env })
  t.teardown(async () => {
    // A failed test shows what the server said: the one place its faults are visible.
    if (!t.passing()) {
      const lines = server.stdout().split('\n').filter((l) => !/"msg":"(incoming request|request completed|database unavailable)"/.test(l))
      t.comment(`server output:\n${lines.slice(-60).map((l) => l.slice(0, 300)).join('\n')}\n${server.stderr().slice(-3000)}`)
    }
    if (server.child.exitCode === null) {
      server.child.kill('SIGKILL')
      await server.exited
    }
    await database.close()
    await database.sql.end({ timeout: 5 })
    await drop()
  })
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 60_000 })
  return { server, port, database, url }
}

/** Terminates every backend of the service (API pool, worker pools, liveness sessions). */
async function terminateServiceBackends (database: Database): Promise<number> {
  const rows = await database.sql`
    select pg_terminate_backend(pid) as done from pg_stat_activity
    where datname = current_database() and application_name like 'order-exchange%' and pid <> pg_backend_pid()`
  return rows.length
}

function statusBatch (port: number, key: string, body: unknown): Promise<{ status: number, body: any }> {
  return fetch(`http://127.0.0.1:${port}/v2/accounting/orders/update-status`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, body: await res.json() }))
}

t.test('backends terminated while a 1,000-order batch is in its transaction', async (t) => {
  const { server, port, database } = await runServer(t)
  const shop = await createShop(database, { pointsBalance: '10000000.00' })
  const key = await shop.apiKey()
  for (const delayMs of [0, 10, 30, 60, 120, 250, 500, 1000]) {
    const ids = await shop.orders(1000)
    const answer = statusBatch(port, key, { order_status: ids.map((id) => accept(id)) })
    await injectAfter(delayMs, () => terminateServiceBackends(database))
    const { status, body } = await answer
    t.ok(status === 200 || status === 503, `delay ${delayMs} ms: ${status}`)
    const accepted = await database.sql`select id::int from orders where id = any(${ids}) and status = 'ORDER_ACCEPTED'`
    const ledger = await database.sql`select count(*)::int as n from points_ledger where order_id = any(${ids})`
    t.ok(accepted.length === 0 || accepted.length === 1000, `delay ${delayMs} ms: all or nothing (${accepted.length} accepted)`)
    t.equal(ledger[0].n, accepted.length, 'one ledger entry per accepted order, no more')
    if (status === 200) {
      t.equal(body.data.successful, accepted.length, 'the answer says what the database holds')
      if (accepted.length === 0) t.ok(body.data.errors.every((e: { error: string }) => e.error === 'Order could not be updated'))
    }
    // The process is alive and reconnects; the retry converges.
    t.equal((await fetch(`http://127.0.0.1:${port}/health/live`)).status, 200, 'still alive')
    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const retry = await statusBatch(port, key, { order_status: ids.map((id) => accept(id)) })
    t.same([retry.status, retry.body.data.successful], [200, 1000], 'the retry converges')
    const [after] = await database.sql`select count(*)::int as n from points_ledger where order_id = any(${ids})`
    t.equal(after.n, 1000, 'each order charged once')
  }
  t.equal(server.child.exitCode, null, 'the process never ended')
  t.notMatch(server.stdout() + server.stderr(), /uncaught|Cannot read properties of null/i)
})

t.test('backends terminated while the marketplace places 1,000 orders or cancels them: all or nothing, the re-send converges', async (t) => {
  const { server, port, database } = await runServer(t)
  const sql = database.sql
  const key = await platformKey(database)
  await sql`insert into sellers (id, name, points_balance) values (701, 'Fault Seller', 0)`
  await sql`insert into stores (id, seller_id, name) values (7011, 701, 'Main')`
  await sql`insert into retailers (id, name) values (7021, 'Buyer')`
  await sql`insert into seller_retailers (seller_id, retailer_id) values (701, 7021)`
  await sql`insert into items (id, seller_id, item_name) values (7031, 701, 'Tea')`
  await sql`insert into skus (id, seller_id, item_id, sku_nick_name) values (7031, 701, 7031, 'Tea')`
  await sql`insert into offers (id, seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    values (7031, 701, 7031, 1, 2, 2)`
  await sql`insert into daily_deals (id, seller_id, offer_id, deal_date, deal_price, max_quantity)
    values (7041, 701, 7031, '2026-11-25', 1, 100000)`
  const call = (path: string, body: unknown) => fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body)
  }).then(async (res) => ({ status: res.status, body: await res.json() as any }))
  const grabbed = async () => (await sql`select grabbed_quantity::int as q from daily_deals where id = 7041`)[0]!.q as number
  let first = 1
  for (const delayMs of [0, 20, 60, 150, 400]) {
    const ids = Array.from({ length: 1000 }, (_, i) => first + i)
    first += 1000
    const rows = ids.map((id) => ({
      orderId: String(id),
      orderNumber: `F-${id}`,
      serviceOrderNumber: `F-${id}`,
      companyId: 701,
      storeId: 7011,
      retailerId: 7021,
      shopId: null,
      deliveryType: 'REGULAR',
      currencyCode: 'INR',
      paymentMode: 'ONLINE_PAID',
      orderTotal: 2,
      orderTotalFinal: 2,
      orderTaxAmount: 0,
      orderCessAmount: 0,
      appliedPoints: 0,
      totalExtraCharges: 0,
      roundOff: 0,
      placedAt: '2026-11-25T10:00:00Z',
      orderItems: [{ id: String(id), offerId: 7031, quantity: 1, dealId: 7041 }]
    }))
    const before = await grabbed()
    const answer = call('/v2/platform/orders', rows)
    await injectAfter(delayMs, () => terminateServiceBackends(database))
    const { status, body } = await answer
    t.ok(status === 200 || status === 503, `placement, delay ${delayMs} ms: ${status}`)
    const [{ n, h }] = await sql`select count(*)::int as n,
      (select count(*)::int from order_status_history where order_id = any(${ids})) as h from orders where id = any(${ids})`
    t.ok(n === 0 || n === 1000, `delay ${delayMs} ms: all or nothing (${n} placed)`)
    t.equal(h, n, 'one placement in the history per order placed')
    t.equal(await grabbed() - before, n, 'the deal grabbed exactly what was placed')
    if (status === 200) t.equal(body.data.inserted, n, 'the answer says what the database holds')
    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const retry = await call('/v2/platform/orders', rows)
    t.same([retry.status, retry.body.data.inserted + retry.body.data.unchanged, retry.body.data.failed], [200, 1000, 0], 'the re-send converges')
    t.equal(await grabbed() - before, 1000, 'each order grabbed once')

    // Cancelling them, cut off the same way: each cancellation and its effects all or nothing, once.
    const cancel = call('/v2/platform/orders/update-status', { order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'CANCELLED' })) })
    await injectAfter(delayMs, () => terminateServiceBackends(database))
    const cancelled = await cancel
    t.ok(cancelled.status === 200 || cancelled.status === 503, `cancellation, delay ${delayMs} ms: ${cancelled.status}`)
    const [{ c, r }] = await sql`select count(*)::int as c,
      (select count(*)::int from refunds where order_id = any(${ids})) as r from orders where id = any(${ids}) and status = 'CANCELLED'`
    t.ok(c === 0 || c === 1000, `all or nothing (${c} cancelled)`)
    t.equal(r, c, 'one refund per cancelled order paid online')
    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const again = await call('/v2/platform/orders/update-status', { order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'CANCELLED' })) })
    t.same([again.status, again.body.data.successful], [200, 1000], 'the re-send converges')
    const [{ refunds, back }] = await sql`select (select count(*)::int from refunds where order_id = any(${ids})) as refunds,
      (select grabbed_quantity::int from daily_deals where id = 7041) as back`
    t.same({ refunds, back }, { refunds: 1000, back: before }, 'one refund each; the deal quantity given back once')
  }
  t.equal(server.child.exitCode, null, 'the process never ended')
})

function syncRows (n: number, quantity: number): string {
  const rows = new Array<string>(n)
  for (let i = 0; i < n; i++) rows[i] = `{"retailerSyncId":"R-${i % 997}","shopSyncId":${i % 3 === 0 ? 'null' : `"S-${i % 31}"`},"offerSyncId":"O-${i}","outstandingQuantity":${quantity}}`
  return `[${rows.join(',')}]`
}

function sync (port: number, key: string, body: string, agent?: http.Agent): Promise<{ status: number, body: any }> {
  return request(port, { method: 'PUT', path: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key, 'content-type': 'application/json' }, agent }, body)
}

/** node:http, so a test decides about keep-alive sockets. */
function request (
  port: number, options: http.RequestOptions, body?: string
): Promise<{ status: number, body: any, socket?: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, ...options }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: unknown = text
        try { parsed = JSON.parse(text) } catch {}
        resolve({ status: res.statusCode ?? 0, body: parsed })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('backends terminated during a 50,000-row sync: nothing or everything applied, the retry converges', async (t) => {
  const { server, port, database } = await runServer(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const n = 50_000
  let round = 0
  for (const delayMs of [0, 50, 200, 400, 800]) {
    round++
    const body = syncRows(n, round)
    const answer = sync(port, key, body)
    await injectAfter(delayMs, () => terminateServiceBackends(database))
    const { status, body: reply } = await answer
    t.ok(status === 200 || status === 503, `delay ${delayMs} ms: ${status} (never 500)`)
    const [stored] = await database.sql`select count(*) filter (where outstanding_quantity = ${round})::int as now, count(*)::int as total
      from outstanding_shipments where seller_id = ${shop.sellerId}`
    if (status === 200) {
      t.equal(reply.data.received, n)
      t.equal(stored.now, n, 'a 200 means every row is stored')
    } else {
      t.equal(reply.statusCode, 503)
      t.ok(stored.now === 0 || stored.now === n, `a 503 means nothing or everything (the commit may have been the last thing done): ${stored.now}`)
    }
    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const retry = await sync(port, key, body)
    t.equal(retry.status, 200, 'the retry converges')
    const [after] = await database.sql`select count(*) filter (where outstanding_quantity = ${round})::int as now
      from outstanding_shipments where seller_id = ${shop.sellerId}`
    t.equal(after.now, n)
  }
  t.equal(server.child.exitCode, null, 'the process never ended')
})

t.test('backends terminated while deliveries run: every event is delivered, the liveness lock comes back', async (t) => {
  // Each answer takes a moment and few go at once, so deliveries are in flight when their sessions are terminated.
  const receiver = await startReceiver(t, answerAfter(100))
  const { server, port, database } = await runServer(t, {
    WORKER_ENABLED: 'true',
    WORKER_CONCURRENCY: '4',
    WORKER_POLL_INTERVAL_MS: '200',
    WORKER_RECOVERY_INTERVAL_MS: '300',
    WEBHOOK_DELIVERY_CONCURRENCY: '8',
    // A delivery whose result was not written comes back when its lease (the timeout + 10 s) ends.
    WEBHOOK_DELIVERY_TIMEOUT_MS: '2000',
    // The operator's firehose: every event once, whatever the channels; the notifications go to the log.
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz'
  })
  await eventually(t, 'the worker', () => server.lines().some((l) => l.msg === 'effects worker started'), { timeoutMs: 60_000 })
  const shop = await createShop(database)
  const ids = await shop.orders(120)
  const res = await statusBatch(port, await shop.apiKey(), { order_status: ids.map((id) => reject(id, 'Out of stock')) })
  t.equal(res.body.data.successful, 120)
  for (let i = 0; i < 3; i++) {
    await eventually(t, 'deliveries going on', () => receiver.received.length >= 10 + i * 20, { timeoutMs: 30_000 })
    t.ok(await terminateServiceBackends(database) > 0, `round ${i + 1}: backends terminated mid-delivery`)
  }
  // 120 events: one delivery each to the operator's endpoint, and one to each of the three channels.
  const delivered = async () => (await database.sql`select s.kind::text as kind, count(*)::int as n from deliveries d
    join subscriptions s on s.id = d.subscription_id where d.status = 'DELIVERED' group by s.kind order by s.kind`)
    .map((r) => `${r.kind} ${r.n}`).join(', ')
  const all = 'operator-webhook 120, notify-seller 120, notify-customer 120, notify-messaging 120'
  await eventually(t, 'all delivered', async () => (await delivered()) === all, { timeoutMs: 60_000 })
  t.equal(await delivered(), all, 'every delivery of every subscription delivered')
  const [queue] = await database.sql`select count(*)::int as n from deliveries where status <> 'DELIVERED'`
  t.equal(queue.n, 0, 'and none twice in the queue, none left')
  const events = new Set(receiver.received.map((r) => r.headers['webhook-id']))
  t.equal(events.size, 120, 'every event reached the receiver (at least once, each with its stable id)')
  t.ok(receiver.received.every((r) => JSON.parse(r.rawBody).id === r.headers['webhook-id']), 'the body is the event the id names')
  const logged = new Set(server.lines().filter((l) => /^notification: /.test(l.msg ?? '')).map((l) => `${l.channel} ${l.eventId}`))
  t.equal(logged.size, 360, 'every notification written by the log transport (at least once)')
  await eventually(t, 'queue empty', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs`)[0].n === 0, { timeoutMs: 30_000 })
  await eventually(t, 'liveness lock held again', async () => (await database.sql`select count(*)::int as n from pg_locks
    where locktype = 'advisory' and granted and classid = ${LIVENESS_LOCK_CLASS}::int8::oid
      and database = (select oid from pg_database where datname = current_database())`)[0].n === 1, { timeoutMs: 10_000 })
  t.pass('the worker holds its liveness lock again')
  t.equal(server.child.exitCode, null, 'the process never ended')
})

t.test('PostgreSQL stopped for 10 s and started again: clean 503s in the gap, recovery without a restart', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-outage-'))
  fs.chmodSync(dataDir, 0o755)
  const pgPort = await freePort()
  const options = { dataDir: path.join(dataDir, 'pg'), port: pgPort, fast: true }
  let pg: EmbeddedServer = await startEmbeddedPostgres(options)
  t.teardown(async () => { await pg.stop(); fs.rmSync(dataDir, { recursive: true, force: true }) })
  const admin = openClient(pg.url, { max: 1 })
  await admin`create database outage`
  await admin.end()
  const { server, port, database } = await runServer(t, {
    WORKER_ENABLED: 'true', WORKER_POLL_INTERVAL_MS: '200', WORKER_RECOVERY_INTERVAL_MS: '500'
  }, withDatabaseName(pg.url, 'outage'))
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const token = await credential(database, shop.sellerId, 'access-token')
  const [before, after] = await shop.orders(2)
  t.equal((await statusBatch(port, key, { order_status: [accept(before)] })).body.data.successful, 1)

  await pg.stop()
  const seen = new Map<string, number>()
  await probeFor(10_000, 250, async () => {
    const answers = await Promise.all([
      statusBatch(port, key, { order_status: [accept(after)] }).then((r) => `status ${r.status}`),
      sync(port, key, syncRows(10, 1)).then((r) => `sync ${r.status}`),
      request(port, { method: 'POST', path: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } }, JSON.stringify({ query: '{ seller { name } }' })).then((r) => `graphql ${r.status}`),
      request(port, { path: '/health/ready' }).then((r) => `ready ${r.status}`),
      request(port, { path: '/health/live' }).then((r) => `live ${r.status}`)
    ])
    for (const a of answers) seen.set(a, (seen.get(a) ?? 0) + 1)
  })
  t.same([...seen.keys()].sort(), ['graphql 503', 'live 200', 'ready 503', 'status 503', 'sync 503'].sort(),
    `during the outage: ${JSON.stringify(Object.fromEntries(seen))}`)

  pg = await startEmbeddedPostgres(options)
  await eventually(t, 'ready after the restart', () => ready(port), { timeoutMs: 30_000 })
  const res = await statusBatch(port, key, { order_status: [accept(after)] })
  t.same([res.status, res.body.data.successful], [200, 1], 'writes work again')
  await eventually(t, 'its notifications delivered by the worker', async () => (await database.sql`select count(*)::int as n
    from deliveries d join subscriptions s on s.id = d.subscription_id
    where s.kind in ('notify-seller', 'notify-customer', 'notify-messaging') and d.order_id = ${after} and d.status = 'DELIVERED'`)[0].n === 3, { timeoutMs: 60_000 })
  t.equal(server.child.exitCode, null, 'the same process throughout')
  t.notMatch(server.stderr(), /uncaught|TypeError/i)
})

t.test('SIGTERM with a batch and a 100,000-row sync in flight on keep-alive connections: both finish, exit 0 in time', async (t) => {
  // A grace long enough for a 100,000-row sync on a loaded CI machine (a 10 s grace cut one off there);
  // idle keep-alive sockets holding the shutdown would still show, as a stop at the grace's end.
  const { server, port, database } = await runServer(t, { WORKER_ENABLED: 'true', SHUTDOWN_GRACE_MS: '60000' })
  const shop = await createShop(database, { pointsBalance: '10000000.00' })
  const key = await shop.apiKey()
  const ids = await shop.orders(1000)
  const agent = new http.Agent({ keepAlive: true, keepAliveMsecs: 60_000, maxSockets: 8 })
  t.teardown(() => agent.destroy())
  // Keep-alive sockets that sit idle through the shutdown.
  await Promise.all([1, 2, 3].map(() => request(port, { path: '/health/live', agent })))
  const body = syncRows(100_000, 7)
  const batch = request(port, { method: 'POST', path: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, agent },
    JSON.stringify({ order_status: ids.map((id) => accept(id)) }))
  const synced = sync(port, key, body, agent)
  await eventually(t, 'both requests in the server', () => server.lines().filter((l) => l.msg === 'incoming request' && /update-status|sync-data/.test(l.req?.url)).length === 2, { timeoutMs: 10_000 })
  const signalledAt = Date.now()
  server.child.kill('SIGTERM')
  const [b, s] = await Promise.all([batch, synced])
  // Timed from the answers, not the signal: how long the sync itself takes is the machine's load, not the shutdown's.
  const answeredAt = Date.now()
  t.same([b.status, b.body.data?.successful], [200, 1000], 'the batch finished')
  t.same([s.status, s.body.data?.received], [200, 100_000], 'the sync finished')
  const code = await server.exited
  const tookMs = Date.now() - answeredAt
  t.equal(code, 0, 'exit 0')
  t.ok(tookMs < 20_000, `stopped ${tookMs} ms after the last answer (${Date.now() - signalledAt} ms after SIGTERM), not at the 60 s grace's end`)
  const lines = server.lines()
  t.ok(lines.some((l) => l.msg === 'effects worker stopped'), 'the worker was stopped')
  t.ok(lines.some((l) => l.msg === 'shutdown complete'), 'and the pool closed')
  const [counts] = await database.sql`select
    (select count(*)::int from orders where id = any(${ids}) and status = 'ORDER_ACCEPTED') as accepted,
    (select count(*)::int from outstanding_shipments where seller_id = ${shop.sellerId}) as rows`
  t.same(counts, { accepted: 1000, rows: 100_000 }, 'everything answered 200 is stored')
})
