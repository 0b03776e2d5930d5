import t, { type Test } from 'tap'
import type { SQL } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Db } from '../../src/db/client.js'
import { IN_FLIGHT, IN_FLIGHT_PER_SELLER, claimDeliveries, nextDueInMs, releaseClaims } from '../../src/delivery/deliveries.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'
import { MAX_PENDING_DELIVERIES, WebhookCode } from '../../src/webhooks/texts.js'
import { startReceiver } from '../helpers/receiver.js'
import { allRecorded, verifyingReceiver, webhookMarket } from '../helpers/webhooks.js'
import { eventually } from '../helpers/eventually.js'

/*
 * One seller's endpoint cannot hold up the others' (security finding 2): claims are fair across endpoints
 * with at most IN_FLIGHT.seller of each in flight; nor can one seller's many endpoints (issue 40): claims are
 * fair across sellers with at most IN_FLIGHT_PER_SELLER of a seller's in flight. Replays are one at a time
 * and bounded, and an endpoint's queue stops at MAX_PENDING_DELIVERIES. And the attempt an attempt is:
 * counted when sent, not when claimed; signed with the secrets of the moment it starts. Receivers run on
 * 127.0.0.1, so private networks are allowed explicitly (they are off by default outside these tests' intent).
 */

const PRIVATE = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }

type Market = Awaited<ReturnType<typeof webhookMarket>>

/** `n` more pending deliveries of the endpoint, copies of event `sequence` (no order: none waits for another). */
async function fill (m: Market, endpoint: string, seller: number, sequence: string, n: number): Promise<void> {
  await m.database.sql`insert into deliveries (subscription_id, seller_id, sequence, type)
    select ${endpoint}, ${seller}, ${sequence}, 'webhook.test' from generate_series(1, ${n})`
}

async function pending (m: Market, endpoint: string): Promise<number> {
  const [row] = await m.database.sql`select count(*)::int as n from deliveries
    where subscription_id = ${endpoint} and status = 'PENDING'`
  return row.n
}

t.test('an endpoint that never answers, 10,000 deliveries pending: another seller\'s test ping goes while it hangs', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  const hanging = await startReceiver(t, () => 'hang')
  let secret = ''
  const other = await verifyingReceiver(t, () => [secret])
  const a = (await m.webhooks(1, 'POST', '', { url: hanging.url })).json.data.id
  const b = await m.webhooks(2, 'POST', '', { url: other.url })
  secret = b.json.data.secret
  const aTest = await m.webhooks(1, 'POST', `/${a}/test`)
  await fill(m, a, 1, aTest.json.data.sequence, MAX_PENDING_DELIVERIES - 1)
  // A timeout far past the wait below: B's ping must not need A's attempts to end.
  await m.deliverer({ concurrency: 16, timeoutMs: 120_000 })
  await eventually(t, 'A\'s first attempts hanging', () => hanging.received.length >= IN_FLIGHT.seller)

  const ping = await m.webhooks(2, 'POST', `/${b.json.data.id}/test`)
  t.equal(ping.status, 200)
  await eventually(t, 'B\'s ping delivered', () => other.delivered.some((d) => d.id === ping.json.data.eventId))
  t.same(other.unverified, [])
  const [aLogged] = await m.database.sql`select count(*)::int as n from delivery_attempts where subscription_id = ${a}`
  t.equal(aLogged.n, 0, 'A\'s attempts still hanging when B\'s ping arrived')
  t.equal(await pending(m, a), MAX_PENDING_DELIVERIES, 'A\'s deliveries all pending')
  const [leased] = await m.database.sql`select count(*)::int as n from deliveries
    where subscription_id = ${a} and leased_until > now()`
  t.equal(leased.n, IN_FLIGHT.seller, 'A holds its cap, not the pool')
  t.equal(hanging.received.length, IN_FLIGHT.seller, 'A was sent no more than its cap')
})

t.test('a claim is round robin across endpoints, at most the cap of each in flight, an order\'s head only', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  const ids: string[] = []
  for (const seller of [1, 2, 3]) {
    ids.push((await m.webhooks(seller, 'POST', '', { url: `http://127.0.0.1:9/${seller}` })).json.data.id)
  }
  // Endpoint 1 queued first (the oldest rows), 10 each; endpoint 3's rows are all of one order.
  for (const [i, id] of ids.entries()) {
    await m.database.sql`insert into deliveries (subscription_id, seller_id, sequence, type, order_id)
      select ${id}, ${i + 1}, s, 'webhook.test', ${i === 2 ? 77 : null} from generate_series(1, 10) s`
  }
  const endpointOf = new Map(ids.map((id, i) => [id, i + 1]))
  const count = (claimed: Array<{ subscriptionId: string }>): number[] =>
    [1, 2, 3].map((n) => claimed.filter((c) => endpointOf.get(c.subscriptionId) === n).length)

  const first = await claimDeliveries(m.database.db, 5, 60_000)
  t.same(count(first), [2, 2, 1], 'each endpoint\'s first, then each one\'s second (endpoint 3: its order\'s head only)')
  t.same(first.map((c) => c.attempt), [1, 1, 1, 1, 1])
  const second = await claimDeliveries(m.database.db, 100, 60_000)
  t.same(count(second), [2, 2, 0], 'up to the cap of each, counted from the leases')
  t.same(await claimDeliveries(m.database.db, 100, 60_000), [], 'every endpoint at its cap or blocked')

  await releaseClaims(m.database.db, second.map((c) => c.id))
  const again = await claimDeliveries(m.database.db, 100, 60_000)
  t.same(count(again), [2, 2, 0], 'given back: claimable at once')
  const rows = await m.database.sql`select count(*)::int as n from deliveries where attempts <> 0`
  t.equal(rows[0].n, 0, 'claims count no attempt')

  // A shared subscription (here the seller notifications, every seller's events) has the larger cap.
  const [shared] = await m.database.sql`select id::text as id from subscriptions where kind = 'notify-seller'`
  await m.database.sql`insert into deliveries (subscription_id, seller_id, sequence, type)
    select ${shared.id}, 1, s, 'order.placed' from generate_series(1, ${IN_FLIGHT.shared + 8}) s`
  const notified = await claimDeliveries(m.database.db, 100, 60_000)
  t.same(count(notified), [0, 0, 0], 'the endpoints still at their cap')
  t.equal(notified.filter((c) => c.subscriptionId === shared.id).length, IN_FLIGHT.shared, 'the shared kind: up to its own cap')
  t.same([...new Set(notified.map((c) => c.kind))], ['notify-seller'])
})

/** Seller `seller`'s deliveries in flight now (leases live), over all its endpoints, and on how many endpoints. */
async function sellerLeased (m: Market, seller: number): Promise<{ n: number, endpoints: number }> {
  const [row] = await m.database.sql`select count(*)::int as n, count(distinct d.subscription_id)::int as endpoints
    from deliveries d join subscriptions w on w.id = d.subscription_id
    where w.kind = 'seller-webhook' and w.seller_id = ${seller} and d.status = 'PENDING' and d.leased_until > now()`
  return { n: row.n, endpoints: row.endpoints }
}

t.test('ten endpoints of one seller that all hang: another seller\'s deliveries go while it hangs, it never holds more than its seller\'s cap', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  const hanging = await startReceiver(t, () => 'hang')
  let secret = ''
  const other = await verifyingReceiver(t, () => [secret])
  const endpoints: string[] = []
  for (let i = 0; i < 10; i++) {
    const created = await m.webhooks(1, 'POST', '', { url: `${hanging.url}/${i}` })
    t.equal(created.status, 201)
    endpoints.push(created.json.data.id)
  }
  // Each endpoint has more queued than its own cap: without the seller's cap the ten could take 40 slots.
  const test = await m.webhooks(1, 'POST', `/${endpoints[0]}/test`)
  for (const id of endpoints) await fill(m, id, 1, test.json.data.sequence, 2 * IN_FLIGHT.seller)
  const b = await m.webhooks(2, 'POST', '', { url: other.url })
  secret = b.json.data.secret
  // A timeout far past the waits below: B's deliveries must not need A's attempts to end.
  await m.deliverer({ concurrency: 16, timeoutMs: 120_000 })
  let most = 0
  const watch = async (): Promise<void> => { most = Math.max(most, (await sellerLeased(m, 1)).n) }
  await eventually(t, 'A\'s first attempts hanging', async () => {
    await watch()
    return hanging.received.length >= IN_FLIGHT_PER_SELLER
  })

  const ping = await m.webhooks(2, 'POST', `/${b.json.data.id}/test`)
  t.equal(ping.status, 200)
  await m.place([{ orderId: 9301, seller: 2 }, { orderId: 9302, seller: 2 }, { orderId: 9303, seller: 2 }])
  await eventually(t, () => `B's ping and placements delivered (${other.delivered.length} of 4)`, async () => {
    await watch()
    return other.delivered.some((d) => d.id === ping.json.data.eventId) && other.delivered.length >= 4
  })
  t.same(other.unverified, [])
  const [aLogged] = await m.database.sql`select count(*)::int as n from delivery_attempts
    where subscription_id = any(${endpoints}::uuid[])`
  t.equal(aLogged.n, 0, 'A\'s attempts still hanging when B\'s deliveries arrived')
  await watch()
  t.equal(most, IN_FLIGHT_PER_SELLER, 'A never held more leases than its seller\'s cap')
  t.same(await sellerLeased(m, 1), { n: IN_FLIGHT_PER_SELLER, endpoints: IN_FLIGHT_PER_SELLER },
    'A holds its seller\'s cap, one lease on each of as many endpoints (its endpoints in turn)')
  t.equal(hanging.received.length, IN_FLIGHT_PER_SELLER, 'A was sent no more than its seller\'s cap')
})

t.test('a claim is round robin across sellers; a seller\'s endpoints share its cap, the shared subscriptions are not counted', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  // Seller 1 has three endpoints, queued first (the oldest rows); sellers 2 and 3 one each; 10 rows each.
  const ids: Array<{ id: string, seller: number }> = []
  for (const seller of [1, 1, 1, 2, 3]) {
    const url = `http://127.0.0.1:9/${seller}/${ids.length}`
    ids.push({ id: (await m.webhooks(seller, 'POST', '', { url })).json.data.id, seller })
  }
  for (const { id, seller } of ids) {
    await m.database.sql`insert into deliveries (subscription_id, seller_id, sequence, type)
      select ${id}, ${seller}, s, 'webhook.test' from generate_series(1, 10) s`
  }
  const sellerOf = new Map(ids.map(({ id, seller }) => [id, seller]))
  const count = (claimed: Array<{ subscriptionId: string }>): number[] =>
    [1, 2, 3].map((n) => claimed.filter((c) => sellerOf.get(c.subscriptionId) === n).length)

  const first = await claimDeliveries(m.database.db, 3, 60_000)
  t.same(count(first), [1, 1, 1], 'each seller\'s first before any seller\'s second, however many endpoints it has')
  const second = await claimDeliveries(m.database.db, 100, 60_000)
  t.same(count(second), [IN_FLIGHT_PER_SELLER - 1, IN_FLIGHT.seller - 1, IN_FLIGHT.seller - 1],
    'seller 1 up to its seller\'s cap over its three endpoints, the others up to their endpoint\'s')
  t.same(await sellerLeased(m, 1), { n: IN_FLIGHT_PER_SELLER, endpoints: 3 }, 'counted from the leases')
  t.same(await claimDeliveries(m.database.db, 100, 60_000), [], 'every seller at its cap')
  const due = await nextDueInMs(m.database.db)
  t.ok(due !== null && due > 50_000, `no wake-up before a lease ends while due rows wait at the caps (${due} ms)`)

  // An attempt of seller 1 finished and not yet written is not in flight: its seller has room for one.
  const done = [...first, ...second].find((c) => sellerOf.get(c.subscriptionId) === 1)!
  const after = await claimDeliveries(m.database.db, 100, 60_000, [done.id])
  t.same(count(after), [1, 0, 0], 'a finished attempt frees its seller\'s slot')
  t.not(after[0].id, done.id, 'the finished row is not claimed again before it is written')

  // The seller notifications carry seller 1's events: their own cap, not seller 1's.
  const [shared] = await m.database.sql`select id::text as id from subscriptions where kind = 'notify-seller'`
  await m.database.sql`insert into deliveries (subscription_id, seller_id, sequence, type)
    select ${shared.id}, 1, s, 'order.placed' from generate_series(1, ${IN_FLIGHT.shared + 8}) s`
  const notified = await claimDeliveries(m.database.db, 100, 60_000)
  t.equal(notified.length, IN_FLIGHT.shared, 'the shared kind: up to its own cap while seller 1 is at its')
  t.same([...new Set(notified.map((c) => c.kind))], ['notify-seller'])

  // Disabling an endpoint whose attempts are in flight does not lift its seller's cap.
  await releaseClaims(m.database.db, after.map((c) => c.id))
  const held = second.find((c) => sellerOf.get(c.subscriptionId) === 1)!
  await m.database.sql`update subscriptions set status = 'DISABLED' where id = ${held.subscriptionId}`
  t.same(await claimDeliveries(m.database.db, 100, 60_000), [],
    'seller 1 still at its cap: the disabled endpoint\'s leases count while its attempts may be running')
})

t.test('replays: one at a time per endpoint, never past the pending cap; a full endpoint\'s new events wait in the log', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  const id = (await m.webhooks(1, 'POST', '', { url: 'http://127.0.0.1:9/' })).json.data.id
  await m.place([{ orderId: 8801, seller: 1 }, { orderId: 8802, seller: 1 }, { orderId: 8803, seller: 1 }])
  await dispatchEvents(m.database.db)
  const events = (await m.follow(await m.token(1))).events
  t.equal(events.length, 3)
  await m.database.sql`update deliveries set status = 'DELIVERED' where subscription_id = ${id}`

  const first = await m.webhooks(1, 'POST', `/${id}/replay`, { eventIds: [events[0].id] })
  t.same([first.status, first.json.data], [200, { queued: 1, through: events[0].sequence }])
  const second = await m.webhooks(1, 'POST', `/${id}/replay`, { after: '0' })
  t.equal(second.status, 409)
  t.match(second.json, { code: WebhookCode.replayPending, message: /still being delivered.*then replay again/ })
  t.equal(await pending(m, id), 1, 'nothing more queued')
  await m.database.sql`update deliveries set status = 'DELIVERED' where subscription_id = ${id}`
  const third = await m.webhooks(1, 'POST', `/${id}/replay`, { after: '0' })
  t.same([third.status, third.json.data.queued], [200, 3], 'the previous replay delivered: the next one goes')
  await m.database.sql`update deliveries set status = 'DELIVERED' where subscription_id = ${id}`

  // Full: replays refused, dispatch leaves the cursor where it is.
  await fill(m, id, 1, events[0].sequence, MAX_PENDING_DELIVERIES)
  for (const body of [{ eventIds: [events[1].id] }, { after: '0' }]) {
    const full = await m.webhooks(1, 'POST', `/${id}/replay`, body)
    t.equal(full.status, 409)
    t.match(full.json, { code: WebhookCode.queueFull, message: new RegExp(`${MAX_PENDING_DELIVERIES} deliveries pending.*wait until`) })
  }
  const cursor = async (): Promise<string> => (await m.database.sql`select last_sequence::text as s
    from subscription_cursors where subscription_id = ${id} and seller_id = 1`)[0].s
  const before = await cursor()
  await m.place([{ orderId: 8804, seller: 1 }, { orderId: 8805, seller: 1 }])
  // The two placements go to the seller's notifications (a subscription of its own, not full); none to the endpoint.
  t.same(await dispatchEvents(m.database.db), { queued: 2, busy: 0, full: [id] }, 'nothing queued at the cap')
  t.equal(await pending(m, id), MAX_PENDING_DELIVERIES, 'none for the endpoint')
  t.equal(await cursor(), before, 'the cursor stays: the events wait in the log')

  // The queue drains by one: the first new placement fits; by two more: the other, and there is room for one.
  const drain = async (n: number): Promise<void> => {
    await m.database.sql`update deliveries set status = 'DELIVERED'
      where id in (select id from deliveries where subscription_id = ${id} and status = 'PENDING' order by id limit ${n})`
  }
  await drain(1)
  t.same(await dispatchEvents(m.database.db), { queued: 1, busy: 0, full: [id] })
  await drain(2)
  t.same(await dispatchEvents(m.database.db), { queued: 1, busy: 0, full: [] })
  const [counter] = await m.database.sql`select last_sequence::text as s from seller_event_counters where seller_id = 1`
  t.equal(await cursor(), counter.s, 'caught up, in order')
  t.equal(await pending(m, id), MAX_PENDING_DELIVERIES - 1)

  // A replay after a sequence queues what fits and says where to continue; a test event goes past the cap.
  const partial = await m.webhooks(1, 'POST', `/${id}/replay`, { after: '0' })
  t.same([partial.status, partial.json.data], [200, { queued: 1, through: events[0].sequence }])
  t.equal((await m.webhooks(1, 'POST', `/${id}/test`)).status, 200, 'a test event goes past the cap')
  t.equal(await pending(m, id), MAX_PENDING_DELIVERIES + 1)
})

t.test('a claim never sent (a killed worker) costs no attempt: its lease ends, attempt 1 is sent and logged', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  let secret = ''
  const receiver = await verifyingReceiver(t, () => [secret])
  const created = await m.webhooks(1, 'POST', '', { url: receiver.url })
  secret = created.json.data.secret
  await m.place([{ orderId: 8901, seller: 1 }])
  const id = created.json.data.id
  await dispatchEvents(m.database.db)
  // The endpoint's delivery and the seller's notification of the placement: one each.
  const claimed = await claimDeliveries(m.database.db, 10, 60_000)
  t.same(claimed.map((c) => c.kind).sort(), ['notify-seller', 'seller-webhook'])
  t.same(claimed.map((c) => c.attempt), [1, 1])
  t.same(await claimDeliveries(m.database.db, 10, 60_000), [], 'leased: not claimed twice')
  const [held] = await m.database.sql`select attempts, leased_until > now() as leased from deliveries where subscription_id = ${id}`
  t.same(held, { attempts: 0, leased: true }, 'the claim counted nothing')
  // The worker dies: nothing is recorded, nothing released. Its lease ends.
  await m.database.sql`update deliveries set leased_until = now() - interval '1 second'`
  await m.deliverer()
  await eventually(t, 'delivered', () => receiver.delivered.length === 1)
  await allRecorded(t, m)
  const attempts = await m.database.sql`select s.kind, a.attempt, a.succeeded from delivery_attempts a
    join subscriptions s on s.id = a.subscription_id order by s.kind::text`
  t.same(attempts, ['notify-seller', 'seller-webhook'].map((kind) => ({ kind, attempt: 1, succeeded: true })),
    'attempt 1 in the log, none lost')
  const [row] = await m.database.sql`select attempts, leased_until from deliveries where subscription_id = ${id}`
  t.same(row, { attempts: 1, leased_until: null }, 'the delivery\'s attempts match the log, the lease cleared')
})

t.test('a rotation between claim and send: the attempt carries the new secret\'s signature', async (t: Test) => {
  const m = await webhookMarket(t, PRIVATE)
  let secrets: string[] = []
  const receiver = await verifyingReceiver(t, () => secrets)
  const created = await m.webhooks(1, 'POST', '', { url: receiver.url })
  const id = created.json.data.id
  secrets = [created.json.data.secret]
  // The deliverer's claim returns only after the secret is rotated (its statements pass through; the claim
  // is the one that joins `due`).
  const dialect = new PgDialect()
  let rotated: Promise<void> | null = null
  const db = new Proxy(m.database.db, {
    get: (target, prop, receiver) => {
      if (prop !== 'execute') return Reflect.get(target, prop, receiver)
      return async (query: SQL) => {
        const rows = await target.execute(query)
        if (rows.length > 0 && dialect.sqlToQuery(query).sql.includes('from due join deliveries q')) {
          rotated ??= m.webhooks(1, 'POST', `/${id}/rotate-secret`).then((r) => { secrets = [r.json.data.secret] })
          await rotated
        }
        return rows
      }
    }
  }) as Db
  await m.deliverer({ db })
  await m.place([{ orderId: 9101, seller: 1 }])
  await eventually(t, 'the attempt', () => receiver.received.length === 1)
  await eventually(t, 'the rotation', () => secrets[0] !== created.json.data.secret)
  t.same(receiver.unverified, [], 'verified with the new secret alone')
  t.equal(receiver.delivered.length, 1)
  const header = String(receiver.received[0].headers['webhook-signature'])
  t.equal(header.split(' ').length, 2, 'two signatures: the new secret and the previous one, still valid')
})
