import t from 'tap'
import {
  buyerKey, createClient, GraphqlError, isActionable, outletKey, productKey, UnauthorizedError, variantKey,
  type OrdersDocument, type StatusChange
} from '@order-exchange/client'
import { liveOrders, serve } from '../helpers/client.js'

/* client.orders against the real service: page walks, mapping helpers, batch status updates. */

t.test('a page walk sees every order exactly once while statuses change between pages', async (t) => {
  const served = await serve(t, { orders: 300 })
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken, apiKey: served.apiKey })
  const expected = (await liveOrders(served)).map((o) => o.id)
  t.ok(expected.length > 100, `${expected.length} orders, several pages`)
  const placed = await served.database.sql`select id::text from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by id`
  const toAccept = placed.map((r) => r.id as string)

  const seen: string[] = []
  let pages = 0
  for await (const page of client.orders.pages({ limit: 20 })) {
    pages++
    seen.push(...page.nodes.map((o) => o.orderId))
    // Between pages, the seller acts on orders on pages read and not yet read.
    const batch = toAccept.splice(0, 3).map((id): StatusChange => ({ orderId: id, status: 'ORDER_ACCEPTED' }))
    if (batch.length > 0) t.ok((await client.orders.updateStatuses(batch)).every((r) => r.outcome === 'changed'))
  }
  t.equal(pages, Math.ceil(expected.length / 20), 'from page 1 until hasNext is false')
  t.equal(new Set(seen).size, seen.length, 'no order twice')
  t.same(seen, expected, 'every order, in the service\'s order')
})

t.test('mapping helpers read real orders: variant, product, outlet, buyer (syncId, else phone), actionable', async (t) => {
  const served = await serve(t, { orders: 200 })
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const orders = []
  for await (const page of client.orders.pages({ limit: 100 })) orders.push(...page.nodes)
  const withoutSyncId = orders.filter((o) => o.retailer.syncId === null)
  t.ok(withoutSyncId.length > 0, 'some retailers have no syncId')
  for (const o of withoutSyncId) t.equal(buyerKey(o), o.retailer.phone, `order ${o.orderId}: the buyer is its phone`)
  for (const o of orders.filter((o) => o.retailer.syncId !== null)) t.equal(buyerKey(o), o.retailer.syncId)
  const shopless = orders.filter((o) => o.shop === null)
  t.ok(shopless.length > 0, 'some orders have no shop')
  for (const o of shopless) t.equal(outletKey(o), null)
  for (const o of orders.filter((o) => o.shop !== null)) t.equal(outletKey(o), o.shop!.syncId)
  for (const o of orders) {
    t.equal(isActionable(o), o.isActionable, `order ${o.orderId} (${o.orderStatus}): isActionable as the service says`)
    for (const line of o.orderItems) {
      t.equal(variantKey(line), line.offer.offerSyncId)
      t.equal(productKey(line), line.item.itemSyncId)
    }
  }
})

t.test('a caller\'s own typed document selects fewer fields', async (t) => {
  const served = await serve(t, { orders: 40 })
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  // A string document typed as codegen's client preset would type it.
  const Ids = 'query Ids($input: OrderListInput) { orders(input: $input) { pageInfo { page hasNext } nodes { orderId orderStatus } } }' as unknown as
    OrdersDocument<{ orderId: string, orderStatus: string }>
  const nodes = []
  for await (const page of client.orders.pages({ limit: 7 }, { document: Ids })) nodes.push(...page.nodes)
  t.same(nodes.map((n) => Object.keys(n).sort()), nodes.map(() => ['orderId', 'orderStatus']), 'only what was asked for')
  t.same(nodes.map((n) => n.orderId), (await liveOrders(served)).map((o) => o.id))

  const bad = 'query { orders(input: {limit: 2}) { nodes { nope } } }' as unknown as OrdersDocument<{ nope: string }>
  const error = await t.rejects(async () => { for await (const page of client.orders.pages({}, { document: bad })) t.fail(`no page expected: ${page.pageInfo.page}`) })
  t.ok(error instanceof GraphqlError, 'a document the service refuses is a GraphqlError')
  t.equal((error as GraphqlError).code, 'GRAPHQL_VALIDATION_FAILED')
  const input = await t.rejects(async () => { for await (const page of client.orders.pages({ fromDate: 'yesterday' })) t.fail(`no page expected: ${page.pageInfo.page}`) })
  t.equal((input as GraphqlError).code, 'BAD_USER_INPUT', 'a bad input value too')
})

t.test('a 2,500-item status batch goes out in chunks; one result per item, in input order', async (t) => {
  const served = await serve(t, { orders: 4300 })
  const requests: number[] = []
  const fetchCounting: typeof fetch = async (input, init) => {
    if (String(input).endsWith('/update-status')) requests.push(JSON.parse(String(init?.body)).order_status.length)
    return fetch(input, init)
  }
  const client = createClient({ baseUrl: served.baseUrl, apiKey: served.apiKey, fetch: fetchCounting })
  const rows = await served.database.sql`select id::text, status from orders where seller_id = 1 and not is_deleted order by id`
  t.ok(rows.length >= 2500, `${rows.length} orders of seller 1`)
  const deleted = await served.database.sql`select id from orders where seller_id = 1 and is_deleted order by id limit 1`

  // Every kind of outcome, decided up front from each order's status; the expected result beside it.
  const changes: StatusChange[] = []
  const expected: Array<{ outcome: string, error?: string }> = []
  rows.slice(0, 2497).forEach((row, i) => {
    const status = row.status as string
    if (status === 'ORDER_PLACED' && i % 2 === 0) {
      changes.push({ orderId: row.id, status: 'ORDER_REJECTED_BY_SELLER', reason: 'Out of stock' })
      expected.push({ outcome: 'changed' })
    } else if (status === 'ORDER_PLACED') {
      changes.push({ orderId: Number(row.id), status: 'ORDER_REJECTED_BY_SELLER' })
      expected.push({ outcome: 'error', error: 'Reason is required when rejecting an order' })
    } else if (status === 'ORDER_ACCEPTED') {
      changes.push({ orderId: row.id, status: 'ORDER_ACCEPTED' })
      expected.push({ outcome: 'unchanged' })
    } else {
      changes.push({ orderId: row.id, status: 'ORDER_COMPLETED_BY_SELLER' })
      expected.push(status === 'ORDER_COMPLETED_BY_SELLER'
        ? { outcome: 'unchanged' }
        : status === 'DELIVERED' ? { outcome: 'changed' } : { outcome: 'error', error: `Cannot change order status from ${status} to ORDER_COMPLETED_BY_SELLER` })
    }
  })
  changes.push({ orderId: 999_999_999, status: 'ORDER_ACCEPTED' })
  expected.push({ outcome: 'error', error: 'Order not found in system' })
  changes.push({ orderId: Number(deleted[0]!.id), status: 'ORDER_ACCEPTED' })
  expected.push({ outcome: 'error', error: 'Order not found in system' })
  changes.push({ orderId: '12abc', status: 'ORDER_ACCEPTED' })
  expected.push({ outcome: 'error', error: 'Order_id must be a positive integer' })
  t.equal(changes.length, 2500)
  for (const kind of ['changed', 'unchanged', 'error']) t.ok(expected.some((e) => e.outcome === kind), `some ${kind}`)

  const results = await client.orders.updateStatuses(changes)
  t.same(requests, [1000, 1000, 500], 'three requests within the service\'s limit')
  t.equal(results.length, 2500)
  t.same(results.map((r) => r.index), changes.map((_, i) => i), 'in input order')
  t.same(results.map((r) => r.orderId), changes.map((c) => c.orderId), 'each with its order id as given')
  t.same(results.map((r) => r.outcome === 'error' ? { outcome: 'error', error: r.error } : { outcome: r.outcome }), expected, 'each item\'s own outcome')
  const codes = new Map(results.flatMap((r) => r.outcome === 'error' ? [[r.error.startsWith('Cannot change') ? 'transition' : r.error, r.code]] : []))
  t.same(Object.fromEntries(codes), {
    'Reason is required when rejecting an order': 'REASON_REQUIRED',
    transition: 'TRANSITION_NOT_ALLOWED',
    'Order not found in system': 'ORDER_NOT_FOUND',
    'Order_id must be a positive integer': 'INVALID_ORDER_ID'
  }, 'each error with its code')

  const again = await client.orders.updateStatuses(changes.slice(0, 10))
  t.same(again.map((r) => r.outcome), expected.slice(0, 10).map((e) => e.outcome === 'changed' ? 'unchanged' : e.outcome), 'sent again: what changed is now unchanged')
})

t.test('an order asked for twice goes in one request, lined up by index; an invalid status is a result', async (t) => {
  const served = await serve(t, { orders: 60 })
  const requests: unknown[] = []
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    fetch: async (input, init) => { requests.push(JSON.parse(String(init?.body))); return fetch(input, init) }
  })
  const [placed] = await served.database.sql`select id from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by id limit 1`
  const id = Number(placed!.id)
  const results = await client.orders.updateStatuses([
    { orderId: id, status: 'ORDER_ACCEPTED' },
    { orderId: id, status: 'ORDER_COMPLETED_BY_SELLER' },
    { orderId: id, status: 'SHIPPED' as 'ORDER_ACCEPTED' }
  ])
  t.equal(requests.length, 1, 'one request: the service reports each failed item by its index')
  t.same(results, [
    { index: 0, orderId: id, outcome: 'changed' },
    { index: 1, orderId: id, outcome: 'changed' },
    { index: 2, orderId: id, outcome: 'error', error: 'Invalid order status', code: 'INVALID_STATUS' }
  ], 'the 400 invalid-status answer is a result for its item')
})

t.test('a repeated order with an error between: each result at its own index', async (t) => {
  const served = await serve(t, { orders: 60 })
  let requests = 0
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    fetch: async (input, init) => { requests++; return fetch(input, init) }
  })
  const [placed] = await served.database.sql`select id from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by id limit 1`
  const id = Number(placed!.id)
  const results = await client.orders.updateStatuses([
    { orderId: id, status: 'ORDER_ACCEPTED' },
    { orderId: id, status: 'ORDER_REJECTED_BY_SELLER' },
    { orderId: 'ERP-1', status: 'ORDER_ACCEPTED' },
    { orderId: id, status: 'ORDER_ACCEPTED' }
  ], { chunkSize: 3 })
  t.equal(requests, 2, 'batches of chunkSize, however the orders repeat')
  t.same(results, [
    { index: 0, orderId: id, outcome: 'changed' },
    { index: 1, orderId: id, outcome: 'error', error: 'Reason is required when rejecting an order', code: 'REASON_REQUIRED' },
    { index: 2, orderId: 'ERP-1', outcome: 'error', error: 'Order_id must be a positive integer', code: 'INVALID_ORDER_ID' },
    { index: 3, orderId: id, outcome: 'unchanged' }
  ])
})

t.test('request-level failures are typed errors', async (t) => {
  const served = await serve(t, { orders: 10 })
  const wrong = createClient({ baseUrl: served.baseUrl, accessToken: 'oxs_test_at_nope', apiKey: 'oxs_test_ak_nope' })
  const unauthorized = await t.rejects(wrong.orders.updateStatuses([{ orderId: 1, status: 'ORDER_ACCEPTED' }]))
  t.ok(unauthorized instanceof UnauthorizedError)
  t.match(unauthorized, { status: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED', body: { error: true, statusCode: 401, message: 'Unauthorized' } })
  const graphql = await t.rejects(async () => { for await (const page of wrong.orders.pages()) t.fail(`no page expected: ${page.pageInfo.page}`) })
  t.ok(graphql instanceof UnauthorizedError, 'the GraphQL 401 too')
  t.match(graphql, { status: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED', body: { data: null, errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] } })
  const noKey = createClient({ baseUrl: served.baseUrl })
  await t.rejects(noKey.orders.updateStatuses([]), { name: 'OrderExchangeError', message: 'status updates need an apiKey' })
})
