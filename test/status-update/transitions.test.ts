import t from 'tap'
import { build } from '../helpers/build.js'
import type { OrderStatus } from '../../src/db/schema.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { accept, complete, createShop, failed, ok, orderStatus, post, reject, sellerPoints, type Item } from '../helpers/status-update.js'

/* The moves and every per-order error of docs/api/status-updates.md, through HTTP. */

const ALL: OrderStatus[] = ['ORDER_PLACED', 'ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER', 'CANCELLED', 'DELIVERED']
const TARGETS = ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_COMPLETED_BY_SELLER'] as const
const ALLOWED = new Set([
  'ORDER_PLACED>ORDER_ACCEPTED', 'ORDER_PLACED>ORDER_REJECTED_BY_SELLER',
  'ORDER_ACCEPTED>ORDER_REJECTED_BY_SELLER', 'ORDER_ACCEPTED>ORDER_COMPLETED_BY_SELLER',
  'DELIVERED>ORDER_COMPLETED_BY_SELLER'
])

t.test('every (status, requested status) pair in one batch: allowed, no-op or refused', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const cases: Array<{ id: number, from: OrderStatus, to: (typeof TARGETS)[number] }> = []
  for (const from of ALL) for (const to of TARGETS) cases.push({ id: await shop.order({ status: from }), from, to })
  const res = await post(app, key, { order_status: cases.map((c) => ({ Order_id: c.id, Order_Status: c.to, reason: 'Changed plans' })) })

  const refused = cases.filter((c) => c.from !== c.to && !ALLOWED.has(`${c.from}>${c.to}`))
  t.equal(refused.length, 10, 'ten forbidden pairs')
  const same = cases.filter((c) => c.from === c.to).map((c) => c.id)
  t.same(res, {
    statusCode: 200,
    body: ok(8, refused.map((c) => failed(cases.indexOf(c), c.id, OrderErrors.cannotChange(c.from, c.to))), same)
  })
  for (const c of cases) {
    const expected = ALLOWED.has(`${c.from}>${c.to}`) ? c.to : c.from
    t.equal(await orderStatus(database, c.id), expected, `${c.from} → ${c.to}`)
    const history = await database.sql`select from_status, to_status from order_status_history where order_id = ${c.id}`
    t.same(history.map((h) => `${h.from_status}>${h.to_status}`), ALLOWED.has(`${c.from}>${c.to}`) ? [`${c.from}>${c.to}`] : [],
      `history of ${c.from} → ${c.to}`)
  }
})

t.test('an order moved twice in one batch: accept then complete, and a repeat is a no-op', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const id = await shop.order()
  const res = await post(app, key, { order_status: [accept(id), accept(id), complete(id), reject(id)] })
  t.same(res.body, ok(3, [failed(3, id, OrderErrors.cannotChange('ORDER_COMPLETED_BY_SELLER', 'ORDER_REJECTED_BY_SELLER'))], [id]))
  t.equal(await orderStatus(database, id), 'ORDER_COMPLETED_BY_SELLER')
  const history = await database.sql`select from_status, to_status from order_status_history where order_id = ${id} order by id`
  t.same(history.map((h) => `${h.from_status}>${h.to_status}`), ['ORDER_PLACED>ORDER_ACCEPTED', 'ORDER_ACCEPTED>ORDER_COMPLETED_BY_SELLER'])
  const [ledger] = await database.sql`select count(*)::int as n from points_ledger where order_id = ${id}`
  t.equal(ledger.n, 1, 'one deduction')
})

t.test('Order not found in system: unknown, another seller\'s, soft-deleted', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const other = await createShop(database)
  const key = await shop.apiKey()
  const deleted = await shop.order({ deleted: true })
  const theirs = await other.order()
  const mine = await shop.order()
  const res = await post(app, key, { order_status: [accept(987654321), accept(theirs), reject(deleted), accept(mine)] })
  const notFound = OrderErrors.notFound
  t.same(res.body, ok(1, [failed(0, 987654321, notFound), failed(1, theirs, notFound), failed(2, deleted, notFound)]))
  t.equal(await orderStatus(database, theirs), 'ORDER_PLACED', 'another seller\'s order is untouched')
  t.equal(await orderStatus(database, deleted), 'ORDER_PLACED')
  t.equal(await orderStatus(database, mine), 'ORDER_ACCEPTED')
})

t.test('Invalid order status: 400 with data, the other items still processed and counted', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b, c, d, e, f, g] = await shop.orders(7)
  const items: Item[] = [
    { Order_id: a, Order_Status: 'ORDER_PLACED' }, { Order_id: b, Order_Status: 'CANCELLED' },
    { Order_id: c, Order_Status: 'order_accepted' }, { Order_id: d }, { Order_id: e, Order_Status: 1 }, { Order_id: f, Order_Status: null },
    accept(g)
  ]
  const res = await post(app, key, { order_status: items })
  t.equal(res.statusCode, 400)
  t.same(res.body, {
    error: true,
    status: false,
    statusCode: 400,
    message: 'Invalid order status',
    code: 'INVALID_STATUS',
    data: {
      successful: 1,
      failed: 6,
      errors: [a, b, c, d, e, f].map((orderId, index) => failed(index, orderId, OrderErrors.invalidStatus)),
      unchangedOrderIds: []
    }
  })
  t.equal(await orderStatus(database, g), 'ORDER_ACCEPTED', 'the valid item was applied')
  t.equal(await orderStatus(database, a), 'ORDER_PLACED')
})

t.test('Reason is required when rejecting an order', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const ids = await shop.orders(6)
  const items: Item[] = [
    { Order_id: ids[0], Order_Status: 'ORDER_REJECTED_BY_SELLER' }, reject(ids[1], null), reject(ids[2], ''), reject(ids[3], '   '), reject(ids[4], 42),
    reject(ids[5], '  Out of stock  ')
  ]
  const res = await post(app, key, { order_status: items })
  t.same(res.body, ok(1, ids.slice(0, 5).map((orderId, index) => failed(index, orderId, OrderErrors.reasonRequired))))
  const [h] = await database.sql`select reason from order_status_history where order_id = ${ids[5]}`
  t.equal(h.reason, 'Out of stock', 'the reason is kept, trimmed')
  t.equal(await orderStatus(database, ids[0]), 'ORDER_PLACED')
})

t.test('Order_id must be a positive integer; a string of digits is taken; an item that is not an object', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const id = await shop.order()
  const badIds: unknown[] = [0, -1, 1.5, 'abc', '007', '12a', null, true, {}, 2 ** 53, '99999999999999999']
  const items: unknown[] = [...badIds.map((x) => accept(x)), { Order_Status: 'ORDER_ACCEPTED' }, 'ORDER_ACCEPTED', 7, null, [accept(id)], accept(String(id))]
  const res = await post(app, key, { order_status: items })
  const badId = (index: number) => failed(index, null, OrderErrors.badOrderId)
  const notObject = (index: number) => failed(index, null, OrderErrors.itemNotObject)
  t.same(res.body, ok(1, [
    ...badIds.map((_, i) => badId(i)),
    badId(11),
    notObject(12),
    notObject(13),
    notObject(14),
    notObject(15)
  ]))
  t.equal(await orderStatus(database, id), 'ORDER_ACCEPTED', 'Order_id "<digits>" addressed the order')
})

t.test('a status that is not one of the three makes the answer 400 even when the item\'s id is unusable too', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const id = await shop.order()
  const res = await post(app, key, { order_status: [{ Order_id: id, Order_Status: 'ORDER_ACCEPTED' }, { Order_id: 'ERP-17', Order_Status: 'SHIPPED' }, { Order_id: 'ERP-18' }] })
  t.same(res, {
    statusCode: 400,
    body: {
      error: true,
      status: false,
      statusCode: 400,
      message: 'Invalid order status',
      code: 'INVALID_STATUS',
      data: {
        successful: 1,
        failed: 2,
        errors: [failed(1, null, OrderErrors.invalidStatus), failed(2, null, OrderErrors.invalidStatus)],
        unchangedOrderIds: []
      }
    }
  })
  t.equal(await orderStatus(database, id), 'ORDER_ACCEPTED', 'the good item was applied')
  const idOnly = await post(app, key, { order_status: [{ Order_id: 'ERP-17', Order_Status: 'ORDER_ACCEPTED' }] })
  t.same(idOnly.body, ok(0, [failed(0, null, OrderErrors.badOrderId)]), 'a good status with a bad id: the id\'s error, 200')
})

t.test('Seller is not authorized to update this order: a key narrowed to other stores', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const narrowed = await shop.apiKey({ storeIds: [shop.storeIds[0]] })
  const inA = await shop.order({ storeIndex: 0 })
  const inB = await shop.order({ storeIndex: 1 })
  const inB2 = await shop.order({ storeIndex: 1, status: 'ORDER_ACCEPTED' })
  const res = await post(app, narrowed, { order_status: [accept(inA), accept(inB), reject(inB), complete(inB2)] })
  const denied = OrderErrors.notAuthorized
  t.same(res.body, ok(1, [failed(1, inB, denied), failed(2, inB, denied), failed(3, inB2, denied)]), 'all three statuses are checked')
  t.equal(await orderStatus(database, inB), 'ORDER_PLACED')
  const full = await post(app, await shop.apiKey(), { order_status: [accept(inB)] })
  t.same(full.body, ok(1), 'a key for every store may')
})

t.test('Seller is not eligible to accept orders: a suspended seller may still reject and complete', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, { status: 'suspended' })
  const key = await shop.apiKey()
  const [a, b] = await shop.orders(2)
  const c = await shop.order({ status: 'ORDER_ACCEPTED' })
  const res = await post(app, key, { order_status: [accept(a), reject(b), complete(c)] })
  t.same(res.body, ok(2, [failed(0, a, OrderErrors.notEligible)]))
  t.equal(await orderStatus(database, a), 'ORDER_PLACED')
  t.equal(await sellerPoints(database, shop.sellerId), '1000.00')
})

t.test('Insufficient points to accept this order: exact at the boundary, with the balance of earlier items', async (t) => {
  const { app, database } = await build(t)
  // 2 % of 100.00 = 2.00 points an order; 5.00 points cover two orders, not three.
  const shop = await createShop(database, { pointsBalance: '5.00', takeRate: '0.0200' })
  const key = await shop.apiKey()
  const [a, b, c] = await shop.orders(3, { total: '100.00' })
  const d = await shop.order({ total: '50.00' }) // 1.00: exactly what is left
  const e = await shop.order({ total: '0.50' }) // 0.01: nothing is left
  const res = await post(app, key, { order_status: [accept(a), accept(b), accept(c), accept(d), accept(e)] })
  const short = OrderErrors.insufficientPoints
  t.same(res.body, ok(3, [failed(2, c, short), failed(4, e, short)]))
  t.equal(await sellerPoints(database, shop.sellerId), '0.00')
  t.equal(await orderStatus(database, c), 'ORDER_PLACED')
})

t.test('every order failed: still 200', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const res = await post(app, key, { order_status: [accept(111111111), reject(111111112, null)] })
  t.same(res, {
    statusCode: 200,
    body: ok(0, [failed(0, 111111111, OrderErrors.notFound), failed(1, 111111112, OrderErrors.reasonRequired)])
  })
})

t.test('each per-order error carries its item\'s index: repeated orders, no id, mixed outcomes', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b, c] = await shop.orders(3)
  const items: unknown[] = [
    accept(a), accept(a), reject(b, null), accept(b), accept(999999999), 'not an item', accept(a), complete(c),
    { Order_id: 'x', Order_Status: 'ORDER_ACCEPTED' }
  ]
  const res = await post(app, key, { order_status: items })
  t.same(res.body, ok(4, [
    failed(2, b, OrderErrors.reasonRequired),
    failed(4, 999999999, OrderErrors.notFound),
    failed(5, null, OrderErrors.itemNotObject),
    failed(7, c, OrderErrors.cannotChange('ORDER_PLACED', 'ORDER_COMPLETED_BY_SELLER')),
    failed(8, null, OrderErrors.badOrderId)
  ], [a, a]))
  const again = await post(app, key, { order_status: [reject(b, null), reject(b, null), accept(b)] })
  t.same(again.body, ok(1, [failed(0, b, OrderErrors.reasonRequired), failed(1, b, OrderErrors.reasonRequired)], [b]),
    'the same order failing twice: two errors, told apart by index')
})
