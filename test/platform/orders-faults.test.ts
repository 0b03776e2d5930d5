import t, { type Test } from 'tap'
import type postgres from 'postgres'
import { openClient } from '../../src/db/client.js'
import { PLATFORM_ORDERS_PATH, PLATFORM_ORDER_STATUS_PATH, STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'
import { REPLAYED_HEADER } from '../../src/rest-envelope.js'
import { build, type TestDatabase } from '../helpers/build.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import { listen } from '../helpers/fuzz.js'
import { invariantProblems, PLACED_AT, setupMarket, type Caller } from '../helpers/platform-market.js'
import { serverDatabase, waitingBackend, type ServerDatabase } from '../helpers/server-database.js'
import { eventually } from '../helpers/eventually.js'
import { ready, type ServerProcess } from '../helpers/server-process.js'

/*
 * Faults in the middle of POST /v2/platform/orders and POST /v2/platform/orders/update-status, made
 * deterministic: a trigger on seller_events (the last table a placement or a cancellation writes: its events
 * are the transaction's last statement, src/events/record-events.ts) waits on an advisory lock the test
 * holds, so the batch's transaction is caught after its orders, lines, history, deal grabs, payouts, jobs
 * and events are written but before it commits. There its backend is terminated,
 * or the whole server process is SIGKILLed. Nothing of the batch may be stored, the client gets a 503 (or
 * the status update's per-order "could not be updated") and not a hang, and a re-send converges to exactly
 * one placement (one cancellation) of each order with one set of effects.
 */

const HOLD = 7_700_001
const N = 1000

/** The trigger that makes a batch wait, inside its transaction, while the test holds HOLD. */
async function installHold (sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`create function oxs_test_hold() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${HOLD}); return null; end $$;
    create trigger oxs_test_hold after insert on seller_events
      for each statement execute function oxs_test_hold()`)
}

/** A connection of the test's own that holds HOLD until released. */
async function hold (url: string): Promise<{ release: () => Promise<void> }> {
  const holder = openClient(url, { max: 1, application: 'oxs-test-holder' })
  await holder`select pg_advisory_lock(${HOLD})`
  let released = false
  return {
    release: async () => {
      if (released) return
      released = true
      await holder`select pg_advisory_unlock(${HOLD})`
      await holder.end({ timeout: 5 })
    }
  }
}

export const order = (orderId: number, extra: Record<string, unknown> = {}): Record<string, unknown> => {
  const companyId = orderId % 2 === 0 ? 1 : 2
  return {
    orderId: String(orderId),
    orderNumber: `F-${orderId}`,
    serviceOrderNumber: `SVC-${orderId}`,
    companyId,
    storeId: companyId * 10 + 1,
    retailerId: 501,
    shopId: 601,
    deliveryType: 'REGULAR',
    currencyCode: 'INR',
    paymentMode: ['ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY'][orderId % 3],
    orderTotal: '100.00',
    orderTotalFinal: 100,
    orderTaxAmount: 0,
    orderCessAmount: 0,
    appliedPoints: 0,
    totalExtraCharges: 0,
    roundOff: 0,
    placedAt: PLACED_AT,
    orderItems: [
      {
        id: String(orderId * 10 + 1), offerId: companyId * 100 + 2, quantity: '1.5', dealId: companyId * 100 + 2
      },
      { id: String(orderId * 10 + 2), offerId: companyId * 100 + 1, quantity: 1 }
    ],
    ...extra
  }
}

const batch = (from: number): Array<Record<string, unknown>> => Array.from({ length: N }, (_, i) => order(from + i))

/**
 * What a batch of orders left behind, every effect of placement and cancellation counted: its events, and the
 * notifications they make (the deliveries of the notification subscriptions, dispatched first, as a
 * deliverer would: no server here runs one).
 */
async function footprint (database: TestDatabase, ids: number[]) {
  const { sql } = database
  await dispatchEvents(database.db)
  const [row] = await sql`select
    (select count(*)::int from orders where id = any(${ids})) as orders,
    (select count(*)::int from order_items where order_id = any(${ids})) as lines,
    (select count(*)::int from order_status_history where order_id = any(${ids}) and to_status = 'ORDER_PLACED') as placed,
    (select count(*)::int from order_status_history where order_id = any(${ids}) and to_status = 'CANCELLED') as cancelled,
    (select count(*)::int from seller_events where order_id = any(${ids})) as events,
    (select count(*)::int from deliveries d join subscriptions s on s.id = d.subscription_id
      where s.kind in ('notify-seller', 'notify-customer', 'notify-messaging') and d.order_id = any(${ids})) as notifications,
    (select count(*)::int from graphile_worker._private_jobs where key = any(${ids.map((id) => `auto-reject:${id}`)})) as jobs,
    (select count(*)::int from payout_schedules where order_id = any(${ids})) as payouts,
    (select count(*)::int from refunds where order_id = any(${ids})) as refunds,
    (select count(*)::int from points_ledger where order_id = any(${ids}) and kind = 'ORDER_CANCELLATION_REFUND') as refunded,
    (select json_object_agg(id, grabbed_quantity::text order by id) from daily_deals where id in (102, 202)) as grabbed,
    (select json_object_agg(seller_id || ':' || store_id, live_orders order by seller_id, store_id) from order_counts) as counts,
    (select json_object_agg(id, points_balance::text order by id) from sellers) as balances`
  return row
}

interface Running extends ServerDatabase { server: ServerProcess, port: number, key: string, call: Caller }

async function runServer (t: Test): Promise<Running> {
  const made = await serverDatabase(t)
  const { database, servers } = made
  // A failed test shows what the server said: the one place its faults are visible.
  t.teardown(() => {
    const [server] = servers
    if (!t.passing() && server) t.comment(`server output:\n${server.stdout().slice(-4000)}\n${server.stderr().slice(-3000)}`)
  })
  const { server, port } = await made.start()
  const key = await platformKey(database)
  const call: Caller = async (method, path, body) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body)
    })
    return { status: res.status, json: await res.json() }
  }
  return { ...made, server, port, key, call }
}

t.test('a backend terminated inside a 1,000-order placement: nothing stored, 503, the re-send places each order once',
  async (t) => {
    const { server, port, database, url, call } = await runServer(t)
    const { sql } = database
    await setupMarket(call, sql)
    await installHold(sql)
    const orders = batch(10_000)
    const ids = orders.map((o) => Number(o.orderId))
    const before = await footprint(database, ids)

    const held = await hold(url)
    t.teardown(held.release)
    const started = Date.now()
    const answer = call('POST', PLATFORM_ORDERS_PATH, orders)
    const { pid, written } = await waitingBackend(t, sql)
    t.ok(['daily_deals', 'order_items', 'order_status_history', 'orders', 'payout_schedules', 'seller_events']
      .every((table) => written.includes(table)), `caught after its writes: ${written.join(', ')}`)
    await sql`select pg_terminate_backend(${pid})`
    await held.release()
    const { status, json } = await answer
    t.equal(status, 503, `a 503 (${JSON.stringify(json).slice(0, 200)})`)
    t.equal(json.statusCode, 503)
    t.ok(Date.now() - started < 20_000, 'answered, not hung')
    t.same(await footprint(database, ids), before, 'all or nothing: not one order, line, grab, count, job, event or notification')

    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const resent = await call('POST', PLATFORM_ORDERS_PATH, orders)
    t.same([resent.status, resent.json.data?.inserted, resent.json.data?.failed], [200, N, 0], 'the re-send places them')
    const again = await call('POST', PLATFORM_ORDERS_PATH, orders)
    t.same([again.status, again.json.data?.unchanged], [200, N], 'and again: unchanged')
    const after = await footprint(database, ids)
    t.match(after, {
      orders: N,
      lines: 2 * N,
      placed: N,
      cancelled: 0,
      events: N,
      notifications: N,
      jobs: N / 2,
      payouts: ids.filter((id) => id % 3 === 1).length,
      grabbed: { 102: '750.000', 202: '750.000' },
      counts: { '1:11': N / 2, '2:21': N / 2 }
    }, 'one placement of each order, one set of effects')
    t.same(await invariantProblems(sql), [])

    // ---- The same for a cancellation batch: half the orders accepted first, so points come back.
    const apiKeys = { 1: await credential(database, 1, 'api-key'), 2: await credential(database, 2, 'api-key') }
    for (const seller of [1, 2] as const) {
      const mine = ids.filter((id) => (id % 2 === 0 ? 1 : 2) === seller).slice(0, N / 4)
      const res = await fetch(`http://127.0.0.1:${port}${STATUS_UPDATE_PATH}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKeys[seller]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ order_status: mine.map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })) })
      })
      t.equal(((await res.json()) as { data: { successful: number } }).data.successful, N / 4)
    }
    const accepted = await footprint(database, ids)
    const cancel = { order_status: ids.map((id) => ({ Order_id: String(id), Order_Status: 'CANCELLED', reason: 'Fault' })) }
    const held2 = await hold(url)
    t.teardown(held2.release)
    const cancelling = call('POST', PLATFORM_ORDER_STATUS_PATH, cancel)
    const caught = await waitingBackend(t, sql)
    t.ok(['order_status_history', 'orders', 'points_ledger', 'refunds', 'seller_events'].every((table) => caught.written.includes(table)),
      `caught after its writes: ${caught.written.join(', ')}`)
    await sql`select pg_terminate_backend(${caught.pid})`
    await held2.release()
    const cancelled = await cancelling
    t.ok(cancelled.status === 200 || cancelled.status === 503, `200 or 503: ${cancelled.status}`)
    if (cancelled.status === 200) {
      t.equal(cancelled.json.data.successful, 0, 'a 200 reports every order as not updated')
      t.ok(cancelled.json.data.errors.every((e: { code: string }) => e.code === 'ORDER_NOT_UPDATED'))
    }
    t.same(await footprint(database, ids), accepted, 'nothing half-applied: no cancellation, refund, points or deal given back')
    t.same(await sql`select count(*)::int as n from orders where id = any(${ids}) and status = 'CANCELLED'`, [{ n: 0 }])

    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    const retry = await call('POST', PLATFORM_ORDER_STATUS_PATH, cancel)
    t.same([retry.status, retry.json.data?.successful, retry.json.data?.unchangedOrderIds.length], [200, N, 0])
    const retry2 = await call('POST', PLATFORM_ORDER_STATUS_PATH, cancel)
    t.same([retry2.status, retry2.json.data?.successful, retry2.json.data?.unchangedOrderIds.length], [200, N, N])
    t.match(await footprint(database, ids), {
      orders: N,
      cancelled: N,
      events: accepted.events + N,
      notifications: accepted.notifications + 3 * N,
      jobs: 0,
      refunded: N / 2,
      refunds: ids.filter((id) => id % 3 === 0).length,
      grabbed: { 102: '0.000', 202: '0.000' },
      counts: { '1:11': N / 2, '2:21': N / 2 },
      balances: { 1: '100000000.00', 2: '100000000.00' }
    }, 'cancelled once: points given back once (to the full top-up), deals given back, one refund per online order')
    t.same(await invariantProblems(sql), [])
    t.equal(server.child.exitCode, null, 'the process lived through it')
  })

t.test('the server SIGKILLed inside a 1,000-order placement: nothing stored; restarted, the re-send places each once',
  async (t) => {
    const first = await runServer(t)
    const { database, url } = first
    const { sql } = database
    await setupMarket(first.call, sql)
    await installHold(sql)
    const orders = batch(20_000)
    const ids = orders.map((o) => Number(o.orderId))
    const before = await footprint(database, ids)
    const held = await hold(url)
    t.teardown(held.release)
    const answer = first.call('POST', PLATFORM_ORDERS_PATH, orders).then(() => 'answered', (err: Error) => err.message)
    const { pid, written } = await waitingBackend(t, sql)
    t.ok(written.includes('orders') && written.includes('daily_deals') && written.includes('seller_events'), `caught after its writes: ${written.join(', ')}`)
    first.server.child.kill('SIGKILL')
    await first.server.exited
    t.equal(await answer, 'fetch failed', 'the client lost its connection')
    // The dead process's transaction lives on until its backend notices: let it go on, it can never commit.
    await held.release()
    await eventually(t, 'the orphaned backend gone', async () =>
      (await sql`select count(*)::int as n from pg_stat_activity where pid = ${pid}`)[0].n === 0, { timeoutMs: 30_000 })
    t.same(await footprint(database, ids), before, 'all or nothing: the open transaction was rolled back')

    const { server: second, port } = await first.start()
    const send = async () => {
      const res = await fetch(`http://127.0.0.1:${port}${PLATFORM_ORDERS_PATH}`, {
        method: 'POST', headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' }, body: JSON.stringify(orders)
      })
      const body = (await res.json()) as { data?: { inserted?: number, unchanged?: number } }
      return { status: res.status, data: body.data }
    }
    const resent = await send()
    t.same([resent.status, resent.data?.inserted], [200, N], 'the re-send places every order')
    const again = await send()
    t.same([again.status, again.data?.unchanged], [200, N], 'once')
    t.match(await footprint(database, ids), {
      orders: N,
      lines: 2 * N,
      placed: N,
      events: N,
      notifications: N,
      jobs: N / 2,
      grabbed: { 102: '750.000', 202: '750.000' },
      counts: { '1:11': N / 2, '2:21': N / 2 }
    })
    t.same(await invariantProblems(sql), [])
    second.child.kill('SIGKILL')
    await second.exited
  })

t.test('a racing re-send with the same Idempotency-Key: one placement, the same answer, the second a replay',
  async (t) => {
    const { app, database } = await build(t)
    const { sql } = database
    const key = await platformKey(database)
    const base = await listen(app)
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body)
      })
      return { status: res.status, text: await res.text(), replayed: res.headers.get(REPLAYED_HEADER) }
    }
    await setupMarket(async (method, path, body) => {
      const res = await fetch(`${base}${path}`, {
        method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body)
      })
      return { status: res.status, json: await res.json() }
    }, sql)
    await installHold(sql)
    const orders = Array.from({ length: 50 }, (_, i) => order(30_000 + i))
    const ids = orders.map((o) => Number(o.orderId))
    const headers = { 'idempotency-key': 'race-0001' }
    const held = await hold(database.url)
    t.teardown(held.release)
    const a = post(PLATFORM_ORDERS_PATH, orders, headers)
    await waitingBackend(t, sql)
    const b = post(PLATFORM_ORDERS_PATH, orders, headers)
    // The second waits on the first's claim of the key (its uncommitted row), not on the advisory lock.
    await eventually(t, 'the second waiting on the first', async () => (await sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name like 'order-exchange%' and wait_event_type = 'Lock'
        and wait_event = 'transactionid'`)[0].n === 1, { timeoutMs: 10_000 })
    await held.release()
    const [first, second] = await Promise.all([a, b])
    t.same([first.status, second.status], [200, 200])
    t.equal(second.text, first.text, 'identical answers')
    t.same(JSON.parse(first.text).data, { received: 50, inserted: 50, updated: 0, unchanged: 0, failed: 0, errors: [] })
    t.same([first.replayed, second.replayed], [null, 'true'], 'the second is the first\'s answer replayed')
    const [{ n }] = await sql`select count(*)::int as n from order_status_history where order_id = any(${ids})`
    t.equal(n, 50, 'one placement of each order')
    t.match(await footprint(database, ids), { events: 50, notifications: 50 }, 'one order.placed each, one notification each')
    const third = await post(PLATFORM_ORDERS_PATH, orders, headers)
    t.same([third.status, third.text, third.replayed], [200, first.text, 'true'], 'a later retry replays too')
    const other = await post(PLATFORM_ORDERS_PATH, orders.slice(1), headers)
    t.equal(other.status, 422, 'the key with another body is refused')

    // The platform update-status: the same race, the same answer, the orders cancelled once.
    const cancel = { order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'CANCELLED' })) }
    const held2 = await hold(database.url)
    t.teardown(held2.release)
    const c1 = post(PLATFORM_ORDER_STATUS_PATH, cancel, { 'idempotency-key': 'race-0002' })
    await waitingBackend(t, sql)
    const c2 = post(PLATFORM_ORDER_STATUS_PATH, cancel, { 'idempotency-key': 'race-0002' })
    await eventually(t, 'the second waiting on the first', async () => (await sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name like 'order-exchange%' and wait_event_type = 'Lock'
        and wait_event = 'transactionid'`)[0].n === 1, { timeoutMs: 10_000 })
    await held2.release()
    const [x, y] = await Promise.all([c1, c2])
    t.same([x.status, y.status, y.text === x.text, x.replayed, y.replayed], [200, 200, true, null, 'true'])
    t.same(JSON.parse(x.text).data, { successful: 50, failed: 0, errors: [], unchangedOrderIds: [] })
    const [{ c }] = await sql`select count(*)::int as c from order_status_history where order_id = any(${ids}) and to_status = 'CANCELLED'`
    t.equal(c, 50, 'one cancellation of each order')
    t.match(await footprint(database, ids), { events: 100, notifications: 50 + 3 * 50 }, 'one order.cancelled each, to the three channels once')
    t.same(await invariantProblems(sql), [])
  })
