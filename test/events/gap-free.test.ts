import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { rawClient, testConfig } from '../helpers/build.js'
import { startTestWorker } from '../helpers/effects.js'
import { eventLogProblems, eventMarket, EVENTS_QUERY, type EventMarket, type FeedEvent } from '../helpers/events.js'
import { Random } from '../helpers/random-documents.js'
import { eventually } from '../helpers/eventually.js'

/*
 * Gap-freedom under concurrency. Writers of every kind run at once — the sellers' status batches, the
 * platform's placements and transitions (across sellers in one batch), the worker's auto-rejections — and
 * their transactions are held open for random times, both before their events are numbered and after (a
 * trigger sleeps per order: test_delays), so they commit in an order unlike the one they started in.
 * Meanwhile readers follow each seller's feed over HTTP, each storing its cursor and reading on after it.
 * Each reader must end with exactly the committed events: every sequence from 1, once, in order.
 *
 * The same run keeps the naive design beside it: a bigserial drawn when the change is written
 * (naive_events, filled by the same trigger), read by a cursor on that id. One out-of-order commit is
 * planted (a transaction that drew its id holds until a later one has committed and been read), and the naive
 * reader misses it for good; the feed's readers do not.
 */

const SEED = 20261126
/** The advisory lock the planted slow rejection waits on inside its transaction (test_holds). */
const HOLD_LOCK = 4_207_311
const SELLERS = [1, 2, 4]

interface Followed { seen: FeedEvent[], polls: number }

/** The test's own machinery in the database: random delays inside the writers' transactions, and the naive log. */
async function plantDelays (m: EventMarket): Promise<void> {
  await m.database.sql.unsafe(`
    create table test_delays (order_id bigint primary key, before_ms int not null, after_ms int not null);
    create table test_holds (order_id bigint primary key);
    create table naive_events (id bigserial primary key, seller_id int not null, order_id bigint not null, to_status text not null);
    create function test_before_numbering() returns trigger language plpgsql as $$
    declare pause int;
    begin
      insert into naive_events (seller_id, order_id, to_status)
        select o.seller_id, n.order_id, n.to_status from new_rows n join orders o on o.id = n.order_id order by n.id;
      select max(before_ms) into pause from test_delays where order_id in (select order_id from new_rows);
      if pause > 0 then perform pg_sleep(pause / 1000.0); end if;
      if exists (select 1 from test_holds where order_id in (select order_id from new_rows)) then
        perform pg_advisory_xact_lock(${HOLD_LOCK});
      end if;
      return null;
    end $$;
    create trigger test_before_numbering after insert on order_status_history referencing new table as new_rows
      for each statement execute function test_before_numbering();
    create function test_after_numbering() returns trigger language plpgsql as $$
    declare pause int;
    begin
      select max(after_ms) into pause from test_delays where order_id in (select order_id from new_rows);
      if pause > 0 then perform pg_sleep(pause / 1000.0); end if;
      return null;
    end $$;
    create trigger test_after_numbering after insert on seller_events referencing new table as new_rows
      for each statement execute function test_after_numbering();`)
}

t.test('concurrent writers committing out of order: every reader of the feed sees exactly the committed events; the naive cursor misses', async (t) => {
  const m = await eventMarket(t, { AUTO_REJECT_AFTER_MS: '1000' })
  await plantDelays(m)
  const rand = new Random(SEED)
  // The readers' own app and pool: they poll while every writer connection may be held open.
  const readerDatabase = openDatabase(m.database.url, { max: 6, application: 'oxs-test-readers' })
  const readers: FastifyInstance = await buildApp({ config: testConfig(m.database), database: readerDatabase })
  t.teardown(async () => { await readers.close(); await readerDatabase.close() })
  await readers.ready()
  const naiveSql = rawClient(m.database.url, { max: 3 })
  t.teardown(() => naiveSql.end({ timeout: 5 }))
  // The feed readers look at the log here between reads (whether it has more than they saw).
  const watchSql = rawClient(m.database.url, { max: 2 })
  t.teardown(() => watchSql.end({ timeout: 5 }))
  const tokens = new Map<number, string>()
  for (const s of SELLERS) tokens.set(s, await m.token(s))
  await startTestWorker(t, m.database, { AUTO_REJECT_AFTER_MS: '1000', WORKER_CONCURRENCY: '4' })

  const orders = new Map<number, number[]>(SELLERS.map((s) => [s, []]))
  let nextId = 10_000
  const delays = async (ids: number[]): Promise<void> => {
    const rows = ids.map((id) => ({
      order_id: id, before_ms: rand.chance(0.3) ? 0 : rand.int(0, 200), after_ms: rand.chance(0.5) ? 0 : rand.int(0, 40)
    }))
    await m.database.sql`insert into test_delays ${m.database.sql(rows)}`
  }
  const place = async (count: number, sellers = SELLERS): Promise<number[]> => {
    const specs = Array.from({ length: count }, () =>
      ({ orderId: nextId++, seller: rand.pick(sellers), lines: rand.int(1, 3) }))
    await delays(specs.map((s) => s.orderId))
    await m.place(specs)
    for (const s of specs) orders.get(s.seller)!.push(s.orderId)
    return specs.map((s) => s.orderId)
  }
  await place(30)

  let writing = true
  const followers: Array<Promise<Followed>> = []
  // Two feed readers per seller: each keeps its cursor and reads on after it, pages of random sizes.
  for (const s of SELLERS) {
    for (let r = 0; r < 2; r++) {
      const own = new Random(SEED + s * 10 + r)
      followers.push((async (): Promise<Followed> => {
        const seen: FeedEvent[] = []
        let after = '0'
        let polls = 0
        let last = false
        for (;;) {
          const res = await readers.inject({
            method: 'POST',
            url: '/v2/graphql',
            headers: { authorization: `Bearer ${tokens.get(s)}` },
            payload: { query: EVENTS_QUERY, variables: { input: { after, limit: own.int(1, 40) } } }
          })
          polls++
          const page = res.json().data.events
          seen.push(...page.nodes)
          after = page.pageInfo.endCursor
          if (page.pageInfo.hasNext) continue
          if (last) return { seen, polls }
          if (!writing) last = true // one more full read once every writer is done
          else {
            // On once the log has more than this reader saw (or the writers are done), looked at a pace of its own.
            await eventually(t, `seller ${s}'s log past ${after}`, async () => !writing || (await watchSql`select 1
              from seller_events where seller_id = ${s} and sequence > ${after}::bigint limit 1`).length > 0,
            { timeoutMs: 120_000, intervalMs: own.int(1, 25) })
          }
        }
      })())
    }
  }
  // The naive reader: the same, on naive_events by its bigserial id.
  const naiveCursors = new Map<number, number>(SELLERS.map((s) => [s, 0]))
  const naive = SELLERS.map(async (s) => {
    const seen = new Set<number>()
    let after = 0
    let last = false
    for (;;) {
      const rows = await naiveSql`select id::int from naive_events where seller_id = ${s} and id > ${after} order by id limit 50`
      for (const row of rows) seen.add(row.id)
      if (rows.length > 0) { after = rows.at(-1)!.id; naiveCursors.set(s, after); continue }
      if (last) return { seller: s, seen }
      if (!writing) last = true
      else {
        await eventually(t, `a naive row of seller ${s} past ${after}`, async () => !writing || (await naiveSql`select 1
          from naive_events where seller_id = ${s} and id > ${after} limit 1`).length > 0, { timeoutMs: 120_000, intervalMs: 10 })
      }
    }
  })

  // The planted out-of-order commit, on seller 2 (no auto-rejection): the first rejection draws its naive
  // id, then holds on a lock the test has (test_holds) before its event is numbered; the second starts once it
  // waits there, and commits first (rejections of orders without deal lines share no lock; acceptances would
  // queue on the seller's row). The lock is let go once the naive reader has read past the second.
  // One connection: the session that takes the lock is the one that lets it go.
  const holder = rawClient(m.database.url, { max: 1 })
  t.teardown(() => holder.end({ timeout: 5 }))
  const planted = (async () => {
    const [slow, fast] = [nextId++, nextId++]
    await m.place([{ orderId: slow, seller: 2 }, { orderId: fast, seller: 2 }])
    await holder`select pg_advisory_lock(${HOLD_LOCK})`
    await m.database.sql`insert into test_holds values (${slow})`
    const first = m.sellerUpdate(2, [{ Order_id: slow, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Planted' }])
    await eventually(t, 'the first planted rejection holding', async () => (await m.database.sql`select 1 from pg_locks
      where locktype = 'advisory' and not granted and objid = ${HOLD_LOCK}::int8::oid
        and database = (select oid from pg_database where datname = current_database())`).length === 1)
    await m.sellerUpdate(2, [{ Order_id: fast, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Planted' }])
    const [{ id: fastNaive }] = await m.database.sql`select id::int from naive_events where order_id = ${fast} and to_status = 'ORDER_REJECTED_BY_SELLER'`
    await eventually(t, 'the naive reader past the second', () => naiveCursors.get(2)! >= fastNaive)
    await holder`select pg_advisory_unlock(${HOLD_LOCK})`
    await first
    return { slow, fast }
  })()

  // Writers: five loops of random batches, started together.
  const STATUSES = ['ORDER_ACCEPTED', 'ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER']
  let operations = 0
  const writer = async (kind: 'place' | 'seller' | 'platform', rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      operations++
      if (kind === 'place') {
        await place(rand.int(1, 4))
      } else if (kind === 'seller') {
        const s = rand.pick(SELLERS)
        const mine = orders.get(s)!
        const items = Array.from({ length: rand.int(1, 5) }, () => {
          const status = rand.pick(STATUSES)
          return { Order_id: rand.pick(mine), Order_Status: status, ...(status === 'ORDER_REJECTED_BY_SELLER' ? { reason: 'No stock' } : {}) }
        })
        const res = await m.sellerUpdate(s, items)
        if (res.statusCode !== 200) throw new Error(`seller update: ${JSON.stringify(res)}`)
      } else {
        const items = Array.from({ length: rand.int(1, 4) }, () => ({
          Order_id: rand.pick(orders.get(rand.pick(SELLERS))!), Order_Status: rand.pick(['CANCELLED', 'DELIVERED'])
        }))
        const res = await m.platformUpdate(items)
        if (res.statusCode !== 200) throw new Error(`platform update: ${JSON.stringify(res)}`)
      }
    }
  }
  await Promise.all([writer('place', 25), writer('place', 25), writer('seller', 35), writer('seller', 35), writer('platform', 30)])
  const { slow, fast } = await planted
  // The auto-rejections still due (sellers 1 and 4, 1 s after placement): let the worker finish them.
  await eventually(t, 'the auto-rejections finished', async () =>
    (await m.database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'auto-reject'`)[0].n === 0,
  { timeoutMs: 60_000, intervalMs: 200 })
  writing = false
  const followed = await Promise.all(followers)
  const naiveSeen = await Promise.all(naive)

  t.same(await eventLogProblems(m.database.sql), [], 'every committed change has its event, numbered 1 … n per seller')
  const autoRejected = (await m.database.sql`select count(*)::int as n from order_status_history where source = 'auto-reject'`)[0].n
  t.ok(autoRejected > 0, `the worker auto-rejected ${autoRejected} orders meanwhile`)
  const committed = new Map<number, Array<{ sequence: string, type: string, orderId: string }>>()
  for (const s of SELLERS) {
    committed.set(s, (await m.database.sql`select e.sequence::text, e.type::text, e.order_id::text as "orderId"
      from seller_events e where e.seller_id = ${s} order by e.sequence`).map((r) => ({ sequence: r.sequence, type: r.type, orderId: r.orderId })))
  }
  followed.forEach(({ seen, polls }, i) => {
    const s = SELLERS[Math.floor(i / 2)]!
    const expected = committed.get(s)!
    t.same(seen.map((e) => ({ sequence: e.sequence, type: e.type, orderId: e.order!.orderId })), expected,
      `seller ${s}, reader ${i % 2}: exactly the ${expected.length} committed events, in order (${polls} reads)`)
  })
  // The planted pair: committed in the other order than they drew their naive ids.
  const [slowEvent] = await m.database.sql`select sequence::int from seller_events where seller_id = 2 and order_id = ${slow} and type = 'order.rejected'`
  const [fastEvent] = await m.database.sql`select sequence::int from seller_events where seller_id = 2 and order_id = ${fast} and type = 'order.rejected'`
  t.ok(fastEvent!.sequence < slowEvent!.sequence, 'the feed numbered the planted pair in commit order')
  const naiveAll = await m.database.sql`select id::int, seller_id from naive_events`
  let missed = 0
  for (const { seller, seen } of naiveSeen) {
    missed += naiveAll.filter((r) => r.seller_id === seller && !seen.has(r.id)).length
  }
  const [plantedNaive] = await m.database.sql`select id::int from naive_events where order_id = ${slow} and to_status = 'ORDER_REJECTED_BY_SELLER'`
  t.notOk(naiveSeen.find((n) => n.seller === 2)!.seen.has(plantedNaive!.id),
    'the naive cursor never saw the planted late commit')
  t.ok(missed >= 1, `a naive bigserial cursor missed ${missed} of ${naiveAll.length} committed changes; the feed's readers missed none`)
  t.comment(`${operations} write batches, ${naiveAll.length} changes, ${followed.reduce((n, f) => n + f.polls, 0)} feed reads, naive missed ${missed}`)
})
