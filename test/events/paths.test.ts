import t, { type Test } from 'tap'
import { eventLogProblems, eventMarket, orderRow, ordersRead, type EventMarket, type FeedEvent } from '../helpers/events.js'
import { startTestWorker } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { seedDemo } from '../helpers/fixtures.js'
import { PLATFORM_ORDERS_PATH, STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'
import { AUTO_REJECT_REASON } from '../../src/status-update/texts.js'
import { testDatabase } from '../helpers/build.js'

/*
 * Every path that changes an order records its event in the same transaction, over real HTTP (and the
 * real worker for the auto-rejection): the platform's placements and transitions, the seller's status
 * update, the auto-rejection. Each event keeps its own fields as at the event (its type, the status it
 * moved its order to, the previous one, the reason) and carries its order as the orders read shows it now;
 * nothing that did not change an order records one.
 */

/**
 * The parts of events a test compares: the event's own fields, with `status` (the status the event moved its
 * order to: stored with the event, not in the feed, whose order shows its status now) and the order's id.
 */
async function briefs (m: EventMarket, seller: number, events: FeedEvent[]) {
  const own = new Map((await m.database.sql`select sequence::text as s, status::text from seller_events where seller_id = ${seller}`)
    .map((r) => [r.s as string, r.status as string | null]))
  return events.map((e) => ({
    type: e.type,
    sequence: e.sequence,
    orderId: e.order?.orderId,
    status: own.get(e.sequence) ?? null,
    previousStatus: e.previousStatus,
    reason: e.reason
  }))
}

/** Each event's order is, byte for byte, the node the orders read answers for that order now. */
async function ordersAsNow (t: Test, m: EventMarket, token: string, events: FeedEvent[]): Promise<void> {
  const read = await ordersRead(m, token)
  for (const e of events) {
    t.equal(JSON.stringify(e.order), read.get(e.order!.orderId), `event ${e.sequence}: order ${e.order!.orderId} as the orders read shows it now`)
  }
}

/** Seller 1's first offer with price slabs and its SKU with selling units: the order's lists are not all empty. */
async function richCatalogue (m: EventMarket): Promise<void> {
  await m.database.sql`update offers set price_range = '[{"minQuantity": 1, "maxQuantity": 9, "price": 99.5}, {"minQuantity": 10, "maxQuantity": null, "price": "95.25"}]'
    where id = 100`
  await m.database.sql`insert into selling_units (id, sku_id, name, multiplier, is_base_unit)
    values (9001, 100, 'Pack', 1, true), (9002, 100, 'Case', 12, false)`
}

t.test('placement records order.placed once per order, with the order exactly as the orders read shows it', async (t) => {
  const m = await eventMarket(t)
  await richCatalogue(m)
  await m.place([
    { orderId: 1003, seller: 1, lines: 2, paymentMode: 'ONLINE_PAID' }, { orderId: 1001, seller: 1 },
    { orderId: 2001, seller: 2 }, { orderId: 1002, seller: 1, paymentMode: 'PREPAID', storeIndex: 1 }
  ])
  const token = await m.token(1)
  const page = await m.feed(token)
  t.same(await briefs(m, 1, page.data!.nodes), [1001, 1002, 1003].map((id, i) => ({
    type: 'order.placed',
    sequence: String(i + 1),
    orderId: String(id),
    status: 'ORDER_PLACED',
    previousStatus: null,
    reason: null
  })), 'seller 1: its three orders, numbered 1, 2, 3 in orderId order')
  t.same(page.data!.pageInfo, { hasNext: false, endCursor: '3', limit: 20 })
  t.same(page.data!.nodes.map((e) => e.id), ['evt_1_1', 'evt_1_2', 'evt_1_3'])
  t.ok(page.data!.nodes.every((e) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(e.timestamp)), 'ISO-8601 UTC timestamps')
  t.ok(page.data!.nodes.every((e) => e.order!.orderStatus === 'ORDER_PLACED' && e.order!.isActionable === true))
  await ordersAsNow(t, m, token, page.data!.nodes)
  const rich = page.data!.nodes[2]!.order!
  t.same(rich.orderItems[0].sku.offers[0].priceRange,
    [{ minQuantity: 1, maxQuantity: 9, price: 99.5 }, { minQuantity: 10, maxQuantity: null, price: 95.25 }])
  t.equal(rich.orderItems[0].sku.itemSellingUnits.length, 2)
  const [stored] = await m.database.sql`select * from seller_events where seller_id = 1 and sequence = 3`
  t.same(Object.keys(stored).sort(), ['occurred_at', 'order_id', 'previous_status', 'reason', 'seller_id', 'sequence', 'status',
    'store_id', 'traceparent', 'type'], 'a thin event: its own fields, no copy of the order')
  t.same(await briefs(m, 2, (await m.feed(await m.token(2))).data!.nodes), [{
    type: 'order.placed', sequence: '1', orderId: '2001', status: 'ORDER_PLACED', previousStatus: null, reason: null
  }], 'seller 2: its own log, from 1')

  // The same orders again are unchanged: nothing new. A refused row records nothing; its neighbour does.
  const again = await m.call('POST', PLATFORM_ORDERS_PATH, [orderRow({ orderId: 1001, seller: 1 }), { ...orderRow({ orderId: 1004, seller: 1 }), storeId: 999 },
    orderRow({ orderId: 1005, seller: 1 })])
  t.match(again.json.data, { unchanged: 1, inserted: 1, failed: 1 })
  t.same((await m.follow(token)).events.map((e) => [e.sequence, e.order!.orderId]), [['1', '1001'], ['2', '1002'], ['3', '1003'], ['4', '1005']])
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('the seller\'s status update records each change in item order; retries, refusals and others\' orders record nothing', async (t) => {
  const m = await eventMarket(t)
  await m.place([1, 2, 3, 4].map((n) => ({ orderId: 1000 + n, seller: 1 })))
  const items = [
    { Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' },
    { Order_id: 1002, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: '  Out of stock ' },
    { Order_id: '1003', Order_Status: 'ORDER_ACCEPTED' },
    { Order_id: 1003, Order_Status: 'ORDER_COMPLETED_BY_SELLER' },
    { Order_id: 1004, Order_Status: 'ORDER_COMPLETED_BY_SELLER' },
    { Order_id: 9999, Order_Status: 'ORDER_ACCEPTED' },
    { Order_id: 1004, Order_Status: 'ORDER_REJECTED_BY_SELLER' }
  ]
  const first = await m.sellerUpdate(1, items)
  t.match(first.data, { successful: 4, failed: 3 })
  const token = await m.token(1)
  const after = '4'
  const { events, endCursor } = await m.follow(token, after)
  t.same(await briefs(m, 1, events), [
    { type: 'order.accepted', sequence: '5', orderId: '1001', status: 'ORDER_ACCEPTED', previousStatus: 'ORDER_PLACED', reason: null },
    { type: 'order.rejected', sequence: '6', orderId: '1002', status: 'ORDER_REJECTED_BY_SELLER', previousStatus: 'ORDER_PLACED', reason: 'Out of stock' },
    // One order moved twice in one batch: each event has its own status and previous status…
    { type: 'order.accepted', sequence: '7', orderId: '1003', status: 'ORDER_ACCEPTED', previousStatus: 'ORDER_PLACED', reason: null },
    { type: 'order.completed', sequence: '8', orderId: '1003', status: 'ORDER_COMPLETED_BY_SELLER', previousStatus: 'ORDER_ACCEPTED', reason: null }
  ])
  // … and both show the order as it is now: completed.
  t.same(events.map((e) => [e.order!.orderStatus, e.order!.isActionable]), [
    ['ORDER_ACCEPTED', true], ['ORDER_REJECTED_BY_SELLER', false], ['ORDER_COMPLETED_BY_SELLER', false], ['ORDER_COMPLETED_BY_SELLER', false]
  ])
  await ordersAsNow(t, m, token, events)
  t.equal(endCursor, '8')
  // A retry changes nothing and records nothing (1003, completed, cannot be accepted again); another
  // seller's key finds no order.
  t.match((await m.sellerUpdate(1, items)).data, { successful: 3, failed: 4, unchangedOrderIds: [1001, 1002, 1003] })
  t.match((await m.sellerUpdate(2, [{ Order_id: 1004, Order_Status: 'ORDER_ACCEPTED' }])).data, { failed: 1, errors: [{ code: 'ORDER_NOT_FOUND' }] })
  t.same((await m.feed(token, { after: endCursor })).data!.nodes, [], 'nothing after 8')
  t.same(await m.database.sql`select seller_id, last_sequence::int from seller_event_counters order by 1`, [{ seller_id: 1, last_sequence: 8 }])
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('the platform\'s transitions record order.cancelled (with its reason) and order.delivered in each seller\'s log', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1 }, { orderId: 1002, seller: 1, paymentMode: 'ONLINE_PAID' }, { orderId: 2001, seller: 2 }, { orderId: 4001, seller: 4 }])
  await m.sellerUpdate(1, [{ Order_id: 1002, Order_Status: 'ORDER_ACCEPTED' }])
  await m.sellerUpdate(2, [{ Order_id: 2001, Order_Status: 'ORDER_ACCEPTED' }])
  const moved = await m.platformUpdate([
    { Order_id: 4001, Order_Status: 'CANCELLED' },
    { Order_id: 2001, Order_Status: 'CANCELLED', reason: 'Customer cancelled' },
    { Order_id: 1002, Order_Status: 'DELIVERED' },
    { Order_id: 1001, Order_Status: 'DELIVERED' },
    { Order_id: 1001, Order_Status: 'CANCELLED', reason: 'Out of delivery area' }
  ])
  t.match(moved.data, { successful: 4, failed: 1, errors: [{ index: 3, code: 'TRANSITION_NOT_ALLOWED' }] })
  // The seller completes a delivered order.
  await m.sellerUpdate(1, [{ Order_id: 1002, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }])
  const one = (await m.follow(await m.token(1))).events
  t.same((await briefs(m, 1, one)).slice(2), [
    { type: 'order.accepted', sequence: '3', orderId: '1002', status: 'ORDER_ACCEPTED', previousStatus: 'ORDER_PLACED', reason: null },
    { type: 'order.delivered', sequence: '4', orderId: '1002', status: 'DELIVERED', previousStatus: 'ORDER_ACCEPTED', reason: null },
    { type: 'order.cancelled', sequence: '5', orderId: '1001', status: 'CANCELLED', previousStatus: 'ORDER_PLACED', reason: 'Out of delivery area' },
    { type: 'order.completed', sequence: '6', orderId: '1002', status: 'ORDER_COMPLETED_BY_SELLER', previousStatus: 'DELIVERED', reason: null }
  ])
  t.same(one.map((e) => [e.order!.orderId, e.order!.orderStatus]), [['1001', 'CANCELLED'], ['1002', 'ORDER_COMPLETED_BY_SELLER'],
    ['1002', 'ORDER_COMPLETED_BY_SELLER'], ['1002', 'ORDER_COMPLETED_BY_SELLER'], ['1001', 'CANCELLED'], ['1002', 'ORDER_COMPLETED_BY_SELLER']],
  'every event of an order shows it as it is now')
  const two = (await m.follow(await m.token(2))).events
  t.same(await briefs(m, 2, two), [
    { type: 'order.placed', sequence: '1', orderId: '2001', status: 'ORDER_PLACED', previousStatus: null, reason: null },
    { type: 'order.accepted', sequence: '2', orderId: '2001', status: 'ORDER_ACCEPTED', previousStatus: 'ORDER_PLACED', reason: null },
    { type: 'order.cancelled', sequence: '3', orderId: '2001', status: 'CANCELLED', previousStatus: 'ORDER_ACCEPTED', reason: 'Customer cancelled' }
  ])
  t.ok(two.every((e) => e.order!.orderStatus === 'CANCELLED' && e.order!.isActionable === false))
  t.same((await m.follow(await m.token(4))).events.map((e) => [e.sequence, e.type]), [['1', 'order.placed'], ['2', 'order.cancelled']])
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('the auto-rejection (the real worker) records order.rejected with its reason; an order accepted in time does not', async (t) => {
  const m = await eventMarket(t, { AUTO_REJECT_AFTER_MS: '800' })
  // Sellers 1 and 4 reject automatically; 2 does not.
  await m.place([{ orderId: 1001, seller: 1 }, { orderId: 1002, seller: 1 }, { orderId: 2001, seller: 2 }])
  await m.sellerUpdate(1, [{ Order_id: 1002, Order_Status: 'ORDER_ACCEPTED' }])
  // The worker only now: running from the start, it would reject 1001 (even 1002) before the accept was
  // recorded whenever placing and accepting took longer than 800 ms, as they can on a loaded machine.
  await startTestWorker(t, m.database, { AUTO_REJECT_AFTER_MS: '800' })
  await eventually(t, 'auto-rejected', async () =>
    (await m.database.sql`select status from orders where id = 1001`)[0].status === 'ORDER_REJECTED_BY_SELLER')
  // Drained: no auto-rejection left queued or running (had 1002's accept left its job, due with 1001's, the
  // worker runs it before the queue is empty), so the log below is all there will be.
  await eventually(t, 'no auto-rejection queued', async () => (await m.database.sql`select count(*)::int as n
    from graphile_worker.jobs where task_identifier = 'auto-reject'`)[0].n === 0)
  const token = await m.token(1)
  const { events } = await m.follow(token)
  t.same(await briefs(m, 1, events), [
    { type: 'order.placed', sequence: '1', orderId: '1001', status: 'ORDER_PLACED', previousStatus: null, reason: null },
    { type: 'order.placed', sequence: '2', orderId: '1002', status: 'ORDER_PLACED', previousStatus: null, reason: null },
    { type: 'order.accepted', sequence: '3', orderId: '1002', status: 'ORDER_ACCEPTED', previousStatus: 'ORDER_PLACED', reason: null },
    { type: 'order.rejected', sequence: '4', orderId: '1001', status: 'ORDER_REJECTED_BY_SELLER', previousStatus: 'ORDER_PLACED', reason: AUTO_REJECT_REASON }
  ])
  await ordersAsNow(t, m, token, events)
  t.same((await m.follow(await m.token(2))).events.map((e) => e.type), ['order.placed'], 'seller 2 rejects nothing by itself')
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('an order whose write fails records no event; the rest of its batch does, with no gap', async (t) => {
  const m = await eventMarket(t)
  await m.place([1, 2, 3].map((n) => ({ orderId: 1000 + n, seller: 1 })))
  // The history row of order 1002 cannot be written: its set-based write fails, then its half, then it alone.
  await m.database.sql`alter table order_status_history add constraint no_1002 check (order_id <> 1002) not valid`
  const res = await m.sellerUpdate(1, [1001, 1002, 1003].map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
  t.match(res.data, { successful: 2, failed: 1, errors: [{ orderId: 1002, code: 'ORDER_NOT_UPDATED' }] })
  t.same((await m.follow(await m.token(1), '3')).events.map((e) => [e.sequence, e.type, e.order!.orderId]),
    [['4', 'order.accepted', '1001'], ['5', 'order.accepted', '1003']])
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('when the event cannot be written, the change is not made either', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1 }, { orderId: 1002, seller: 1 }])
  await m.database.sql`alter table seller_events add constraint no_more_events check (sequence <= 2) not valid`
  const res = await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }, { Order_id: 1002, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'x' }])
  t.match(res.data, { successful: 0, failed: 2, errors: [{ code: 'ORDER_NOT_UPDATED' }, { code: 'ORDER_NOT_UPDATED' }] }, 'the whole batch is reported not updated')
  t.same((await m.database.sql`select status from orders order by id`).map((r) => r.status), ['ORDER_PLACED', 'ORDER_PLACED'], 'no change without its event')
  t.same((await m.database.sql`select count(*)::int as n from order_status_history where source = 'api'`)[0].n, 0)
  t.same((await m.database.sql`select last_sequence::int from seller_event_counters`)[0].last_sequence, 2, 'the counter rolled back too')
  const placed = await m.call('POST', PLATFORM_ORDERS_PATH, [orderRow({ orderId: 1003, seller: 1 })])
  t.ok(placed.status >= 500, `a placement whose event cannot be written fails whole (${placed.status})`)
  t.same((await m.database.sql`select count(*)::int as n from orders where id = 1003`)[0].n, 0, 'and is not placed')
  await m.database.sql`alter table seller_events drop constraint no_more_events`
  t.match((await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])).data, { successful: 1 })
  t.same((await m.follow(await m.token(1))).events.map((e) => e.sequence), ['1', '2', '3'], 'the next event is 3: no number was lost')
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('the event statement is prepared per connection: with the service\'s connections terminated, the next changes still record their events', async (t) => {
  const m = await eventMarket(t)
  // The statement prepared on the service's connection(s) before they go; a new connection must prepare it again.
  for (const id of [1001, 1002, 1003]) await m.place([{ orderId: id, seller: 1 }])
  t.match((await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])).data, { successful: 1 })
  const killed = await m.database.sql`select pg_terminate_backend(pid) as done from pg_stat_activity
    where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`
  t.ok(killed.length > 0, `${killed.length} of the service's backends terminated`)
  // A request may meet a connection the pool has not yet seen close: a clean 503, and a retry succeeds.
  const retried = async (send: () => Promise<{ status: number, json: any }>): Promise<any> => {
    for (let attempt = 1; ; attempt++) {
      const res = await send()
      if (res.status === 200 || attempt === 3) return res
      t.equal(res.status, 503, `attempt ${attempt}: a clean 503, not a failure of the prepared statement`)
    }
  }
  t.match((await retried(() => m.call('POST', PLATFORM_ORDERS_PATH, [orderRow({ orderId: 1004, seller: 1 })]))).json.data, { inserted: 1 })
  const key = await m.apiKey(1)
  const updated = await retried(async () => {
    const res = await m.app.inject({
      method: 'POST',
      url: STATUS_UPDATE_PATH,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ order_status: [{ Order_id: 1002, Order_Status: 'ORDER_ACCEPTED' }, { Order_id: 1004, Order_Status: 'ORDER_ACCEPTED' }] })
    })
    return { status: res.statusCode, json: res.json() }
  })
  t.match(updated.json.data, { successful: 2 })
  const token = await m.token(1)
  const { events } = await m.follow(token)
  t.same(events.map((e) => [e.sequence, e.type, e.order?.orderId]), [
    ['1', 'order.placed', '1001'], ['2', 'order.placed', '1002'], ['3', 'order.placed', '1003'], ['4', 'order.accepted', '1001'],
    ['5', 'order.placed', '1004'], ['6', 'order.accepted', '1002'], ['7', 'order.accepted', '1004']
  ], 'every change after the termination has its event, numbered on with no gap')
  await ordersAsNow(t, m, token, events)
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('the demo seed is history: it records no events', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 60)
  t.same((await database.sql`select count(*)::int as n from seller_events`)[0].n, 0)
  t.same(await eventLogProblems(database.sql), [])
})
