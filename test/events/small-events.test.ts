import t, { type Test } from 'tap'
import { sql } from 'drizzle-orm'
import { eventLogProblems, eventMarket, ordersRead, type EventMarket } from '../helpers/events.js'
import { offersOf } from '../helpers/platform-market.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { recordEvents } from '../../src/events/record-events.js'
import { eventOrderText } from '../../src/events/event-order-text.js'
import { fullOrderParts } from '../../src/orders/order-json.js'
import { pruneContentChanges, pruneEvents } from '../../src/events/prune-events.js'
import { EVENT_BODY_TEXT } from '../../src/webhooks/event-body.js'
import { rawClient } from '../helpers/build.js'

/*
 * A status event stores only what a status change changes (status, isActionable, updatedAt) and points at
 * its order's last built event, when content_changes (drizzle/0018, triggers) shows that nothing else the
 * order's JSON shows changed since; it then reads byte for byte as building it would have written it.
 * Everything else an order shows, changed in between by any path, makes the next one build it again.
 */

interface StoredEvent { sequence: string, small: boolean, base: string | null }

async function storedEvents (m: EventMarket, seller: number): Promise<StoredEvent[]> {
  return (await m.database.sql`select sequence::text, order_json is null as small, base_sequence::text as base
    from seller_events e where seller_id = ${seller} order by e.sequence`) as unknown as StoredEvent[]
}

/** Each event's order (the feed's) against the orders read now: the same text. */
async function sameAsOrdersRead (t: Test, m: EventMarket, seller: number, sequences: string[]): Promise<void> {
  const token = await m.token(seller)
  const read = await ordersRead(m, token)
  const { events } = await m.follow(token)
  for (const e of events.filter((e) => sequences.includes(e.sequence))) {
    t.equal(JSON.stringify(e.order), read.get(e.order!.orderId), `event ${e.sequence}: order ${e.order!.orderId} as the orders read shows it`)
  }
}

t.test('a status change with nothing else changed stores only its own values, and reads byte for byte as built', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1, lines: 3 }, { orderId: 1002, seller: 1, lines: 2, paymentMode: 'ONLINE_PAID' }, { orderId: 1003, seller: 1 }])
  t.match((await m.sellerUpdate(1, [
    { Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' },
    { Order_id: 1002, Order_Status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of "stock" \\ today' },
    { Order_id: 1003, Order_Status: 'ORDER_ACCEPTED' }, { Order_id: 1003, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }
  ])).data, { successful: 4 })
  t.same(await storedEvents(m, 1), [
    { sequence: '1', small: false, base: null }, { sequence: '2', small: false, base: null }, { sequence: '3', small: false, base: null },
    { sequence: '4', small: true, base: '1' }, { sequence: '5', small: true, base: '2' },
    { sequence: '6', small: true, base: '3' }, { sequence: '7', small: true, base: '3' }
  ], 'placements built; every status event small, on its placement')
  await sameAsOrdersRead(t, m, 1, ['4', '5', '7'])
  const token = await m.token(1)
  const { events } = await m.follow(token)
  t.same(events.map((e) => [e.order!.orderStatus, e.order!.isActionable]).slice(3),
    [['ORDER_ACCEPTED', true], ['ORDER_REJECTED_BY_SELLER', false], ['ORDER_ACCEPTED', true], ['ORDER_COMPLETED_BY_SELLER', false]])
  // The webhook body splices the same text.
  const bodies = await m.database.db.execute<{ body: string }>(sql`select ${EVENT_BODY_TEXT} as body from seller_events e
    where e.seller_id = 1 order by e.sequence`)
  t.same(bodies.map((b) => JSON.parse(b.body).data.order), events.map((e) => e.order), 'webhook bodies carry the same orders')
  t.same(await eventLogProblems(m.database.sql), [])
})

/** Ways anything else an order shows can change, as any write path would do it (SQL), for seller 1's order `id`. */
const CHANGES: Record<string, (m: EventMarket, id: number) => Promise<unknown>> = {
  'retailer (shared by every seller)': (m) => m.database.sql`update retailers set name = name || ' Jr' where id = 501`,
  'shop (shared)': (m) => m.database.sql`update shops set shop_name = shop_name || ' 2' where id = 601`,
  'the seller\'s link to the retailer': (m) => m.database.sql`update seller_retailers set sync_id = 'R-NEW' where seller_id = 1 and retailer_id = 501`,
  'the seller\'s link to the shop': (m) => m.database.sql`insert into seller_shops (seller_id, shop_id, sync_id) values (1, 601, 'SH-NEW')
    on conflict (seller_id, shop_id) do update set sync_id = 'SH-NEW'`,
  item: (m) => m.database.sql`update items set item_name = item_name || ' v2' where id in (select item_id from offers o join skus k on k.id = o.sku_id where o.id = ${offersOf(1)[0]})`,
  sku: (m) => m.database.sql`update skus set tags = array['new'] where id in (select sku_id from offers where id = ${offersOf(1)[0]})`,
  'offer price': (m) => m.database.sql`update offers set purchase_price = purchase_price + 1 where id = ${offersOf(1)[0]}`,
  'a new offer on the SKU': (m) => m.database.sql`insert into offers (seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    select seller_id, sku_id, 1, 2, 3 from offers where id = ${offersOf(1)[0]}`,
  'a new selling unit': (m) => m.database.sql`insert into selling_units (sku_id, name) select sku_id, 'Box' from offers where id = ${offersOf(1)[0]}`,
  'the order\'s line': (m, id) => m.database.sql`update order_items set quantity = quantity + 1 where order_id = ${id}`,
  'the order\'s own field': (m, id) => m.database.sql`update orders set retailer_name = 'Renamed' where id = ${id}`,
  'the references sync (HTTP)': async (m) => {
    const res = await m.app.inject({
      method: 'PUT',
      url: REFERENCES_SYNC_PATH,
      headers: { 'x-api-key': await m.apiKey(1), 'content-type': 'application/json' },
      payload: JSON.stringify([{ type: 'OFFER', id: offersOf(1)[0], syncId: 'OF-MAPPED' }])
    })
    if (res.statusCode !== 200) throw new Error(res.body)
  },
  // No service path truncates; an operator's TRUNCATE has no rows to name, so it counts for every seller.
  'a TRUNCATE of the selling units (shared: every seller)': (m) => m.database.sql`truncate selling_units`
}

t.test('anything else the order shows, changed since its last built event, makes the next status event build it again', async (t) => {
  const m = await eventMarket(t)
  let id = 1000
  for (const [what, change] of Object.entries(CHANGES)) {
    id++
    // Seller 2's order beside it: a change of seller 1's own records stays small there.
    await m.place([{ orderId: id, seller: 1, lines: 2 }, { orderId: 5000 + id, seller: 2 }])
    await change(m, id)
    t.match((await m.sellerUpdate(1, [{ Order_id: id, Order_Status: 'ORDER_ACCEPTED' }])).data, { successful: 1 }, what)
    t.match((await m.sellerUpdate(2, [{ Order_id: 5000 + id, Order_Status: 'ORDER_ACCEPTED' }])).data, { successful: 1 }, what)
    const [one] = (await storedEvents(m, 1)).slice(-1)
    t.equal(one!.small, false, `${what}: seller 1's status event built again`)
    const [two] = (await storedEvents(m, 2)).slice(-1)
    const shared = what.includes('shared')
    t.equal(two!.small, !shared, `${what}: seller 2's ${shared ? 'built again too' : 'small'}`)
    await sameAsOrdersRead(t, m, 1, [one!.sequence])
    // Nothing changed since that one: the next status change is small again, on it.
    t.match((await m.sellerUpdate(1, [{ Order_id: id, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }])).data, { successful: 1 })
    const [next] = (await storedEvents(m, 1)).slice(-1)
    t.same(next, { sequence: String(Number(one!.sequence) + 1), small: true, base: one!.sequence }, `${what}: then small again`)
    await sameAsOrdersRead(t, m, 1, [next!.sequence])
  }
  t.same(await eventLogProblems(m.database.sql), [])
})

t.test('a change by a transaction still running when the base was built, committed before the status change, is seen', async (t) => {
  const m = await eventMarket(t)
  const other = rawClient(m.config.DATABASE_URL!)
  t.teardown(() => other.end({ timeout: 5 }))
  // Began before the placement and commits after it: its xid is older than the base's, yet the base's
  // snapshot did not see it. A cursor of "changes after the base's transaction" would miss it.
  let commit!: () => void
  const committed = new Promise<void>((resolve) => { commit = resolve })
  let began!: (xid: string) => void
  const running = new Promise<string>((resolve) => { began = resolve })
  const change = other.begin(async (tx) => {
    await tx`update skus set sku_nick_name = 'Renamed while placing' where id in (select sku_id from offers where id = ${offersOf(1)[0]})`
    began((await tx`select pg_current_xact_id()::text as xid`)[0]!.xid)
    await committed
  })
  const xid = await running
  await m.place([{ orderId: 1001, seller: 1 }])
  commit()
  await change
  const [seen] = await m.database.sql`select c.xid < b.content_xid as older, pg_visible_in_snapshot(c.xid, b.content_snapshot) as visible
    from content_changes c, seller_events b where c.xid = ${xid}::xid8 and c.seller_id = 1 and b.seller_id = 1 and b.sequence = 1`
  t.same(seen, { older: true, visible: false }, 'the change is older than the base, and unseen by it')
  t.match((await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])).data, { successful: 1 })
  t.same((await storedEvents(m, 1)).map((e) => e.small), [false, false], 'built again')
  const { events } = await m.follow(await m.token(1))
  t.equal(events[1]!.order!.orderItems[0].sku.skuNickName, 'Renamed while placing')
  await sameAsOrdersRead(t, m, 1, ['2'])
})

t.test('retention: a kept small event whose base goes is written in full first, and reads the same', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1, lines: 2 }])
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  const token = await m.token(1)
  const before = (await m.feed(token, { after: '1' })).raw
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days' where seller_id = 1 and sequence = 1`
  t.equal(await pruneEvents(m.database.db, 30), 1, 'the base went')
  t.same(await storedEvents(m, 1), [{ sequence: '2', small: false, base: null }], 'the small event now holds its text')
  t.equal((await m.feed(token, { after: '1' })).raw, before, 'the feed answers the same bytes')
})

t.test('content changes are pruned below a horizon; a base older than it is not used', async (t) => {
  const m = await eventMarket(t)
  const horizon = async () => (await m.database.sql`select horizon::text, jsonb_array_length(marks) as marks from content_change_horizon`)[0]
  await m.place([{ orderId: 1001, seller: 1 }])
  await CHANGES.sku!(m, 0)
  const start = await horizon()
  t.equal(await pruneContentChanges(m.database.db, 24), 0, 'nothing older than a day')
  t.same(await horizon(), { horizon: start!.horizon, marks: 1 }, 'a mark noted, the horizon where it was')
  // Kept for 0 hours: the mark noted by the first run is old enough now, and becomes the horizon.
  const [mark] = await m.database.sql`select marks->0->>'xmin' as xmin from content_change_horizon`
  const [below] = await m.database.sql`select count(*)::int as n from content_changes where xid < ${mark!.xmin}::xid8`
  t.equal(await pruneContentChanges(m.database.db, 0), below!.n, 'the changes below it went')
  t.same((await horizon())!.horizon, mark!.xmin)
  t.same(await m.database.sql`select 1 from content_changes where xid < ${mark!.xmin}::xid8`, [])
  // The run's own mark is kept when it is above the new horizon: not when the oldest transaction still running
  // on the server (another test file's, say) is the one the first mark noted, which makes the two equal.
  const [kept] = await m.database.sql`select coalesce(jsonb_agg(x->>'xmin'), '[]') as xmins, horizon::text as horizon
    from content_change_horizon, jsonb_array_elements(marks) x group by horizon`.then((r) => r.length > 0 ? r : [{ xmins: [], horizon: mark!.xmin }])
  t.ok(kept!.xmins.length <= 1, 'the marks up to the horizon dropped')
  t.ok(kept!.xmins.every((x: string) => BigInt(x) > BigInt(kept!.horizon)), `what is kept is above the horizon: ${JSON.stringify(kept)}`)
  // A base built before the horizon is not used: the status event is built (and is a base itself).
  await m.database.sql`update content_change_horizon set horizon = pg_current_xact_id()`
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }])
  // Whether that new base is above the horizon depends on what else ran on the server meanwhile (an older
  // transaction still open holds its snapshot's xmin back): the third event is small exactly when it is.
  const [usable] = await m.database.sql`select pg_snapshot_xmin(content_snapshot) >= (select horizon from content_change_horizon) as ok
    from seller_events where seller_id = 1 and sequence = 2`
  t.same((await storedEvents(m, 1)).map((e) => e.small), [false, false, usable!.ok])
  await sameAsOrdersRead(t, m, 1, ['3'])
})

t.test('a base built with another selection of the order (an earlier release) is not used', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1 }])
  await m.database.sql`update seller_events set order_shape = order_shape + 1 where seller_id = 1 and sequence = 1`
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }])
  t.same((await storedEvents(m, 1)).map((e) => [e.small, e.base]), [[false, null], [false, null], [true, '2']])
  await sameAsOrdersRead(t, m, 1, ['3'])
})

t.test('json_text_values_replaced: strings and literals replaced after their keys, in order; anything else raises', async (t) => {
  const m = await eventMarket(t)
  const replaced = async (j: string, keys: string[], vals: string[]) =>
    (await m.database.sql`select json_text_values_replaced(${j}, ${keys}::text[], ${vals}::text[]) as r`)[0]!.r
  t.equal(await replaced('{"a":1,"s":"X","n":{"b":true},"b":false,"u":"2026"}', [',"s":', ',"b":', ',"u":'], ['"Y"', 'true', '"2027"']),
    '{"a":1,"s":"Y","n":{"b":true},"b":true,"u":"2027"}', 'the nested b is passed: keys are found in order, each after the last')
  t.equal(await replaced('{"a":1,"b":null}', [',"b":'], ['12.5']), '{"a":1,"b":12.5}')
  for (const [j, why] of [['{"a":1}', 'no key'], ['{"a":1,"s":"x\\"y"}', 'an escape'], ['{"a":1,"s":"open', 'an open string'],
    ['{"a":1,"s":tru', 'a literal that does not end']]) {
    await t.rejects(replaced(j!, [',"s":'], ['"v"']), /json_text_values_replaced/, why)
  }
})

t.test('every table the order JSON reads is watched, and every column of orders but the three a status change sets', async (t) => {
  const m = await eventMarket(t)
  const watched = await m.database.sql`select w.table, array_agg(distinct w.op order by w.op) as ops from (
      select c.relname::text as table,
        case when t.tgtype & 4 <> 0 then 'insert' when t.tgtype & 8 <> 0 then 'delete'
          when t.tgtype & 32 <> 0 then 'truncate' else 'update' end as op
      from pg_trigger t join pg_class c on c.oid = t.tgrelid where t.tgname like '%content%') w
    group by 1 order by 1`
  t.same(watched, [
    { table: 'items', ops: ['delete', 'truncate', 'update'] },
    { table: 'offers', ops: ['delete', 'insert', 'truncate', 'update'] },
    { table: 'order_items', ops: ['delete', 'insert', 'truncate', 'update'] },
    { table: 'orders', ops: ['delete', 'truncate', 'update'] },
    { table: 'retailers', ops: ['delete', 'truncate', 'update'] },
    { table: 'seller_retailers', ops: ['delete', 'insert', 'truncate', 'update'] },
    { table: 'seller_shops', ops: ['delete', 'insert', 'truncate', 'update'] },
    { table: 'selling_units', ops: ['delete', 'insert', 'truncate', 'update'] },
    { table: 'shops', ops: ['delete', 'truncate', 'update'] },
    { table: 'skus', ops: ['delete', 'truncate', 'update'] }
  ])
  // The tables are the read model's: every relation the plan of building one order's JSON reads (a table the
  // read model starts to read without triggers fails here, not in the feed).
  const order = fullOrderParts()
  const [plan] = await m.database.db.execute<{ 'QUERY PLAN': unknown }>(sql`explain (format json)
    with picked as materialized (select o.id from orders o order by o.id limit 1) ${order.ctes}
    select ${order.text} as text, ${order.lengths} as lengths from orders o ${order.joins} where o.id in (select id from picked)`)
  const read = new Set<string>()
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) { node.forEach(walk); return }
    if (node === null || typeof node !== 'object') return
    for (const [key, value] of Object.entries(node)) {
      if (key === 'Relation Name' && typeof value === 'string') read.add(value)
      else walk(value)
    }
  }
  walk(plan!['QUERY PLAN'])
  t.same([...read].sort(), watched.map((w) => w.table as string), 'the tables building an order\'s JSON reads are the watched ones')
  const [columns] = await m.database.sql`select
      (select array_agg(a.attname::text order by a.attname) from pg_attribute a where a.attrelid = 'orders'::regclass and a.attnum > 0
        and not a.attisdropped) as all,
      (select array_agg(a.attname::text order by a.attname) from pg_trigger t join pg_attribute a on a.attrelid = t.tgrelid
        and a.attnum = any(t.tgattr::int2[]) where t.tgname = 'orders_content_update') as watched`
  t.same(columns!.all.filter((c: string) => !columns!.watched.includes(c)), ['is_actionable', 'status', 'updated_at'])
})

t.test('under concurrent changes, each small event reads exactly as building its order would have, in its transaction', async (t) => {
  const m = await eventMarket(t)
  const ids = [1001, 1002, 1003]
  await m.place(ids.map((orderId) => ({ orderId, seller: 1, lines: 2 })))
  const rows = await m.database.sql`select id, store_id from orders where seller_id = 1 order by id`
  const changers = rawClient(m.config.DATABASE_URL!, { max: 2 })
  t.teardown(() => changers.end({ timeout: 5 }))
  let seed = 7
  const rnd = (n: number) => { seed = (seed * 48271) % 2147483647; return seed % n }
  const kinds = [
    (tx: any, k: number) => tx`update skus set sku_nick_name = ${'nick ' + k} where id in (select sku_id from offers where id = ${offersOf(1)[k % 2]})`,
    (tx: any, k: number) => tx`update offers set mrp_price_amount = ${100 + k} where id = ${offersOf(1)[k % 2]}`,
    (tx: any, k: number) => tx`update seller_retailers set sync_id = ${'R' + k} where seller_id = 1 and retailer_id = 501`,
    (tx: any, k: number) => tx`update retailers set phone = ${'+9100' + k} where id = 501`,
    (tx: any) => tx`update offers set mrp_price_amount = mrp_price_amount where id = ${offersOf(2)[0]}` // another seller's
  ]
  const state = { stop: false }
  const changing = Array.from({ length: 2 }, async () => {
    for (let k = 0; !state.stop; k++) {
      await changers.begin(async (tx) => {
        await kinds[rnd(kinds.length)]!(tx, k)
        await new Promise((resolve) => setTimeout(resolve, rnd(15)))
      })
      await new Promise((resolve) => setTimeout(resolve, rnd(150)))
    }
  })
  const statuses = ['ORDER_ACCEPTED', 'ORDER_PLACED'] as const
  let small = 0
  let built = 0
  for (let round = 0; round < 120; round++) {
    const row = rows[rnd(rows.length)]!
    const to = statuses[round % 2]!
    // Repeatable read: the event's statement and the full build after it see one snapshot.
    await m.database.db.transaction(async (tx) => {
      await tx.execute(sql`update orders set status = ${to}::order_status, updated_at = clock_timestamp() where id = ${row.id}`)
      await new Promise((resolve) => setTimeout(resolve, rnd(10)))
      await recordEvents(tx, [{
        sellerId: 1,
        storeId: row.store_id,
        orderId: Number(row.id),
        type: 'order.accepted',
        status: to,
        actionable: true,
        previousStatus: null,
        reason: null
      }])
      const [event] = await tx.execute<{ small: boolean, text: string }>(sql`select e.order_json is null as small,
          ${eventOrderText('e')} as text from seller_events e where e.seller_id = 1 order by e.sequence desc limit 1`)
      const order = fullOrderParts()
      const [fresh] = await tx.execute<{ text: string }>(sql`with picked as materialized (select ${row.id}::bigint as id) ${order.ctes}
        select ${order.text} as text from orders o ${order.joins} where o.id = ${row.id}`)
      if (event!.small) small++; else built++
      if (event!.text !== fresh!.text) t.fail(`round ${round}: the event's order differs from building it`, { event: event!.text, fresh: fresh!.text })
    }, { isolationLevel: 'repeatable read' })
  }
  state.stop = true
  await Promise.all(changing)
  t.ok(small > 10 && built > 10, `both kinds exercised (${small} small, ${built} built)`)
  t.pass(`${small + built} events, each equal to its order built in its transaction`)
})

/** Terminates the backend waiting on a lock in a statement that mentions `text`, once it waits. */
async function terminateWaiting (m: EventMarket, text: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [row] = await m.database.sql`select pg_terminate_backend(pid) as done from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like ${'%' + text + '%'}
        and pid <> pg_backend_pid() limit 1`
    if (row?.done === true) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`nothing waited in ${text}`)
}

t.test('the connection dropped mid-prune: retention and the content-change prune leave all or nothing, and the next run completes', async (t) => {
  const m = await eventMarket(t)
  await m.place([{ orderId: 1001, seller: 1, lines: 2 }])
  await m.sellerUpdate(1, [{ Order_id: 1001, Order_Status: 'ORDER_ACCEPTED' }])
  const token = await m.token(1)
  const before = (await m.feed(token, { after: '1' })).raw
  await m.database.sql`update seller_events set occurred_at = now() - interval '40 days' where seller_id = 1 and sequence = 1`
  const holder = rawClient(m.config.DATABASE_URL!)
  t.teardown(() => holder.end({ timeout: 5 }))

  // Retention: the small event's row held, so the prune waits writing it in full; its backend is killed there.
  let release!: () => void
  const released = new Promise<void>((resolve) => { release = resolve })
  let locked!: () => void
  const isLocked = new Promise<void>((resolve) => { locked = resolve })
  const holding = holder.begin(async (tx) => {
    await tx`select 1 from seller_events where seller_id = 1 and sequence = 2 for update`
    locked()
    await released
  })
  await isLocked
  const pruning = pruneEvents(m.database.db, 30).then(() => 'completed', () => 'failed')
  await terminateWaiting(m, 'update seller_events l')
  release()
  await holding
  const outcome = await pruning
  const stored = await storedEvents(m, 1)
  t.ok(stored.length === 2
    ? stored[1]!.small && stored[1]!.base === '1'
    : stored.length === 1 && !stored[0]!.small, `all or nothing (${outcome}): ${JSON.stringify(stored)}`)
  t.equal((await m.feed(token, { after: '1' })).raw, before, 'the feed answers the same bytes meanwhile')
  await pruneEvents(m.database.db, 30)
  t.same(await storedEvents(m, 1), [{ sequence: '2', small: false, base: null }], 'the next run completes')
  t.equal((await m.feed(token, { after: '1' })).raw, before, 'and the same bytes after')

  // The content-change prune: the horizon row held, its backend killed while it waits.
  await CHANGES.sku!(m, 0)
  const [start] = await m.database.sql`select horizon::text, marks::text, (select count(*)::int from content_changes) as changes
    from content_change_horizon`
  let release2!: () => void
  const released2 = new Promise<void>((resolve) => { release2 = resolve })
  let locked2!: () => void
  const isLocked2 = new Promise<void>((resolve) => { locked2 = resolve })
  const holding2 = holder.begin(async (tx) => {
    await tx`select 1 from content_change_horizon for update`
    locked2()
    await released2
  })
  await isLocked2
  const pruning2 = pruneContentChanges(m.database.db, 0).then(() => 'completed', () => 'failed')
  await terminateWaiting(m, 'content_change_horizon')
  release2()
  await holding2
  const outcome2 = await pruning2
  const [after] = await m.database.sql`select horizon::text, marks::text, (select count(*)::int from content_changes) as changes
    from content_change_horizon`
  if (outcome2 === 'failed') t.same(after, start, 'failed: nothing changed')
  else t.ok(after!.marks !== start!.marks, 'completed on a retry: a mark noted')
  await pruneContentChanges(m.database.db, 0)
  const [horizon] = await m.database.sql`select horizon from content_change_horizon`
  t.same(await m.database.sql`select 1 from content_changes where xid < ${horizon!.horizon}`, [], 'the next runs complete: nothing below the horizon')
})
