import t from 'tap'
import { print } from 'graphql'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import type { TestDatabase } from '../helpers/build.js'
import { holdInTransaction } from '../helpers/held-transaction.js'

function graphql (app: FastifyInstance, token: string, query: string, variables: Record<string, unknown> = {}) {
  return app.inject({
    method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables }
  })
}

/*
 * Fair GraphQL cost (issue 21): a query is charged for the page it asked for (its own variables), billed
 * for what came back, and the difference goes back to the bucket. The expected figures are worked out
 * here by hand from the cost measure (docs/api/limits.md): each field 1 point, a field that costs a
 * statement 250 more, each list element its fields again.
 */

const DOCUMENT = `query Page($input: OrderListInput, $noLines: Boolean = false) {
  orders(input: $input) {
    pageInfo { total }
    nodes { orderId orderItems @skip(if: $noLines) { id sku { offers { id } itemSellingUnits { id } } } }
  }
}`

/**
 * orders 251 (a statement), pageInfo 1, total 1, nodes 1; per order: orderId 1, orderItems 1; per line:
 * id 1, sku 1, offers 1, itemSellingUnits 1; per offer of a line's SKU 1; per selling unit of a line's SKU 1.
 */
const billed = (orders: number, lines: number, offers: number, units: number): number =>
  254 + 2 * orders + 4 * lines + offers + units
/** The estimate: `limit` orders of 10 lines, 3 offers and 3 selling units per SKU (limits.ts LIST_SIZE). */
const estimated = (limit: number): number => billed(limit, 10 * limit, 30 * limit, 30 * limit)

const BUDGET = { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '1000000', GRAPHQL_COST_RESTORE_PER_SECOND: '1' }

/** What the first `limit` orders of seller 1 hold, counted in SQL (the page's own order). */
async function pageCounts (database: TestDatabase, limit: number) {
  const [row] = await database.sql<Array<{ orders: number, lines: number, offers: number, units: number }>>`
    with page as (select id from orders where seller_id = 1 and not is_deleted order by created_at, id limit ${limit})
    select (select count(*) from page)::int as orders,
      (select count(*) from page p join order_items oi on oi.order_id = p.id)::int as lines,
      (select count(*) from page p join order_items oi on oi.order_id = p.id join offers o on o.sku_id = oi.sku_id)::int as offers,
      (select count(*) from page p join order_items oi on oi.order_id = p.id join selling_units u on u.sku_id = oi.sku_id)::int
        as units`
  return row!
}

for (const passThrough of [true, false]) {
  const path = passThrough ? 'pass-through' : 'standard execution'

  t.test(`${path}: requested from the request's own page size, billed for what came back`, async (t) => {
    const { app, database } = await build(t, { ...BUDGET, GRAPHQL_PASS_THROUGH: String(passThrough) })
    await seedDemo(database, 60)
    const token = await credential(database, 1, 'access-token')
    let available = 1_000_000
    for (const limit of [5, 25, 100]) {
      const res = await graphql(app, token, DOCUMENT, { input: { limit } })
      t.equal(res.statusCode, 200)
      const cost = res.json().extensions.cost
      t.equal(cost.requestedQueryCost, estimated(limit), `limit ${limit}: requested ${cost.requestedQueryCost}`)
      const counts = await pageCounts(database, limit)
      t.equal(res.json().data.orders.nodes.length, counts.orders)
      t.equal(cost.actualQueryCost, billed(counts.orders, counts.lines, counts.offers, counts.units),
        `limit ${limit}: billed for ${JSON.stringify(counts)}`)
      t.ok(cost.actualQueryCost <= cost.requestedQueryCost)
      // The bucket refills at 1 point a second: a second may have passed.
      available -= cost.actualQueryCost
      const now = cost.throttleStatus.currentlyAvailable
      t.ok(now >= available && now <= available + 2,
        `the refund shows: ${cost.throttleStatus.currentlyAvailable} available, ${available} expected`)
      available = cost.throttleStatus.currentlyAvailable
      t.equal(res.headers['ratelimit-remaining'], String(available))
    }
    // The page size of a variable with a default, and @skip resolved with the request's values.
    const skipped = await graphql(app, token, DOCUMENT, { input: { limit: 10 }, noLines: true })
    t.equal(skipped.json().extensions.cost.requestedQueryCost, 254 + 10, 'orderItems skipped: orderId alone')
    const byDefault = await graphql(app, token, DOCUMENT.replace('$input: OrderListInput', '$input: OrderListInput = {limit: 7}'), {})
    t.equal(byDefault.json().extensions.cost.requestedQueryCost, estimated(7), 'a variable\'s default page size')
    const literal = await graphql(app, token, '{ orders(input: {limit: 3}) { nodes { orderId } } }')
    t.equal(literal.json().extensions.cost.requestedQueryCost, 252 + 3, 'a literal page size')
  })
}

t.test('a query that fails after it was charged gets everything back', async (t) => {
  const { app, database } = await build(t, { ...BUDGET, DB_LOCK_TIMEOUT_MS: '200' })
  await seedDemo(database, 30)
  const token = await credential(database, 1, 'access-token')
  // The read waits on a table lock past DB_LOCK_TIMEOUT_MS, and PostgreSQL cancels it.
  const lock = await holdInTransaction(database.sql, (tx) => tx`lock table outstanding_shipments in access exclusive mode`)
  const failed = await graphql(app, token, '{ outstandingShipments { nodes { outstandingQuantity } } }')
  await lock.release()
  t.ok(failed.json().errors?.length > 0, 'the query failed')
  t.equal(failed.json().data, null)
  const next = await graphql(app, token, '{ seller { name } }')
  const cost = next.json().extensions.cost
  t.ok(cost.throttleStatus.currentlyAvailable >= 1_000_000 - cost.actualQueryCost,
    `only the next query's ${cost.actualQueryCost} points are spent: ${cost.throttleStatus.currentlyAvailable} available`)
})

t.test('a client walking 3,000 orders page by page, full selection, default budget: never refused', async (t) => {
  const { app, database } = await build(t, { RATE_LIMIT_ENABLED: 'true' })
  await seedDemo(database, 5_200)
  const token = await credential(database, 1, 'access-token')
  const query = print(OrdersDocument)
  let orders = 0
  let refused = 0
  let lowest = Infinity
  for (let page = 1; ; page++) {
    const res = await graphql(app, token, query, { input: { page, limit: 100 } })
    if (res.statusCode === 429) { refused++; break }
    t.equal(res.statusCode, 200)
    const body = res.json()
    orders += body.data.orders.nodes.length
    lowest = Math.min(lowest, body.extensions.cost.throttleStatus.currentlyAvailable)
    if (!body.data.orders.pageInfo.hasNext) break
  }
  t.ok(orders >= 3_000, `${orders} orders read`)
  t.equal(refused, 0, `no 429 (the bucket went down to ${lowest} points at the lowest)`)
})

t.test('a parallel flood on one credential is refused; another credential meanwhile is not', async (t) => {
  const { app, database } = await build(t, {
    RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '200000', GRAPHQL_COST_RESTORE_PER_SECOND: '20000'
  })
  await seedDemo(database, 600)
  const flooder = await credential(database, 1, 'access-token')
  const careful = await credential(database, 1, 'access-token')
  const query = print(OrdersDocument)
  const flood = Promise.all(Array.from({ length: 40 }, (_, i) =>
    graphql(app, flooder, query, { input: { page: 1 + (i % 3), limit: 100 } })))
  const sequential: number[] = []
  for (let i = 0; i < 3; i++) sequential.push((await graphql(app, careful, query, { input: { limit: 20 } })).statusCode)
  const statuses = (await flood).map((r) => r.statusCode)
  t.ok(statuses.filter((s) => s === 429).length > 0, `the flood got ${statuses.filter((s) => s === 429).length} 429s`)
  t.ok(statuses.every((s) => s === 200 || s === 429))
  t.same(sequential, [200, 200, 200], 'the other credential has its own bucket')
})
