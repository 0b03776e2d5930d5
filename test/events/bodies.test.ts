import t from 'tap'
import { readEventBodies } from '../../src/events/event-body.js'
import { pruneEvents } from '../../src/events/prune-events.js'
import { recordSellerEvent } from '../../src/events/record-events.js'
import { eventLogProblems, eventMarket, type FeedEvent } from '../helpers/events.js'

/*
 * What a subscriber is sent (events/event-body.ts readEventBodies): each body is, byte for byte, the feed's
 * event read at the same moment — its own fields as at the event, its order as it is now — and a whole batch
 * is one statement however many events it holds.
 */

/** The body the feed's event makes: the contract's `{id, type, sequence, timestamp, data}`. */
const bodyOf = (e: FeedEvent): string => JSON.stringify({
  id: e.id,
  type: e.type,
  sequence: e.sequence,
  timestamp: e.timestamp,
  data: { order: e.order, previousStatus: e.previousStatus, reason: e.reason }
})

const key = (sellerId: number, sequence: string | number): string => `${sellerId}:${sequence}`

t.test('each body is the feed\'s event, field for field; its order as it is now; events not kept are absent', async (t) => {
  const m = await eventMarket(t)
  // A name that needs escaping: the body's text is PostgreSQL's, the feed's is re-serialised here.
  await m.database.sql`update retailers set name = ${'Quote " backslash \\ tab \t nl \n ünï 😀 \u2028 </script>'} where id = ${501}`
  await m.place([{ orderId: 1001, seller: 1, lines: 3 }, { orderId: 1002, seller: 1 }, { orderId: 2001, seller: 2 }])
  await m.sellerUpdate(1, [{ Order_id: 1002, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' }])
  await m.database.db.transaction((tx) => recordSellerEvent(tx, 1, 'webhook.test', 'ping'))
  const token = await m.token(1)
  const feed = (await m.follow(token)).events
  t.same(feed.map((e) => [e.sequence, e.type]), [['1', 'order.placed'], ['2', 'order.placed'], ['3', 'order.rejected'], ['4', 'webhook.test']])

  const asked = [...feed.map((e) => ({ sellerId: 1, sequence: e.sequence })), { sellerId: 2, sequence: 1 },
    // Not in any log: never recorded, or another seller's number.
    { sellerId: 1, sequence: '99' }, { sellerId: 2, sequence: 2 }, { sellerId: 7, sequence: 1 }]
  const bodies = await readEventBodies(m.database.db, asked)
  t.same([...bodies.keys()].sort(), ['1:1', '1:2', '1:3', '1:4', '2:1'], 'one body per event kept, nothing for the others')
  for (const e of feed) t.equal(bodies.get(key(1, e.sequence)), bodyOf(e), `event ${e.sequence}: the feed's, byte for byte`)
  t.equal(JSON.parse(bodies.get('1:4')!).data.order, null, 'an event of no order: order null')
  t.equal(JSON.parse(bodies.get('2:1')!).data.order.companyId, 2)
  t.same(await readEventBodies(m.database.db, []), new Map(), 'nothing asked, nothing read')
  t.same([...(await readEventBodies(m.database.db, [{ sellerId: 1, sequence: 1 }, { sellerId: 1, sequence: '1' }])).keys()], ['1:1'],
    'an event asked twice: one body')

  // Later the order moves and its retailer is renamed: the body sent now shows that, its own fields do not move.
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  const [{ retailer }] = await m.database.sql`select retailer_id as retailer from orders where id = 1001`
  await m.database.sql`update retailers set name = 'Renamed since' where id = ${retailer}`
  const now = await readEventBodies(m.database.db, [{ sellerId: 1, sequence: 1 }])
  const placed = JSON.parse(now.get('1:1')!)
  const before = JSON.parse(bodies.get('1:1')!)
  t.same({ ...placed, data: { ...placed.data, order: null } }, { ...before, data: { ...before.data, order: null } },
    'the event\'s own fields: as at the event')
  t.same([placed.data.order.orderStatus, placed.data.order.isActionable, placed.data.order.retailer.name],
    ['ORDER_ACCEPTED', true, 'Renamed since'], 'its order: as it is now')
  t.not(placed.data.order.updatedAt, before.data.order.updatedAt)
  const again = (await m.follow(token)).events
  t.equal(now.get('1:1'), bodyOf(again[0]!), 'still the feed\'s event, read now')

  t.same(await eventLogProblems(m.database.sql), [])
  // An order that is no longer shown (soft-deleted): order null, the event is still sent. An event past the
  // retention is gone: absent.
  await m.database.sql`update orders set is_deleted = true where id = 1002`
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days' where seller_id = 1 and sequence = 1`
  await pruneEvents(m.database.db, 30)
  const late = await readEventBodies(m.database.db, [1, 2, 3].map((sequence) => ({ sellerId: 1, sequence })))
  t.same([...late.keys()].sort(), ['1:2', '1:3'], 'the pruned event is absent')
  t.same([JSON.parse(late.get('1:2')!).data.order, JSON.parse(late.get('1:3')!).data.order], [null, null])
  t.equal(JSON.parse(late.get('1:3')!).data.reason, 'Out of stock')
})

t.test('a batch of 500 events is read in one statement', async (t) => {
  const statements: string[] = []
  const m = await eventMarket(t, {}, { onQuery: (q) => statements.push(q) })
  const ids = Array.from({ length: 250 }, (_, i) => 1001 + i)
  await m.place(ids.map((orderId) => ({ orderId, seller: 1, lines: 1 + (orderId % 3) })))
  await m.sellerUpdate(1, ids.map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
  const token = await m.token(1)
  const feed = (await m.follow(token)).events
  t.equal(feed.length, 500)

  statements.length = 0
  const bodies = await readEventBodies(m.database.db, feed.map((e) => ({ sellerId: 1, sequence: e.sequence })))
  t.equal(statements.length, 1, 'one statement for the whole batch')
  t.equal(bodies.size, 500)
  for (const e of feed) {
    if (bodies.get(key(1, e.sequence)) !== bodyOf(e)) t.fail(`event ${e.sequence} differs from the feed's`)
  }
  // The placement and the acceptance of an order show the same order: as it is now.
  t.equal(JSON.parse(bodies.get('1:1')!).data.order.orderStatus, 'ORDER_ACCEPTED')
  t.equal(JSON.parse(bodies.get('1:1')!).data.order.orderId, JSON.parse(bodies.get('1:251')!).data.order.orderId)
  t.equal(JSON.stringify(JSON.parse(bodies.get('1:1')!).data.order), JSON.stringify(JSON.parse(bodies.get('1:251')!).data.order))
})
