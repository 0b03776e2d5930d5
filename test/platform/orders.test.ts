import t from 'tap'
import { build } from '../helpers/build.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { notificationsOf } from '../helpers/effects.js'
import type { TestDatabase as Database } from '../helpers/build.js'
import { PLATFORM_ORDERS_PATH, PLATFORM_ORDER_STATUS_PATH, PLATFORM_SELLERS_PATH, PLATFORM_POINTS_PATH, STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'
import { OrderRowErrors as O, OrderText } from '../../src/platform/order-texts.js'
import { PlatformRowErrors as E } from '../../src/platform/texts.js'
import { OrderErrors, StatusUpdateText } from '../../src/status-update/texts.js'

/*
 * POST /v2/platform/orders and POST /v2/platform/orders/update-status (docs/platform/orders.md): what placement
 * does (order, lines, history, deal grab, live-order count, auto-rejection job, order.placed, payout), the
 * seller reading the order back field for field, a re-send that is unchanged and a changed re-send that is
 * ORDER_CONFLICT, every reference refusal, the platform's transitions with each effect once, and races
 * between placement, cancellation and acceptance.
 */

/** The notifications of these orders, as `<order>:<event type>:<channel>`, after dispatching the log's events. */
async function notified (database: Database, orderIds: number[]): Promise<string[]> {
  const out: string[] = []
  for (const id of orderIds) out.push(...(await notificationsOf(database, id)).map((n) => `${id}:${n.type}:${n.channel}`))
  return out.sort()
}

const DAY = '2026-11-25'
const PLACED_AT = `${DAY}T09:30:00.123456+05:30`

async function setup (t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const ctx = await build(t, { AUTO_REJECT_AFTER_MS: '3600000', ...env })
  const { app, database } = ctx
  const key = await platformKey(database)
  const call = (method: 'PUT' | 'POST', url: string, body: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body)
    })
  const seller = (companyId: number, extra: Record<string, unknown> = {}) => ({
    companyId,
    name: `Seller ${companyId}`,
    status: 'ACTIVE',
    takeRate: '0.1',
    autoRejectEnabled: true,
    stores: [{ id: companyId * 10 + 1, name: 'Main' }],
    ...extra
  })
  const made = await call('PUT', PLATFORM_SELLERS_PATH, [seller(1), seller(2, { autoRejectEnabled: false }), seller(3, { status: 'SUSPENDED' })])
  t.equal(made.statusCode, 200)
  await call('POST', PLATFORM_POINTS_PATH, [1, 2, 3].map((companyId) => ({ companyId, amount: 1000, reference: `OPEN-${companyId}` })))
  // Retailers, shops and the catalogue are put straight into the tables here: their own routes have tests of their own.
  const sql = database.sql
  await sql`insert into retailers (id, name, phone, whatsapp) values (501, 'Asha Rao', '+919800000001', null), (502, 'Ravi Kumar', null, null)`
  await sql`insert into shops (id, retailer_id, shop_name) values (601, 501, 'Rao Kirana'), (602, 502, 'Kumar Stores')`
  await sql`insert into seller_retailers (seller_id, retailer_id, sync_id) values (1, 501, 'RET-1'), (2, 501, 'RET-2-OWN'), (3, 501, null), (2, 502, null)`
  await sql`insert into seller_shops (seller_id, shop_id, sync_id) values (1, 601, 'SHOP-1')`
  for (const s of [1, 2, 3]) {
    await sql`insert into items (id, seller_id, item_name, item_sync_id) values (${s * 100}, ${s}, ${`Tea ${s}`}, ${`ITEM-${s}`})`
    await sql`insert into skus (id, seller_id, item_id, sku_nick_name) values (${s * 100}, ${s}, ${s * 100}, 'Tea 1kg')`
    await sql`insert into offers (id, seller_id, sku_id, offer_sync_id, purchase_price, mrp_price_amount, final_price_with_tax)
      values (${s * 100}, ${s}, ${s * 100}, ${`VAR-${s}`}, 80, 120, 100), (${s * 100 + 1}, ${s}, ${s * 100}, null, 40, 60, 50)`
    await sql`insert into daily_deals (id, seller_id, offer_id, deal_date, deal_price, max_quantity)
      values (${s * 100}, ${s}, ${s * 100}, ${DAY}, 90, 10), (${s * 100 + 1}, ${s}, ${s * 100}, '2026-11-24', 90, 10)`
  }
  const orders = (body: unknown, headers?: Record<string, string>) => call('POST', PLATFORM_ORDERS_PATH, body, headers)
  const transition = (items: unknown[], headers?: Record<string, string>) =>
    call('POST', PLATFORM_ORDER_STATUS_PATH, { order_status: items }, headers)
  return { ...ctx, key, call, orders, transition, sql }
}

const order = (orderId: number, extra: Record<string, unknown> = {}) => ({
  orderId: String(orderId),
  orderNumber: `ORD-${orderId}`,
  serviceOrderNumber: `SVC-${orderId}`,
  companyId: 1,
  storeId: 11,
  retailerId: 501,
  shopId: 601,
  deliveryType: 'REGULAR',
  currencyCode: 'INR',
  paymentMode: 'ONLINE_PAID',
  orderTotal: '1180.00',
  orderTotalFinal: 1180,
  orderTaxAmount: '180.5',
  orderCessAmount: 0,
  appliedPoints: '0.00',
  totalExtraCharges: 0,
  roundOff: '-0.25',
  placedAt: PLACED_AT,
  orderItems: [
    { id: String(orderId * 10 + 1), offerId: 100, quantity: 2, dealId: 100 },
    { id: String(orderId * 10 + 2), offerId: 101, quantity: '1.5' },
    { id: String(orderId * 10 + 3), offerId: 100, quantity: 1, dealId: null }
  ],
  ...extra
})

const errorOf = (index: number, id: string | null, e: { code: string, text: string }) =>
  ({ index, id, error: e.text, code: e.code })
const orderError = (index: number, orderId: number, e: { code: string, text: string }) =>
  ({ index, orderId, error: e.text, code: e.code })

t.test('placing: the order and every effect of placement, once; the seller reads it back as placed', async (t) => {
  const { app, database, orders, sql } = await setup(t)
  const res = await orders([order(7001), order(7002, { companyId: 2, storeId: 21, shopId: null, paymentMode: 'PREPAID', orderItems: [{ id: '70021', offerId: 200, quantity: 3 }] })])
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: OrderText.placed,
    data: { received: 2, inserted: 2, updated: 0, unchanged: 0, failed: 0, errors: [] }
  })
  const [stored] = await sql`select status, is_actionable, retailer_name, total_items_in_order, order_total::text, round_off::text,
    order_tax_amount::text, created_at = ${PLACED_AT}::timestamptz as placed_at_kept from orders where id = 7001`
  t.same(stored, { status: 'ORDER_PLACED', is_actionable: true, retailer_name: 'Asha Rao', total_items_in_order: 3, order_total: '1180.00', round_off: '-0.25', order_tax_amount: '180.50', placed_at_kept: true })
  t.same(await sql`select id::text, offer_id, deal_id, quantity::text, unit_price::text, item_id, sku_id from order_items where order_id = 7001 order by id`, [
    { id: '70011', offer_id: 100, deal_id: 100, quantity: '2.000', unit_price: '90.00', item_id: 100, sku_id: 100 },
    { id: '70012', offer_id: 101, deal_id: null, quantity: '1.500', unit_price: '50.00', item_id: 100, sku_id: 100 },
    { id: '70013', offer_id: 100, deal_id: null, quantity: '1.000', unit_price: '100.00', item_id: 100, sku_id: 100 }
  ], 'lines take item, SKU and price from their offer (a deal line its deal price)')
  const [platformCredential] = await sql`select id from credentials where kind = 'platform-key'`
  t.same(await sql`select order_id::int, from_status, to_status, source, credential_id from order_status_history order by order_id`, [
    { order_id: 7001, from_status: null, to_status: 'ORDER_PLACED', source: 'platform', credential_id: platformCredential.id },
    { order_id: 7002, from_status: null, to_status: 'ORDER_PLACED', source: 'platform', credential_id: platformCredential.id }
  ])
  t.same(await sql`select grabbed_quantity::text from daily_deals where id = 100`, [{ grabbed_quantity: '2.000' }])
  t.same(await sql`select seller_id, store_id, live_orders::int from order_counts order by seller_id`,
    [{ seller_id: 1, store_id: 11, live_orders: 1 }, { seller_id: 2, store_id: 21, live_orders: 1 }])
  t.same(await sql`select key from graphile_worker._private_jobs where key like 'auto-reject:%'`, [{ key: 'auto-reject:7001' }],
    'an auto-rejection job only for the seller with auto-rejection on')
  t.same(await sql`select order_id::int, type::text, status::text, previous_status from seller_events order by order_id`, [
    { order_id: 7001, type: 'order.placed', status: 'ORDER_PLACED', previous_status: null },
    { order_id: 7002, type: 'order.placed', status: 'ORDER_PLACED', previous_status: null }
  ], 'one order.placed each')
  t.equal((await notificationsOf(database)).length, 2, 'and a notification for each, no other')
  t.same(await notified(database, [7001, 7002]), ['7001:order.placed:seller', '7002:order.placed:seller'], 'to the seller only')
  t.same(await sql`select order_id::int, amount::text, status from payout_schedules`, [{ order_id: 7002, amount: '1180.00', status: 'ON_HOLD' }])

  // What goes in is what comes out: the seller's read, field for field.
  const token = await credential(database, 1, 'access-token')
  const read = await graphql<any, unknown>(app, token, `{ orders(input: {page: 1, limit: 10}) { nodes {
    orderId orderNumber serviceOrderNumber orderStatus deliveryType paymentMode companyId storeId retailerName isActionable
    currencyCode orderTotal orderTotalFinal orderTaxAmount orderCessAmount appliedPoints totalExtraCharges roundOff
    totalItemsInOrder createdAt retailer { id name phone syncId } shop { id syncId retailerSyncId shopName }
    orderItems { id skuId quantity offer { id offerSyncId finalPriceWithTax } item { id itemName } } } } }`)
  t.equal(read.statusCode, 200)
  const [node] = read.body.data.orders.nodes
  const sent = order(7001)
  t.same(node, {
    orderId: '7001',
    orderNumber: sent.orderNumber,
    serviceOrderNumber: sent.serviceOrderNumber,
    orderStatus: 'ORDER_PLACED',
    deliveryType: 'REGULAR',
    paymentMode: 'ONLINE_PAID',
    companyId: 1,
    storeId: 11,
    retailerName: 'Asha Rao',
    isActionable: true,
    currencyCode: 'INR',
    orderTotal: 1180,
    orderTotalFinal: 1180,
    orderTaxAmount: 180.5,
    orderCessAmount: 0,
    appliedPoints: 0,
    totalExtraCharges: 0,
    roundOff: -0.25,
    totalItemsInOrder: 3,
    createdAt: '2026-11-25T04:00:00.123456Z',
    retailer: { id: 501, name: 'Asha Rao', phone: '+919800000001', syncId: 'RET-1' },
    shop: { id: 601, syncId: 'SHOP-1', retailerSyncId: 'RET-1', shopName: 'Rao Kirana' },
    orderItems: [
      { id: '70011', skuId: 100, quantity: 2, offer: { id: 100, offerSyncId: 'VAR-1', finalPriceWithTax: 100 }, item: { id: 100, itemName: 'Tea 1' } },
      { id: '70012', skuId: 100, quantity: 1.5, offer: { id: 101, offerSyncId: null, finalPriceWithTax: 50 }, item: { id: 100, itemName: 'Tea 1' } },
      { id: '70013', skuId: 100, quantity: 1, offer: { id: 100, offerSyncId: 'VAR-1', finalPriceWithTax: 100 }, item: { id: 100, itemName: 'Tea 1' } }
    ]
  })
  const other = await graphql<any, unknown>(app, await credential(database, 2, 'access-token'),
    '{ orders(input: {page: 1, limit: 10}) { nodes { orderId retailer { syncId } } } }')
  t.same(other.body.data.orders.nodes, [{ orderId: '7002', retailer: { syncId: 'RET-2-OWN' } }], 'each seller reads its own sync ID of the same retailer')

  // A re-send changes nothing; the same orderId with other content is a conflict that names the fields.
  const placementState = async () => {
    await notificationsOf(database) // dispatch: a delivery for any new event
    return sql`select (select count(*) from order_status_history)::int as h, (select count(*) from seller_events)::int as e,
      (select count(*) from deliveries)::int as n, (select grabbed_quantity::text from daily_deals where id = 100) as g,
      (select updated_at::text from orders where id = 7001) as u`
  }
  const before = await placementState()
  const again = await orders([order(7001, { orderTotalFinal: '1180.00', roundOff: -0.25 })])
  t.same(again.json().data, { received: 1, inserted: 0, updated: 0, unchanged: 1, failed: 0, errors: [] })
  const changed = await orders([order(7001, { orderTotal: 1, orderItems: [{ id: '70011', offerId: 100, quantity: 3, dealId: 100 }] })])
  t.same(changed.json().data.errors, [errorOf(0, '7001', O.conflict(7001, 'orderTotal, orderItems'))])
  t.same(await placementState(), before, 'no new history, event or notification')
})

t.test('placing: every refusal names its field; the other rows are placed', async (t) => {
  const { orders, sql } = await setup(t)
  await orders([order(7001)])
  const rows = [
    order(8000, { companyId: 99 }),
    order(8001, { storeId: 21 }),
    order(8002, { retailerId: 502 }),
    order(8003, { shopId: 602 }),
    order(8004, { orderItems: [{ id: '80041', offerId: 200, quantity: 1 }] }),
    order(8005, { orderItems: [{ id: '80051', offerId: 101, quantity: 1, dealId: 100 }] }),
    order(8006, { orderItems: [{ id: '80061', offerId: 100, quantity: 1, dealId: 101 }] }),
    order(8007, { orderItems: [{ id: '80071', offerId: 100, quantity: 9, dealId: 100 }] }),
    order(8008, { orderNumber: 'ORD-7001' }),
    order(8009, { orderItems: [{ id: '70011', offerId: 100, quantity: 1 }] }),
    order(8010, { orderId: 'x', placedAt: '2026-11-25 09:30', paymentMode: 'CASH', orderTotal: -1, currencyCode: 'inr', orderItems: [] }),
    order(8011, { orderItems: [{ id: '80111', offerId: 100, quantity: 0 }, { id: '80111', offerId: 100, quantity: 1 }] }),
    order(8012, { orderNumber: 'ORD-8013' }),
    order(8013),
    order(8014, { orderItems: [{ id: '80141', offerId: 100, quantity: 8, dealId: 100 }] }),
    order(8015, { orderItems: [{ id: '80151', offerId: 100, quantity: 0.001, dealId: 100 }] }),
    order(8016, { placedAt: '2026-02-30T10:00:00Z' })
  ]
  const res = await orders(rows)
  t.equal(res.statusCode, 200)
  const { data } = res.json()
  t.same(data.errors, [
    errorOf(0, '8000', E.sellerNotFound(99)),
    errorOf(1, '8001', O.storeNotFound(21)),
    errorOf(2, '8002', O.retailerNotLinked(502)),
    errorOf(3, '8003', O.shopNotFound(602, 501)),
    errorOf(4, '8004', O.offerNotFound(0, 200)),
    errorOf(5, '8005', O.dealNotFound(0, 100, 101)),
    errorOf(6, '8006', O.dealNotThatDay(0, 101, '2026-11-24', DAY)),
    errorOf(7, '8007', O.dealSoldOut(0, 100, '8')),
    errorOf(8, '8008', O.orderNumberTaken('ORD-7001')),
    errorOf(9, '8009', O.lineIdTaken(0, 70011)),
    { index: 10, id: null, code: O.orderId.code, error: [O.orderId, O.currencyCode, O.paymentMode, O.amount('orderTotal', false), O.placedAt, O.lines].map((e) => e.text).join('; ') },
    { index: 11, id: '8011', code: O.quantity(0).code, error: [O.quantity(0), O.lineIdTwice(1, 80111, 'at orderItems[0]')].map((e) => e.text).join('; ') },
    errorOf(13, '8013', O.orderNumberTwice('ORD-8013', 12)),
    errorOf(14, '8014', O.dealSoldOut(0, 100, '6')),
    errorOf(16, '8016', O.placedAt)
  ])
  t.same({ inserted: data.inserted, failed: data.failed }, { inserted: 2, failed: 15 })
  // A text names the values it is about, never a field's name in place of its value.
  t.equal(data.errors[3].error, 'shopId 602 is not a shop of retailer 501')
  t.equal(data.errors[5].error, 'orderItems[0].dealId 100 is not a deal of this seller for offer 101')
  for (const e of data.errors as Array<{ error: string, code: string }>) {
    if (!/_(?:NOT_FOUND|NOT_LINKED|NOT_THAT_DAY|SOLD_OUT|TAKEN)$/.test(e.code)) continue
    // A reference refusal: every id field its text mentions is followed by its value.
    t.notMatch(e.error, /\b(?:retailerId|offerId|companyId|storeId|shopId|dealId)\b(?! \d)/, `no field name in place of a value: ${e.error}`)
  }
  t.same((await sql`select id::int from orders order by id`).map((r) => r.id), [7001, 8012, 8015])
  t.same(await sql`select grabbed_quantity::text from daily_deals where id = 100`, [{ grabbed_quantity: '4.001' }],
    'a refused row grabs nothing; a later row of the batch sees an earlier one\'s grab')
  const dup = await orders([order(9001), order(9001), order(9002, { orderNumber: 'ORD-9001' }), order(9003, { orderItems: [{ id: '90011', offerId: 100, quantity: 1 }] })])
  t.same(dup.json().data.errors, [
    errorOf(1, '9001', O.orderIdTwice(9001, 0)),
    errorOf(2, '9002', O.orderNumberTwice('ORD-9001', 0)),
    errorOf(3, '9003', O.lineIdTwice(0, 90011, 'in the row at index 0'))
  ])
})

t.test('transitions: cancel and deliver through the state machine, each effect once', async (t) => {
  const { app, database, orders, transition, sql } = await setup(t)
  await orders([order(1), order(2), order(3), order(4, { paymentMode: 'PREPAID', orderItems: [{ id: '41', offerId: 100, quantity: 1, dealId: 100 }] })])
  const apiKey = await credential(database, 1, 'api-key')
  const accept = (ids: number[]) => app.inject({
    method: 'POST',
    url: STATUS_UPDATE_PATH,
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { order_status: ids.map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })) }
  })
  t.equal((await accept([2, 3, 4])).json().data.successful, 3)
  const [{ balance: afterAccept }] = await sql`select points_balance::text as balance from sellers where id = 1`
  t.equal(afterAccept, '646.00', 'three acceptances at 10 % of 1180')

  const res = await transition([
    { Order_id: '1', Order_Status: 'CANCELLED', reason: 'Customer cancelled' },
    { Order_id: 2, Order_Status: 'CANCELLED' },
    { Order_id: 3, Order_Status: 'DELIVERED' },
    { Order_id: 4, Order_Status: 'CANCELLED' },
    { Order_id: 999, Order_Status: 'DELIVERED' }
  ])
  t.same(res.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: StatusUpdateText.success,
    data: { successful: 4, failed: 1, errors: [orderError(4, 999, OrderErrors.notFound)], unchangedOrderIds: [] }
  })
  t.same(await sql`select id::int, status, is_actionable from orders order by id`, [
    { id: 1, status: 'CANCELLED', is_actionable: false }, { id: 2, status: 'CANCELLED', is_actionable: false },
    { id: 3, status: 'DELIVERED', is_actionable: false }, { id: 4, status: 'CANCELLED', is_actionable: false }
  ])
  t.same(await sql`select order_id::int, kind, amount::text from points_ledger where order_id is not null order by order_id, id`, [
    { order_id: 2, kind: 'ORDER_ACCEPTANCE', amount: '-118.00' }, { order_id: 2, kind: 'ORDER_CANCELLATION_REFUND', amount: '118.00' },
    { order_id: 3, kind: 'ORDER_ACCEPTANCE', amount: '-118.00' },
    { order_id: 4, kind: 'ORDER_ACCEPTANCE', amount: '-118.00' }, { order_id: 4, kind: 'ORDER_CANCELLATION_REFUND', amount: '118.00' }
  ], 'an accepted order\'s points come back once; a placed one had none to give back')
  const ledgerEqualsBalance = async () => (await sql`select s.points_balance = (select sum(amount) from points_ledger l where l.seller_id = s.id) as ok
    from sellers s where s.id = 1`)[0].ok
  t.ok(await ledgerEqualsBalance(), 'the balance equals the ledger')
  t.same(await sql`select order_id::int, amount::text from refunds order by order_id`, [{ order_id: 1, amount: '1180.00' }, { order_id: 2, amount: '1180.00' }],
    'refunds for the cancelled orders paid online')
  t.same(await sql`select status from payout_schedules where order_id = 4`, [{ status: 'CANCELLED' }])
  t.same(await sql`select grabbed_quantity::text from daily_deals where id = 100`, [{ grabbed_quantity: '2.000' }],
    'deal quantity of the cancelled orders given back (order 3 keeps its 2)')
  t.same(await sql`select key from graphile_worker._private_jobs where key like 'auto-reject:%'`, [], 'no auto-rejection left for them')
  t.same((await notified(database, [1, 2, 3, 4])).filter((n) => !/:order\.(placed|accepted):/.test(n)), [
    '1:order.cancelled:customer', '1:order.cancelled:messaging', '1:order.cancelled:seller',
    '2:order.cancelled:customer', '2:order.cancelled:messaging', '2:order.cancelled:seller',
    '3:order.delivered:seller', '4:order.cancelled:customer', '4:order.cancelled:messaging', '4:order.cancelled:seller'
  ], 'a cancellation to seller, customer and retailer; a delivery to the seller')
  t.same(await sql`select order_id::int, from_status, to_status, source, reason from order_status_history where source = 'platform' and from_status is not null order by order_id`, [
    { order_id: 1, from_status: 'ORDER_PLACED', to_status: 'CANCELLED', source: 'platform', reason: 'Customer cancelled' },
    { order_id: 2, from_status: 'ORDER_ACCEPTED', to_status: 'CANCELLED', source: 'platform', reason: null },
    { order_id: 3, from_status: 'ORDER_ACCEPTED', to_status: 'DELIVERED', source: 'platform', reason: null },
    { order_id: 4, from_status: 'ORDER_ACCEPTED', to_status: 'CANCELLED', source: 'platform', reason: null }
  ])

  // Again: nothing happens a second time. A transition the table does not have is refused.
  const snapshot = async () => {
    await notificationsOf(database) // dispatch: a delivery for any new event
    return sql`select (select count(*) from points_ledger)::int as l, (select count(*) from refunds)::int as r,
      (select count(*) from seller_events)::int as e, (select count(*) from deliveries)::int as n,
      (select grabbed_quantity::text from daily_deals where id = 100) as g`
  }
  const before = await snapshot()
  const again = await transition([{ Order_id: 2, Order_Status: 'CANCELLED' }, { Order_id: 3, Order_Status: 'DELIVERED' }, { Order_id: 1, Order_Status: 'DELIVERED' }])
  t.same(again.json().data, {
    successful: 2,
    failed: 1,
    unchangedOrderIds: [2, 3],
    errors: [{ index: 2, orderId: 1, error: OrderErrors.cannotChange('CANCELLED', 'DELIVERED').text, code: OrderErrors.cannotChange('CANCELLED', 'DELIVERED').code }]
  })
  t.same(await snapshot(), before)
  t.ok(await ledgerEqualsBalance())

  // The seller completes a delivered order; it cannot cancel, and the platform cannot accept.
  const complete = await app.inject({
    method: 'POST',
    url: STATUS_UPDATE_PATH,
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { order_status: [{ Order_id: 3, Order_Status: 'ORDER_COMPLETED_BY_SELLER' }, { Order_id: 1, Order_Status: 'CANCELLED' }] }
  })
  t.equal(complete.statusCode, 400, 'CANCELLED is not a seller\'s status: the invalid status\'s 400 with data')
  t.same(complete.json().data.errors, [orderError(1, 1, OrderErrors.invalidStatus)])
  t.same(await sql`select status from orders where id = 3`, [{ status: 'ORDER_COMPLETED_BY_SELLER' }])
  const platformAccept = await transition([{ Order_id: 1, Order_Status: 'ORDER_ACCEPTED' }])
  t.equal(platformAccept.statusCode, 400)
  t.equal(platformAccept.json().data.errors[0].code, OrderErrors.invalidStatus.code)
})

t.test('a suspended seller\'s orders are placed and cancelled, not accepted', async (t) => {
  const { app, database, orders, transition, sql } = await setup(t)
  const placed = await orders([order(5, { companyId: 3, storeId: 31, shopId: null, orderItems: [{ id: '51', offerId: 300, quantity: 1 }] }),
    order(6, { companyId: 3, storeId: 31, shopId: null, orderItems: [{ id: '61', offerId: 300, quantity: 1 }] })])
  t.equal(placed.json().data.inserted, 2)
  const apiKey = await credential(database, 3, 'api-key')
  const accept = await app.inject({
    method: 'POST',
    url: STATUS_UPDATE_PATH,
    headers: { authorization: `Bearer ${apiKey}` },
    payload: { order_status: [{ Order_id: 5, Order_Status: 'ORDER_ACCEPTED' }] }
  })
  t.same(accept.json().data.errors.map((e: { code: string }) => e.code), [OrderErrors.notEligible.code])
  t.equal((await transition([{ Order_id: 5, Order_Status: 'CANCELLED' }])).json().data.successful, 1)
  t.same(await sql`select id::int, status from orders order by id`, [{ id: 5, status: 'CANCELLED' }, { id: 6, status: 'ORDER_PLACED' }])
})

t.test('races: a batch and its re-send, and placement, acceptance and cancellation on the same orders', async (t) => {
  const { app, database, orders, transition, sql } = await setup(t)
  const batch = Array.from({ length: 40 }, (_, i) => order(100 + i, { orderItems: [{ id: String(10_000 + i), offerId: 100, quantity: '0.25', dealId: 100 }] }))
  const [a, b] = await Promise.all([orders(batch), orders(batch)])
  t.equal(a.statusCode, 200)
  t.equal(b.statusCode, 200)
  const counts = [a.json().data, b.json().data]
  t.same(counts.map((d) => d.inserted + d.unchanged), [40, 40])
  t.equal(counts[0].inserted + counts[1].inserted, 40, 'each order placed by exactly one of them')
  t.same(await sql`select (select count(*) from orders)::int as o, (select count(*) from order_status_history)::int as h,
    (select count(*) from seller_events)::int as e, (select grabbed_quantity::text from daily_deals where id = 100) as g,
    (select live_orders::int from order_counts where seller_id = 1) as live`, [{ o: 40, h: 40, e: 40, g: '10.000', live: 40 }])
  t.same((await notificationsOf(database)).map((n) => `${n.type}:${n.channel}`), Array(40).fill('order.placed:seller'),
    'one notification per order placed, none for the re-send')

  const apiKey = await credential(database, 1, 'api-key')
  for (let round = 0; round < 5; round++) {
    const id = 500 + round
    const [, accepted, cancelled] = await Promise.all([
      orders([order(id, { orderItems: [{ id: String(id * 10), offerId: 101, quantity: 1 }] })]),
      app.inject({ method: 'POST', url: STATUS_UPDATE_PATH, headers: { authorization: `Bearer ${apiKey}` }, payload: { order_status: [{ Order_id: id, Order_Status: 'ORDER_ACCEPTED' }] } }),
      transition([{ Order_id: id, Order_Status: 'CANCELLED' }])
    ])
    t.equal(accepted.statusCode, 200)
    t.equal(cancelled.statusCode, 200)
  }
  const history = await sql`select order_id::int, array_agg(to_status::text order by id) as steps from order_status_history
    where order_id >= 500 group by order_id order by order_id`
  for (const { order_id: id, steps } of history) {
    // Whichever came first, the order went through the table: never accepted after a cancellation.
    t.ok(['ORDER_PLACED', 'ORDER_PLACED,CANCELLED', 'ORDER_PLACED,ORDER_ACCEPTED', 'ORDER_PLACED,ORDER_ACCEPTED,CANCELLED']
      .includes(steps.join(',')), `order ${id}: ${steps.join(' → ')}`)
  }
  t.same(await sql`select order_id, kind from points_ledger where order_id >= 500 group by order_id, kind having count(*) > 1`, [],
    'at most one entry of each kind per order')
  const [{ ok }] = await sql`select s.points_balance = (select sum(amount) from points_ledger l where l.seller_id = s.id) as ok from sellers s where id = 1`
  t.ok(ok, 'the balance equals the ledger after the races')
})

t.test('the platform key and the seller credentials never cross (BOLA)', async (t) => {
  const { app, database, key, orders, sql } = await setup(t)
  await orders([order(1)])
  for (const kind of ['api-key', 'access-token'] as const) {
    const secret = await credential(database, 1, kind)
    for (const [url, body] of [[PLATFORM_ORDERS_PATH, [order(2)]], [PLATFORM_ORDER_STATUS_PATH, { order_status: [{ Order_id: 1, Order_Status: 'CANCELLED' }] }]] as const) {
      const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret }, payload: body })
      t.equal(res.statusCode, 401, `${kind} on ${url}`)
      const missing = await app.inject({ method: 'POST', url, payload: body })
      t.same(res.json(), missing.json(), 'the same body as a missing credential')
    }
  }
  const onSeller = await app.inject({
    method: 'POST',
    url: STATUS_UPDATE_PATH,
    headers: { authorization: `Bearer ${key}` },
    payload: { order_status: [{ Order_id: 1, Order_Status: 'ORDER_ACCEPTED' }] }
  })
  t.equal(onSeller.statusCode, 401, 'the platform key cannot accept a seller\'s order')
  const read = await graphql(app, key, '{ orders(input: {page: 1, limit: 1}) { nodes { orderId } } }')
  t.not(read.statusCode, 200, 'nor read the seller\'s orders')
  t.same(await sql`select count(*)::int as n from orders`, [{ n: 1 }])
  t.same(await sql`select status from orders where id = 1`, [{ status: 'ORDER_PLACED' }])
})
