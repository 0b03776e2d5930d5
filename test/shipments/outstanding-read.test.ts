import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { build, testDatabase } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { OutstandingShipmentsDocument } from '../../src/graphql/generated/operations.js'
import { InvalidInputError } from '../../src/errors.js'
import { parseOutstandingShipmentListInput } from '../../src/shipments/outstanding-list-input.js'
import { readOutstandingShipments as readConnection } from '../../src/shipments/outstanding-json.js'
import { OUTSTANDING_SHIPMENT } from '../../src/shipments/outstanding-model.js'
import { entriesOf } from '../../src/db/read-model.js'
import { pageInfoEntries } from '../../src/paging/page-info.js'
import { prepareSyncBatch } from '../../src/shipments/sync-batch.js'
import { syncOutstandingShipments } from '../../src/shipments/sync-outstanding.js'
import type { TestDatabase as Database } from '../helpers/build.js'

const filter = (f: Partial<ReturnType<typeof parseOutstandingShipmentListInput>> = {}) =>
  ({ page: 1, limit: 20, retailerSyncId: null, offerSyncId: null, ...f })

/** The read the standard execution makes for the whole selection, flattened as before for the checks below. */
async function readOutstandingShipments (tx: Database['db'], sellerId: number, f: ReturnType<typeof filter>) {
  const { pageInfo, nodes } = await readConnection(tx, sellerId, f, [
    { key: 'pageInfo', value: { kind: 'field', name: 'pageInfo', entries: pageInfoEntries(true) } },
    { key: 'nodes', value: { kind: 'field', name: 'nodes', entries: entriesOf(OUTSTANDING_SHIPMENT) } }
  ])
  return { ...pageInfo, nodes }
}

async function sync (database: Database, sellerId: number, rows: unknown[]) {
  return syncOutstandingShipments(database.db, sellerId, prepareSyncBatch(rows))
}

t.test('input: the paging rules of orders, and exact sync ID filters', async (t) => {
  t.same(parseOutstandingShipmentListInput(undefined), filter())
  t.same(parseOutstandingShipmentListInput(null), filter())
  t.same(parseOutstandingShipmentListInput({ page: 3, limit: 500, retailerSyncId: 'R', offerSyncId: 'O' }),
    filter({ page: 3, limit: 100, retailerSyncId: 'R', offerSyncId: 'O' }), 'limit above 100 is cut')
  t.same(parseOutstandingShipmentListInput({ page: null, limit: null, retailerSyncId: null }), filter())
  const bad: Array<[Record<string, unknown>, string, string]> = [
    [{ page: 0 }, 'page', 'page must be at least 1, got 0'],
    [{ limit: 0 }, 'limit', 'limit must be at least 1, got 0'],
    [{ limit: -5 }, 'limit', 'limit must be at least 1, got -5'],
    [{ retailerSyncId: '' }, 'retailerSyncId', 'retailerSyncId must be a non-empty string of at most 200 characters'],
    [{ offerSyncId: 'x'.repeat(201) }, 'offerSyncId', 'offerSyncId must be a non-empty string of at most 200 characters']
  ]
  for (const [input, field, message] of bad) {
    t.throws(() => parseOutstandingShipmentListInput(input), new InvalidInputError(field, message),
      JSON.stringify(input))
  }
})

t.test('read service: own rows only, oldest first, paged and filtered', async (t) => {
  const database = await testDatabase(t)
  const a = await createSeller(database)
  const b = await createSeller(database)
  const rows = Array.from({ length: 45 }, (_, i) => ({
    retailerSyncId: `R${i % 3}`, shopSyncId: i % 2 ? null : `S${i}`, offerSyncId: `O${String(i).padStart(2, '0')}`, outstandingQuantity: `${i}.50`
  }))
  await sync(database, a.sellerId, rows)
  await sync(database, b.sellerId, rows.slice(0, 5).map((r) => ({ ...r, outstandingQuantity: 999 })))
  await sync(database, a.sellerId, [{ retailerSyncId: 'R9', offerSyncId: 'LATE', outstandingQuantity: 1 }])

  const first = await readOutstandingShipments(database.db, a.sellerId, filter())
  t.match(first, { total: 46, page: 1, limit: 20, hasNext: true })
  t.equal(first.nodes.length, 20)
  // One sync writes its keys in key order: R0 first.
  t.same(first.nodes[0], {
    retailerSyncId: 'R0',
    shopSyncId: null,
    offerSyncId: 'O03',
    outstandingQuantity: 3.5,
    createdAt: first.nodes[0].createdAt,
    updatedAt: first.nodes[0].updatedAt
  })
  t.match(first.nodes[0].createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)

  const last = await readOutstandingShipments(database.db, a.sellerId, filter({ page: 3 }))
  t.match(last, { total: 46, page: 3, hasNext: false })
  t.equal(last.nodes.length, 6)
  t.equal(last.nodes[5].offerSyncId, 'LATE', 'a later sync comes after')
  const beyond = await readOutstandingShipments(database.db, a.sellerId, filter({ page: 4 }))
  t.match(beyond, { total: 46, hasNext: false, nodes: [] })

  const all = await readOutstandingShipments(database.db, a.sellerId, filter({ limit: 100 }))
  t.equal(new Set(all.nodes.map((n) => n.offerSyncId)).size, 46)
  t.notOk(all.nodes.some((n) => n.outstandingQuantity === 999), "no other seller's rows")

  const byRetailer = await readOutstandingShipments(database.db, a.sellerId, filter({ retailerSyncId: 'R1', limit: 100 }))
  t.equal(byRetailer.total, 15)
  t.ok(byRetailer.nodes.every((n) => n.retailerSyncId === 'R1'))
  const byOffer = await readOutstandingShipments(database.db, a.sellerId, filter({ offerSyncId: 'O07' }))
  t.same(byOffer.nodes.map((n) => [n.retailerSyncId, n.shopSyncId, n.outstandingQuantity]), [['R1', null, 7.5]])
  const both = await readOutstandingShipments(database.db, a.sellerId, filter({ retailerSyncId: 'R0', offerSyncId: 'O07' }))
  t.match(both, { total: 0, nodes: [] })
})

async function put (t: Test, app: FastifyInstance, key: string, rows: unknown[]) {
  const res = await app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: JSON.stringify(rows) })
  t.equal(res.statusCode, 200)
}

t.test('GraphQL outstandingShipments: a client checks its sync', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const other = await createSeller(database)
  const key = await credential(database, sellerId, 'api-key')
  const token = await credential(database, sellerId, 'access-token')
  const otherToken = await credential(database, other.sellerId, 'access-token')
  await put(t, app, key, [
    { retailerSyncId: 'RET-1', shopSyncId: 'SHOP-1', offerSyncId: 'OFF-1', outstandingQuantity: '10.500' },
    { retailerSyncId: 'RET-1', offerSyncId: 'OFF-2', outstandingQuantity: 3 },
    { retailerSyncId: 'RET-2', shopSyncId: null, offerSyncId: 'OFF-1', outstandingQuantity: 0.25 }
  ])

  const res = await graphql(app, token, OutstandingShipmentsDocument, { input: { retailerSyncId: 'RET-1', limit: 1000 } })
  t.equal(res.statusCode, 200)
  t.notOk(res.body.errors)
  const data = res.body.data!.outstandingShipments
  t.same(data.pageInfo, { total: 2, page: 1, hasNext: false, limit: 100 })
  t.same(data.nodes.map(({ createdAt, updatedAt, ...n }) => n), [
    { retailerSyncId: 'RET-1', shopSyncId: null, offerSyncId: 'OFF-2', outstandingQuantity: 3 },
    { retailerSyncId: 'RET-1', shopSyncId: 'SHOP-1', offerSyncId: 'OFF-1', outstandingQuantity: 10.5 }
  ])
  t.match(res.raw, /"outstandingQuantity":10\.5\b/, 'a JSON number')

  const paged = await graphql(app, token, OutstandingShipmentsDocument, { input: { page: 2, limit: 2 } })
  t.same(paged.body.data!.outstandingShipments.pageInfo, { total: 3, page: 2, hasNext: false, limit: 2 })
  t.same(paged.body.data!.outstandingShipments.nodes.map((n) => n.offerSyncId), ['OFF-1'])

  const defaults = await graphql(app, token, OutstandingShipmentsDocument, {})
  t.same(defaults.body.data!.outstandingShipments.pageInfo, { total: 3, page: 1, hasNext: false, limit: 20 })

  const theirs = await graphql(app, otherToken, OutstandingShipmentsDocument, {})
  t.same(theirs.body.data!.outstandingShipments, { pageInfo: { total: 0, page: 1, hasNext: false, limit: 20 }, nodes: [] }, 'tenant isolation')

  const bad = await graphql(app, token, OutstandingShipmentsDocument, { input: { limit: 0 } })
  t.ok([200, 400].includes(bad.statusCode), 'a client error, as for orders')
  t.equal(bad.body.data, null)
  t.match(bad.body.errors, [{ message: 'limit must be at least 1, got 0', extensions: { code: 'BAD_USER_INPUT', field: 'limit' } }])

  const unauthorized = await graphql(app, key, OutstandingShipmentsDocument, {})
  t.equal(unauthorized.statusCode, 401, 'the API key is not an access token')
})

t.test('GraphQL outstandingShipments: every stored quantity is read as the nearest Float, never an error', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const key = await credential(database, sellerId, 'api-key')
  const token = await credential(database, sellerId, 'access-token')
  // What the sync accepts at a Float's bounds.
  await put(t, app, key, [
    { retailerSyncId: 'R', offerSyncId: 'A-smallest', outstandingQuantity: '5e-324' },
    { retailerSyncId: 'R', offerSyncId: 'B-largest', outstandingQuantity: '1.7976931348623157e308' },
    { retailerSyncId: 'R', offerSyncId: 'C-digits', outstandingQuantity: `0.${'0'.repeat(97)}1` }
  ])
  // Rows stored before the sync refused what a Float cannot show: float8 fails on each (SQLSTATE 22003).
  for (const [offer, quantity] of [['D-underflow', '1e-400'], ['E-tiny', '1e-16000'], ['F-overflow', `${'9'.repeat(400)}.5`]]) {
    await database.sql`insert into outstanding_shipments (seller_id, retailer_sync_id, offer_sync_id, outstanding_quantity)
      values (${sellerId}, 'R', ${offer}, ${quantity}::numeric)`
  }
  const expected = [
    ['A-smallest', 5e-324], ['B-largest', 1.7976931348623157e308], ['C-digits', 1e-98],
    ['D-underflow', 0], ['E-tiny', 0], ['F-overflow', 1.7976931348623157e308]
  ]
  const res = await graphql(app, token, OutstandingShipmentsDocument, { input: { limit: 100 } })
  t.equal(res.statusCode, 200)
  t.notOk(res.body.errors)
  const nodes = res.body.data?.outstandingShipments.nodes ?? []
  t.same(nodes.map((n) => [n.offerSyncId, n.outstandingQuantity]).sort(), expected)
  // The standard execution reads the same statement.
  const read = await readOutstandingShipments(database.db, sellerId, filter({ limit: 100 }))
  t.same(read.nodes.map((n) => [n.offerSyncId, n.outstandingQuantity]).sort(), expected)
})
