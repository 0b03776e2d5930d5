import t, { type Test } from 'tap'
import pino from 'pino'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { pruneEvents } from '../../src/events/prune-events.js'
import { EVENT_TYPES } from '../../src/events/event-types.js'
import { TASKS } from '../../src/effects/jobs.js'
import { effectsTasks } from '../../src/worker-tasks.js'
import { testConfig } from '../helpers/build.js'
import { credential } from '../helpers/fixtures.js'
import { recordSellerEvent } from '../../src/events/record-events.js'
import { EVENTS_QUERY, eventLogProblems, eventMarket, ordersRead, type EventMarket, type FeedEvent } from '../helpers/events.js'

/*
 * The feed (GraphQL `events`) over HTTP: paging by cursor, the types filter, a credential narrowed to some
 * stores, one seller never seeing another's events, each event's own fields as at the event and its order as
 * it is now, retention and the cursor older than it, the cost, and the pass-through answering byte for byte
 * as the standard execution does.
 */

/** A log for seller 1 (and a little for 2): 30 placements, then acceptances, rejections, completions, cancellations. */
async function busyLog (m: EventMarket): Promise<void> {
  await m.database.sql`update retailers set name = ${'Quote " backslash \\ tab \t nl \n ünï 😀 \u2028 </script>'} where id = 501`
  await m.place(Array.from({ length: 30 }, (_, i) => ({
    orderId: 1001 + i, seller: 1, storeIndex: i % 2, lines: 1 + (i % 3)
  })))
  await m.place([{ orderId: 2001, seller: 2 }, { orderId: 2002, seller: 2 }])
  const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => 1001 + from + i)
  await m.sellerUpdate(1, ids(0, 14).map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
  await m.sellerUpdate(1, ids(15, 19).map((id) => ({ Order_id: id, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: `No stock ${id}` })))
  await m.sellerUpdate(1, ids(0, 4).map((id) => ({ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' })))
  await m.platformUpdate([...ids(5, 7), ...ids(20, 22)].map((id) => ({ Order_id: id, Order_Status: 'CANCELLED' })))
  await m.platformUpdate(ids(8, 9).map((id) => ({ Order_id: id, Order_Status: 'DELIVERED' })))
  await m.sellerUpdate(2, [{ Order_id: 2001, Order_Status: 'ORDER_ACCEPTED' }])
}
// 30 placed + 15 accepted + 5 rejected + 5 completed + 6 cancelled + 2 delivered.
const SELLER_1_EVENTS = 63

t.test('paging by cursor: limit, hasNext, endCursor; types; a page after the end', async (t) => {
  const m = await eventMarket(t)
  await busyLog(m)
  const token = await m.token(1)
  const all = (await m.follow(token)).events
  t.equal(all.length, SELLER_1_EVENTS)
  t.same(all.map((e) => e.sequence), Array.from({ length: SELLER_1_EVENTS }, (_, i) => String(i + 1)), 'every sequence once, in order')
  // Pages of 7: the same events, each page after the last one's endCursor.
  const walked: FeedEvent[] = []
  let after = '0'
  let pages = 0
  for (;;) {
    const page = (await m.feed(token, { after, limit: 7 })).data!
    pages++
    t.ok(page.nodes.length <= 7)
    t.equal(page.pageInfo.limit, 7)
    walked.push(...page.nodes)
    t.equal(page.pageInfo.endCursor, page.nodes.at(-1)?.sequence ?? after)
    after = page.pageInfo.endCursor
    if (!page.pageInfo.hasNext) break
  }
  t.equal(pages, Math.ceil(SELLER_1_EVENTS / 7))
  t.same(walked, all, 'pages of 7 give the same events')
  const first = (await m.feed(token)).data!
  t.same([first.nodes.length, first.pageInfo.limit, first.pageInfo.hasNext], [20, 20, true], 'default limit 20')
  const capped = (await m.feed(token, { limit: 150 })).data!
  t.same([capped.nodes.length, capped.pageInfo.limit], [SELLER_1_EVENTS, 100], 'above 100: cut to 100, and said')
  const end = (await m.feed(token, { after: String(SELLER_1_EVENTS) })).data!
  t.same(end, { pageInfo: { hasNext: false, endCursor: String(SELLER_1_EVENTS), limit: 20 }, nodes: [] }, 'after the end: empty, endCursor kept')
  const future = (await m.feed(token, { after: '9223372036854775807' })).data!
  t.same(future.nodes, [], 'a cursor past the end reads nothing (a replica may be a moment behind what a client saw)')

  // types: only those, in sequence order, with their own cursor walk.
  const rejected = (await m.follow(token, '0', { types: ['order.rejected'] })).events
  t.same(rejected.map((e) => e.reason), [1016, 1017, 1018, 1019, 1020].map((id) => `No stock ${id}`))
  const some = (await m.follow(token, '0', { types: ['order.cancelled', 'order.delivered', 'order.cancelled'] })).events
  t.same(some.map((e) => e.type), [...Array(6).fill('order.cancelled'), 'order.delivered', 'order.delivered'])
  t.same(some, all.filter((e) => e.type === 'order.cancelled' || e.type === 'order.delivered'))
  const typed = (await m.feed(token, { types: ['order.delivered'], limit: 1 })).data!
  t.same([typed.nodes.length, typed.pageInfo.hasNext], [1, true])
  const next = (await m.feed(token, { types: ['order.delivered'], after: typed.pageInfo.endCursor })).data!
  t.same([next.nodes.length, next.pageInfo.hasNext], [1, false])
  t.same((await m.feed(token, { types: ['webhook.test'] })).data!.nodes, [], 'reserved: no webhook.test yet')
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('a credential narrowed to some stores reads the events of their orders only', async (t) => {
  const m = await eventMarket(t)
  await busyLog(m)
  const all = (await m.follow(await m.token(1))).events
  const narrowed = await m.token(1, { storeIds: [12] })
  const mine = (await m.follow(narrowed)).events
  t.ok(mine.length > 0 && mine.length < all.length)
  t.same(mine, all.filter((e) => e.order!.storeId === 12), 'every event of a store-12 order, and nothing else')
})

t.test('BOLA: seller 2 never reads seller 1\'s events, whatever cursor, types or selection it sends', async (t) => {
  const m = await eventMarket(t)
  await busyLog(m)
  const one = (await m.follow(await m.token(1))).events
  const two = await m.token(2)
  const theirs = (await m.follow(two)).events
  t.same(theirs.map((e) => [e.sequence, e.type, e.order!.orderId]), [['1', 'order.placed', '2001'], ['2', 'order.placed', '2002'], ['3', 'order.accepted', '2001']])
  t.ok(theirs.every((e) => e.order!.companyId === 2 && e.id.startsWith('evt_2_')))
  for (const after of ['0', '1', '3', '30', '62']) {
    for (const types of [null, [...EVENT_TYPES]]) {
      const page = await m.feed(two, { after, limit: 100, types })
      t.ok(page.data!.nodes.every((e) => e.order!.companyId === 2), `after ${after}, types ${types === null ? 'all' : 'every'}`)
    }
  }
  // Other selections go through the standard execution: still seller 2's own.
  const bare = await m.feed(two, { limit: 100 }, '{ events(input: {limit: 100}) { nodes { id order { companyId orderId } } } }')
  t.same(bare.data!.nodes.map((e) => e.order!.companyId), [2, 2, 2])
  t.ok(!bare.raw.includes('"1001"') && !theirs.some((e) => one.some((o) => o.id === e.id)), 'no id of seller 1 anywhere')
  // Other credentials: the API key, the platform key, no token at all: 401.
  for (const token of [await m.apiKey(1), m.platform, 'oxs_test_at_nope']) {
    const res = await m.feed(token)
    t.equal(res.status, 401)
    t.same(res.errors?.[0]?.extensions?.code, 'UNAUTHENTICATED')
  }
})

t.test('an event\'s own fields are as at the event; its order is the order as it is now, null once it is not shown', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1, lines: 2 }, { orderId: 1002, seller: 1 }])
  const token = await m.token(1)
  const before = (await m.feed(token)).data!.nodes
  t.same(before.map((e) => [e.sequence, e.type, e.order!.orderStatus]), [['1', 'order.placed', 'ORDER_PLACED'], ['2', 'order.placed', 'ORDER_PLACED']])
  // Later: 1001 is accepted, its retailer renamed and its first line's offer given a new sync ID.
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  const [o] = await m.database.sql`select o.retailer_id, (select offer_id from order_items where order_id = o.id order by id limit 1) as offer
    from orders o where o.id = 1001`
  await m.database.sql`update retailers set name = 'Renamed since' where id = ${o.retailer_id}`
  await m.database.sql`update offers set offer_sync_id = 'OFFER-NEW' where id = ${o.offer}`
  const after = (await m.feed(token)).data!.nodes
  const own = (e: FeedEvent) => ({ ...e, order: e.order?.orderId })
  t.same(after.slice(0, 2).map(own), before.map(own), 'the placements\' own fields (id, type, sequence, timestamp, previousStatus, reason): unchanged')
  const placed = after[0]!.order!
  t.same([placed.orderStatus, placed.isActionable, placed.retailer.name, placed.orderItems[0].offer.offerSyncId],
    ['ORDER_ACCEPTED', true, 'Renamed since', 'OFFER-NEW'], 'the placement\'s order: as it is now')
  t.same(after[2]!.order, placed, 'the acceptance shows the same order')
  t.same([after[2]!.type, after[2]!.previousStatus], ['order.accepted', 'ORDER_PLACED'])
  const read = await ordersRead(m, token)
  for (const e of after) t.equal(JSON.stringify(e.order), read.get(e.order!.orderId), `event ${e.sequence}: the orders read's node, now`)
  // The standard execution (another selection) reads the same order, as it is now.
  const picked = await m.feed(token, {}, '{ events { nodes { sequence order { orderStatus retailer { name } } } } }')
  t.same(picked.data!.nodes, [
    { sequence: '1', order: { orderStatus: 'ORDER_ACCEPTED', retailer: { name: 'Renamed since' } } },
    // The same retailer: renamed for every order it bought.
    { sequence: '2', order: { orderStatus: 'ORDER_PLACED', retailer: { name: 'Renamed since' } } },
    { sequence: '3', order: { orderStatus: 'ORDER_ACCEPTED', retailer: { name: 'Renamed since' } } }
  ])
  // An order the orders read no longer shows (soft-deleted) and an event of no order: order null, on both paths.
  await m.database.sql`update orders set is_deleted = true where id = 1002`
  await m.database.db.transaction((tx) => recordSellerEvent(tx, 1, 'webhook.test', 'ping'))
  const last = (await m.feed(token)).data!.nodes
  t.same(last.map((e) => [e.sequence, e.type, e.order?.orderId ?? null]),
    [['1', 'order.placed', '1001'], ['2', 'order.placed', null], ['3', 'order.accepted', '1001'], ['4', 'webhook.test', null]])
  t.same((await m.feed(token, {}, '{ events { nodes { order { orderId } } } }')).data!.nodes.map((e) => e.order?.orderId ?? null),
    ['1001', null, '1001', null])
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('retention: the prune job cuts each log by sequence; a cursor older than what is kept is BAD_USER_INPUT naming the oldest', async (t) => {
  const m = await eventMarket(t)
  await busyLog(m)
  const token = await m.token(1)
  // Events 1 to 10 are 40 days old, except 9 (a long transaction's time); 12 is old too. The cut is by
  // sequence: everything up to 12 goes, so what is kept has no hole.
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days'
    where seller_id = 1 and (sequence <= 10 and sequence <> 9 or sequence = 12)`
  const { taskList, crontab } = effectsTasks(m.config, m.database, pino({ level: 'silent' }))
  t.match(crontab, new RegExp(`^30 \\* \\* \\* \\* ${TASKS.pruneEvents} `, 'm'), 'scheduled hourly')
  await (taskList[TASKS.pruneEvents] as () => Promise<void>)()
  const kept = (await m.database.sql`select sequence::int as s from seller_events where seller_id = 1 order by 1`).map((r) => r.s)
  t.same(kept, Array.from({ length: SELLER_1_EVENTS - 12 }, (_, i) => 13 + i), 'seller 1 keeps 13 … 63')
  t.equal((await m.database.sql`select count(*)::int as n from seller_events where seller_id = 2`)[0].n, 3, 'seller 2 keeps all')

  t.same((await m.follow(token)).events.map((e) => e.sequence)[0], '13', '"0": from the oldest kept')
  t.same((await m.feed(token, { after: '12' })).data!.nodes[0]!.sequence, '13', 'after 12: nothing was lost')
  for (const after of ['1', '11']) {
    const res = await m.feed(token, { after })
    t.equal(res.status, 200)
    t.same(res.data, null)
    t.match(res.errors, [{
      message: `after ${after} is older than the events kept: the oldest available sequence is 13. Events between them were removed (EVENT_RETENTION_DAYS); read the orders to catch up, then continue with after "12"`,
      extensions: { code: 'BAD_USER_INPUT', field: 'after' },
      path: ['events']
    }])
  }
  // Everything old: the log is empty, and the next event will be 64.
  await m.database.sql`update seller_events set occurred_at = now() - interval '31 days' where seller_id = 1`
  t.equal(await pruneEvents(m.database.db, 30), SELLER_1_EVENTS - 12)
  t.match((await m.feed(token, { after: '62' })).errors, [{ message: /the oldest available sequence is 64\./ }])
  t.same((await m.feed(token, { after: '63' })).data!.nodes, [])
  await m.sellerUpdate(1, [{ Order_id: 1030, Order_Status: 'ORDER_ACCEPTED' }])
  t.same((await m.feed(token, { after: '63' })).data!.nodes.map((e) => e.sequence), ['64'])
  t.equal(await pruneEvents(m.database.db, 30), 0, 'nothing more to prune')
})

/** Both apps on one database: `fast` with the pass-through, `standard` without, the cost budget on in both. */
async function twoApps (t: Test): Promise<{ m: EventMarket, standard: FastifyInstance }> {
  const env = { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '100000000', GRAPHQL_COST_RESTORE_PER_SECOND: '100000000' }
  const m = await eventMarket(t, env)
  const standard = await buildApp({ config: testConfig(m.database, { ...env, GRAPHQL_PASS_THROUGH: 'false' }), database: m.database })
  t.teardown(() => standard.close())
  await standard.ready()
  return { m, standard }
}

async function ask (app: FastifyInstance, token: string, query: string, variables: unknown = {}) {
  const res = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables } })
  // Each app has its own bucket, refilled by the clock.
  return { status: res.statusCode, body: res.body.replace(/"currentlyAvailable":\d+/, '"currentlyAvailable":0') }
}

function passThroughOutcomes (app: FastifyInstance): Promise<Record<string, number>> {
  return app.metrics.graphqlPassThrough.get()
    .then((metric) => Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value])))
}

t.test('the pass-through and the standard execution answer the feed byte for byte alike, costs included', async (t) => {
  const { m, standard } = await twoApps(t)
  await busyLog(m)
  const token = await m.token(1)
  const narrowed = await m.token(1, { storeIds: [11] })
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days' where seller_id = 1 and sequence <= 3`
  await pruneEvents(m.database.db, 30)
  const full = (input: unknown) => ({ query: EVENTS_QUERY, variables: { input } })
  const documents: Array<{ query: string, variables?: unknown, passes: boolean }> = [
    ...[{}, { after: '3' }, { after: '10', limit: 7 }, { limit: 100 }, { limit: 150 }, { after: '63' }, { after: '999' },
      { types: ['order.rejected', 'order.placed'] }, { types: ['order.delivered'], limit: 1 }, { after: null, limit: null, types: null }]
      .map((input) => ({ ...full(input), passes: true })),
    { query: '{ events { pageInfo { endCursor hasNext limit } } }', passes: true },
    { query: '{ events(input: {limit: 3}) { nodes { sequence type __typename } pageInfo { endCursor } } }', passes: true },
    { query: '{ a: events(input: {limit: 2}) { nodes { s: sequence id } } b: events(input: {after: "50"}) { pageInfo { hasNext } } __typename }', passes: true },
    { query: '{ events(input: {limit: 4}) { nodes { timestamp reason previousStatus } } orders(input: {limit: 2}) { nodes { orderId } } }', passes: true },
    // Another selection of the order: the standard execution answers it, from the same order as it is now.
    { query: '{ events(input: {limit: 50}) { nodes { sequence order { orderStatus orderId retailer { name } orderItems { quantity } } } } }', passes: false },
    { query: '{ events(input: {limit: 5}) { nodes { order { __typename orderId } } } }', passes: false },
    // Refusals, the same on both.
    ...[{ after: '1' }, { after: 'x' }, { after: '-1' }, { after: '007' }, { limit: 0 }, { types: [] }, { types: ['order.placed', 'order.lost'] }]
      .map((input) => ({ ...full(input), passes: false })),
    { query: '{ events { nodes { order { orderItems { sku { id } } } } } }', passes: false },
    { query: '{ events { nodes { order { orderItems { offer { purchasePrice } } } } } }', passes: false }
  ]
  for (const token_ of [token, narrowed]) {
    for (const doc of documents) {
      const before = (await passThroughOutcomes(m.app)).answered ?? 0
      const a = await ask(m.app, token_, doc.query, doc.variables)
      const b = await ask(standard, token_, doc.query, doc.variables)
      const label = `${doc.query.slice(0, 40)} ${JSON.stringify(doc.variables ?? {})}`
      t.equal(a.status, b.status, label)
      t.equal(a.body, b.body, `byte-identical: ${label}`)
      t.ok(a.body.includes('"extensions":{"cost":'), 'costed')
      t.equal(((await passThroughOutcomes(m.app)).answered ?? 0) - before, doc.passes ? 1 : 0, doc.passes ? 'passed through' : 'left to the standard execution')
    }
  }
  t.same(await passThroughOutcomes(standard), {}, 'never used by the standard app')
  // What the refusals say.
  const refusal = async (input: unknown) =>
    JSON.parse((await ask(standard, token, EVENTS_QUERY, { input })).body).errors[0]
  t.match(await refusal({ after: 'x' }), { message: 'after must be an event sequence as a string of digits, "0" for the oldest event kept (at most 9223372036854775807), got "x"', extensions: { code: 'BAD_USER_INPUT', field: 'after' } })
  t.match(await refusal({ limit: 0 }), { message: 'limit must be at least 1, got 0', extensions: { code: 'BAD_USER_INPUT', field: 'limit' } })
  t.match(await refusal({ types: [] }), { message: 'types must name at least one event type; leave it out for events of every type', extensions: { field: 'types' } })
  t.match(await refusal({ types: ['order.placed', 'order.lost'] }), { message: `types: "order.lost" is not an event type; the types are ${EVENT_TYPES.join(', ')}`, extensions: { field: 'types' } })
  const outside = JSON.parse((await ask(m.app, token, '{ events { nodes { order { orderItems { sku { id } } } } } }')).body)
  t.match(outside.errors, [{ message: 'An event\'s order is read with the full order selection (the fields of orders.graphql): Sku.id is not part of it (read it through orders)', extensions: { code: 'BAD_USER_INPUT', field: 'order' } }])
})

t.test('the cost of a page: asked for as orders\' is, billed for what came back', async (t) => {
  const { m } = await twoApps(t)
  await busyLog(m)
  const token = await m.token(1)
  const page = JSON.parse((await ask(m.app, token, EVENTS_QUERY, { input: { limit: 100 } })).body)
  const { requestedQueryCost, actualQueryCost } = page.extensions.cost
  // 251 for the field, 3 + 1 for pageInfo, 1 for nodes, then per event 7 fields and the order's (the
  // contract's full selection: 866 points an order, as orders' worked example: 36 + 10 × (20 + 3 × 7 + 3 × 3 × 3 +
  // 3 × 5), a line 20 with unitPrice and lineTotal), with 100 events assumed.
  t.equal(requestedQueryCost, 251 + 4 + 1 + 100 * (7 + 866))
  const events = page.data.events.nodes as FeedEvent[]
  const lines = events.reduce((n, e) => n + e.order!.orderItems.length, 0)
  const skuOffers = events.reduce((n, e) =>
    n + e.order!.orderItems.reduce((k: number, l: any) => k + l.sku.offers.length, 0), 0)
  t.equal(actualQueryCost, 256 + events.length * (7 + 36) + lines * 20 + skuOffers * 7, 'billed per event, line and SKU offer returned')
  // One page of 100 fits the per-query limit; the client's follow pages at 100.
  t.ok(requestedQueryCost < 100_000)
  const two = await ask(m.app, token, '{ a: events(input: {limit: 100}) { nodes { order { orderId orderItems { sku { offers { id } } } } } } b: events(input: {limit: 100}) { nodes { order { orderId orderItems { sku { offers { id } } } } } } }')
  t.equal(two.status, 200)
  const wide = await ask(m.app, await credential(m.database, 1, 'access-token'), `query { ${['a', 'b'].map((k) => `${k}: events(input: {limit: 100}) { nodes { order { ...OrderFull } } }`).join(' ')} } ${EVENTS_QUERY.slice(EVENTS_QUERY.indexOf('fragment OrderFull'))}`)
  t.equal(wide.status, 400, 'two full pages in one document are too costly')
  t.match(JSON.parse(wide.body).errors[0].extensions, { code: 'QUERY_TOO_COMPLEX' })
})
