import t from 'tap'
import { openClient } from '../../src/db/client.js'
import { PLATFORM_ORDERS_PATH, STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'
import { eventLogProblems, orderRow } from '../helpers/events.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import { setupMarket, type Caller } from '../helpers/platform-market.js'
import { serverDatabase, waitingBackend } from '../helpers/server-database.js'
import { eventually } from '../helpers/eventually.js'

/*
 * The server process SIGKILLed in the middle of a batch, at the two moments that matter to the event log,
 * made deterministic as in references/sync-faults.test.ts (a trigger waits on an advisory lock the test holds):
 * after the batch's changes are written but before its events are, and after its events are written (the
 * seller's counter moved) but before the commit. Neither may leave a change without its event or an event
 * without its change, nor a hole in the numbers: restarted, the re-sent batch is numbered on from where the
 * committed log ended.
 */

const HOLD = 7_700_024
const N = 400

t.test('SIGKILL mid-batch: no change without its event, no event without its change, no hole after a restart', async (t) => {
  const { url, database, start: startServer } = await serverDatabase(t)
  const { sql } = database
  const platform = await platformKey(database)

  const start = async () => {
    const { server, port } = await startServer()
    const send = async (path: string, key: string, body: unknown, method: 'POST' | 'PUT' = 'POST') => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      return { status: res.status, json: await res.json() as any }
    }
    return { server, send }
  }
  let live = await start()
  const call: Caller = (method, path, body) => live.send(path, platform, body, method)
  await setupMarket(call, sql)
  const apiKey = await credential(database, 1, 'api-key')
  const rows = Array.from({ length: N }, (_, i) => orderRow({ orderId: 10_001 + i, seller: 1, lines: 1 + (i % 3) }))
  // Placed in batches of the route's size; then a first 50 accepted, committed: the log has 450 events.
  for (let i = 0; i < N; i += 200) {
    const placed = await live.send(PLATFORM_ORDERS_PATH, platform, rows.slice(i, i + 200))
    t.equal(placed.json.data?.inserted, 200)
  }
  const accept = (ids: number[]) => ({ order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })) })
  const ids = rows.map((r) => Number(r.orderId))
  const first = await live.send(STATUS_UPDATE_PATH, apiKey, accept(ids.slice(0, 50)))
  t.match(first.json.data, { successful: 50, failed: 0 })
  const state = async () => (await sql`select
    (select count(*)::int from orders where status = 'ORDER_ACCEPTED') as accepted,
    (select count(*)::int from orders) as orders,
    (select count(*)::int from seller_events) as events,
    (select max(sequence)::int from seller_events) as last,
    (select last_sequence::int from seller_event_counters where seller_id = 1) as counter`)[0]
  t.same(await state(), { accepted: 50, orders: N, events: N + 50, last: N + 50, counter: N + 50 })

  const holder = openClient(url, { max: 1, application: 'oxs-test-holder' })
  t.teardown(() => holder.end({ timeout: 5 }))
  await sql.unsafe(`create function oxs_test_hold() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${HOLD}); return null; end $$`)

  /** Sends `body`, catches its transaction where the trigger `on` fires, SIGKILLs the server there. */
  const killInside = async (what: string, on: string, path: string, key: string, body: unknown) => {
    await sql.unsafe(`create trigger oxs_test_hold after insert on ${on} for each statement execute function oxs_test_hold()`)
    await holder`select pg_advisory_lock(${HOLD})`
    const answer = live.send(path, key, body).then(() => 'answered', (err: Error) => err.message)
    const { pid, written } = await waitingBackend(t, sql, `${what}: the batch`, 60_000)
    live.server.child.kill('SIGKILL')
    await live.server.exited
    t.equal(await answer, 'fetch failed', `${what}: the client lost its connection`)
    await holder`select pg_advisory_unlock(${HOLD})`
    await eventually(t, 'the orphaned backend gone', async () =>
      (await sql`select count(*)::int as n from pg_stat_activity where pid = ${pid}`)[0].n === 0, { timeoutMs: 30_000 })
    await sql.unsafe(`drop trigger oxs_test_hold on ${on}`)
    live = await start()
    return written
  }

  // 1. The seller's batch of 350 acceptances, caught after its changes and history are written, before its events.
  const batch = accept(ids.slice(50))
  const beforeEvents = await killInside('changes written, events not', 'order_status_history', STATUS_UPDATE_PATH, apiKey, batch)
  t.ok(beforeEvents.includes('orders') && beforeEvents.includes('order_status_history') && !beforeEvents.includes('seller_events'),
    `caught after the changes, before the events: ${beforeEvents.join(', ')}`)
  t.same(await state(), { accepted: 50, orders: N, events: N + 50, last: N + 50, counter: N + 50 }, 'nothing of it: no change without its event')
  t.same(await eventLogProblems(sql), [])

  // 2. The same batch, caught after its events are written and numbered (the counter moved), before the commit.
  const afterEvents = await killInside('events written, not committed', 'seller_events', STATUS_UPDATE_PATH, apiKey, batch)
  t.ok(afterEvents.includes('seller_events') && afterEvents.includes('seller_event_counters') && afterEvents.includes('orders'),
    `caught after the events: ${afterEvents.join(', ')}`)
  t.same(await state(), { accepted: 50, orders: N, events: N + 50, last: N + 50, counter: N + 50 }, 'nothing of it: no event without its change, the counter as it was')
  t.same(await eventLogProblems(sql), [])

  // 3. A placement batch caught after its events: no order, no event.
  const more = Array.from({ length: 100 }, (_, i) => orderRow({ orderId: 20_001 + i, seller: 1 }))
  await killInside('placements, events written', 'seller_events', PLATFORM_ORDERS_PATH, platform, more)
  t.same(await state(), { accepted: 50, orders: N, events: N + 50, last: N + 50, counter: N + 50 }, 'no order placed, no event')

  // Restarted: the re-sent batches apply once, numbered on from the committed log without a hole.
  const resent = await live.send(STATUS_UPDATE_PATH, apiKey, batch)
  t.match(resent.json.data, { successful: N - 50, failed: 0, unchangedOrderIds: [] })
  t.match((await live.send(PLATFORM_ORDERS_PATH, platform, more)).json.data, { inserted: 100 })
  t.same(await state(), { accepted: N, orders: N + 100, events: 2 * N + 100, last: 2 * N + 100, counter: 2 * N + 100 })
  t.same(await eventLogProblems(sql), [], 'every change has its event, 1 … n without a hole')
  const numbered = await sql`select min(sequence)::int as lo, max(sequence)::int as hi from seller_events
    where type = 'order.accepted' and order_id >= ${ids[50]!}`
  t.same(numbered[0], { lo: N + 51, hi: 2 * N }, 'the re-sent acceptances are 451 … 800: the numbers the killed attempts drew were given back')
})
