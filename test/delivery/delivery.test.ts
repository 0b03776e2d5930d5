import t, { type Test } from 'tap'
import type { Delivered } from '../helpers/webhooks.js'
import { allRecorded, verifyingReceiver, webhookMarket } from '../helpers/webhooks.js'
import { eventually } from '../helpers/eventually.js'
import { holdInTransaction } from '../helpers/held-transaction.js'
import { pruneDeliveryLog } from '../../src/events/prune-events.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'

/*
 * Delivery to the seller's own endpoints, end to end: platform placements and seller status changes are
 * recorded in the log, the deliverer (woken by the log's NOTIFY) sends them to a real receiver that
 * verifies each with the standardwebhooks package, per order in order, with the feed's exact event JSON.
 */

/** For every order: its events arrived in sequence order, each first delivered after the one before it. */
function outOfOrder (delivered: Delivered[]): string[] {
  const firstAt = new Map<string, Delivered>()
  for (const d of delivered) if (!firstAt.has(d.id)) firstAt.set(d.id, d)
  const byOrder = new Map<string, Delivered[]>()
  for (const d of firstAt.values()) {
    if (d.orderId === null) continue
    byOrder.set(d.orderId, [...(byOrder.get(d.orderId) ?? []), d])
  }
  const problems: string[] = []
  for (const [order, events] of byOrder) {
    const inArrival = events.map((e) => e.sequence)
    const sorted = [...inArrival].sort((a, b) => a - b)
    if (inArrival.join() !== sorted.join()) problems.push(`order ${order}: ${inArrival.join()}`)
  }
  return problems
}

async function placeAndMove (m: Awaited<ReturnType<typeof webhookMarket>>, from: number, n: number): Promise<void> {
  const orders = Array.from({ length: n }, (_, i) => ({
    orderId: from + i, seller: 1, storeIndex: i % 2, lines: 1 + (i % 3)
  }))
  await m.place(orders)
  await m.sellerUpdate(1, Array.from({ length: n / 2 }, (_, i) => ({ Order_id: from + i, Order_Status: 'ORDER_ACCEPTED' })))
  await m.sellerUpdate(1, Array.from({ length: n / 4 }, (_, i) => ({ Order_id: from + i, Order_Status: 'ORDER_COMPLETED_BY_SELLER' })))
  await m.platformUpdate(Array.from({ length: n / 4 }, (_, i) => ({ Order_id: from + n / 2 + i, Order_Status: 'CANCELLED' })))
}

t.test('every event is delivered, signed, as the feed shows it, per order in order; types filter; other sellers not', async (t: Test) => {
  const m = await webhookMarket(t)
  let secret = ''
  const all = await verifyingReceiver(t, () => [secret])
  let acceptedSecret = ''
  const accepted = await verifyingReceiver(t, () => [acceptedSecret])
  const created = await m.webhooks(1, 'POST', '', { url: `${all.url}/hook`, description: 'ERP' })
  t.equal(created.status, 201)
  t.match(created.json, { statusCode: 201, data: { url: `${all.url}/hook`, types: null, status: 'ENABLED', description: 'ERP' } })
  secret = created.json.data.secret
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ + base64 of 32 bytes')
  const filtered = await m.webhooks(1, 'POST', '', { url: accepted.url, types: ['order.accepted'] })
  acceptedSecret = filtered.json.data.secret
  await m.deliverer()

  await placeAndMove(m, 5001, 40)
  await m.place([{ orderId: 9001, seller: 2 }])
  const token = await m.token(1)
  const feed = (await m.follow(token)).events
  t.equal(feed.length, 40 + 20 + 10 + 10)
  await eventually(t, () => `every event at the catch-all endpoint (${all.delivered.length} of ${feed.length})`, () => all.delivered.length >= feed.length)
  await eventually(t, () => `the accepted at the filtered endpoint (${accepted.delivered.length} of 20)`, () => accepted.delivered.length >= 20)
  t.same(all.unverified, [], 'every delivery verifies with the standardwebhooks package')
  t.same(accepted.unverified, [])
  t.same(outOfOrder(all.delivered), [], 'per order, in order')
  const bySequence = new Map(all.delivered.map((d) => [d.sequence, d]))
  t.equal(bySequence.size, feed.length, 'each event once (no retries were needed)')
  // The event's own fields are as at the event; its order is the order as it is when the attempt starts. The
  // feed was read after the last change: an order's last event was sent after that change too, so its body's
  // order is the feed's; an earlier event may have gone out before a later change (the "as now" is shown below).
  const orderOf = (e: (typeof feed)[number]): string => e.order?.orderId ?? 'none'
  t.notOk(feed.some((e) => e.order === null), 'every event\'s order is there')
  const lastOfOrder = new Map(feed.map((e) => [orderOf(e), e.sequence]))
  for (const e of feed) {
    const d = bySequence.get(Number(e.sequence))!
    t.equal(d.id, e.id, 'webhook-id is the event id')
    const { order, ...data } = d.body.data
    t.same({ ...d.body, data }, {
      id: e.id,
      type: e.type,
      sequence: e.sequence,
      timestamp: e.timestamp,
      data: { previousStatus: e.previousStatus, reason: e.reason }
    }, `event ${e.sequence}: the feed's event`)
    if (lastOfOrder.get(orderOf(e)) === e.sequence) t.same(order, e.order, `event ${e.sequence}: the order as now`)
    else t.equal(order.orderId, orderOf(e), `event ${e.sequence}: its order`)
  }
  t.same([...new Set(accepted.delivered.map((d) => d.type))], ['order.accepted'])
  t.notOk(all.delivered.some((d) => d.orderId === '9001'), 'another seller\'s event is not sent')

  await allRecorded(t, m)
  const log = await m.webhooks(1, 'GET', `/${created.json.data.id}/deliveries?limit=100`)
  t.equal(log.status, 200)
  t.equal(log.json.data.attempts.length, 80)
  t.match(log.json.data.attempts[0], { attempt: 1, succeeded: true, httpStatus: 200, error: null, answer: '{"ok":true}' })
  t.equal(log.json.data.pageInfo.hasNext, false)

  // Retention: finished deliveries and attempts older than EVENT_RETENTION_DAYS go, the endpoints' and the
  // notifications' alike; a pending one stays.
  await m.database.sql`update delivery_attempts set attempted_at = now() - interval '31 days' where sequence <= 10`
  await m.database.sql`update deliveries set finished_at = now() - interval '31 days' where sequence <= 10`
  await m.database.sql`update deliveries set status = 'PENDING', next_attempt_at = now() + interval '1 day'
    where sequence = 11`
  const [old] = await m.database.sql`select
    (select count(*)::int from delivery_attempts where sequence <= 10) as attempts,
    (select count(*)::int from delivery_attempts where sequence <= 10 and subscription_id = ${created.json.data.id}) as endpoint,
    (select count(*)::int from deliveries where sequence <= 10) as deliveries,
    (select count(*)::int from deliveries d join subscriptions s on s.id = d.subscription_id
      where d.seller_id = 1 and d.sequence <= 10 and s.kind = 'notify-seller') as notified`
  t.equal(old.endpoint, 10, 'the endpoint\'s ten attempts')
  t.equal(old.notified, 10, 'and the seller\'s ten notifications')
  t.equal(await pruneDeliveryLog(m.database.db, 30), old.attempts + old.deliveries)
  const kept = await m.database.sql`select status from deliveries where sequence = 11`
  t.equal(kept.length, 2, 'the endpoint\'s and the seller notification\'s')
  t.same([...new Set(kept.map((r) => r.status))], ['PENDING'], 'pending kept')
  t.equal(await pruneDeliveryLog(m.database.db, 30), 0)

  // The order as it is now, not as at the event: a change after an event shows in that event sent again.
  const placed = feed.find((e) => e.type === 'order.placed' && orderOf(e) === '5039')!
  t.equal(placed.order?.orderStatus, 'ORDER_PLACED', 'never moved so far')
  await m.sellerUpdate(1, [{ Order_id: 5039, Order_Status: 'ORDER_ACCEPTED' }])
  const before = all.delivered.length
  const replayed = await m.webhooks(1, 'POST', `/${created.json.data.id}/replay`, { eventIds: [placed.id] })
  t.equal(replayed.status, 200)
  await eventually(t, 'the replayed placement', () => all.delivered.slice(before).some((d) => d.id === placed.id))
  const again = all.delivered.slice(before).find((d) => d.id === placed.id)!
  t.match(again.body, { type: 'order.placed', sequence: placed.sequence, data: { previousStatus: null, order: { orderId: '5039' } } })
  t.equal(again.body.data.order.orderStatus, 'ORDER_ACCEPTED', 'the order as it is now')
})

t.test('a test event, a secret rotation (both secrets sign), a replay', async (t: Test) => {
  const m = await webhookMarket(t)
  let secrets: string[] = []
  const receiver = await verifyingReceiver(t, () => secrets)
  const created = await m.webhooks(1, 'POST', '', { url: receiver.url })
  const id = created.json.data.id
  const first = created.json.data.secret
  secrets = [first]
  await m.deliverer()
  const test = await m.webhooks(1, 'POST', `/${id}/test`)
  t.equal(test.status, 200)
  await eventually(t, 'the test event', () => receiver.delivered.length === 1)
  t.match(receiver.delivered[0], { type: 'webhook.test', id: test.json.data.eventId, orderId: null })

  const rotated = await m.webhooks(1, 'POST', `/${id}/rotate-secret`)
  t.equal(rotated.status, 200)
  const second = rotated.json.data.secret
  t.not(second, first)
  // Each secret alone verifies the next delivery: the signature header carries one v1 entry for each.
  secrets = [second]
  await m.place([{ orderId: 7001, seller: 1 }])
  await eventually(t, 'a delivery signed with the new secret', () => receiver.delivered.length === 2)
  secrets = [first]
  await m.place([{ orderId: 7002, seller: 1 }])
  await eventually(t, 'a delivery signed with the old secret too', () => receiver.delivered.length === 3)
  t.same(receiver.unverified, [])

  const replay = await m.webhooks(1, 'POST', `/${id}/replay`, { eventIds: [receiver.delivered[1].id] })
  t.same(replay.json.data, { queued: 1, through: String(receiver.delivered[1].sequence) })
  await eventually(t, 'the replayed event', () => receiver.delivered.length === 4)
  t.equal(receiver.delivered[3].id, receiver.delivered[1].id, 'the same webhook-id')
  const unknown = await m.webhooks(1, 'POST', `/${id}/replay`, { eventIds: ['evt_2_1'] })
  t.equal(unknown.status, 400)
  t.equal(unknown.json.code, 'EVENT_NOT_FOUND')
})

t.test('dispatch is not held off by the key-share lock an attempt row\'s foreign key takes on its endpoint', async (t: Test) => {
  const m = await webhookMarket(t)
  const receiver = await verifyingReceiver(t, () => [])
  const created = await m.webhooks(1, 'POST', '', { url: receiver.url })
  await m.place([{ orderId: 7101, seller: 1 }, { orderId: 7102, seller: 1 }])
  // What inserting an attempt does to its endpoint's row while its transaction runs.
  const lock = await holdInTransaction(m.database.sql, (sql) =>
    sql`select 1 from subscriptions where id = ${created.json.data.id} for key share`)
  // Two for the endpoint, and two for the seller's notifications (a placement tells the seller alone).
  t.same(await dispatchEvents(m.database.db), { queued: 4, busy: 0, full: [] }, 'queued while the lock is held')
  t.same(await m.database.sql`select count(*)::int as n from deliveries where subscription_id = ${created.json.data.id}`,
    [{ n: 2 }], 'the endpoint\'s two')
  await lock.release()
})
