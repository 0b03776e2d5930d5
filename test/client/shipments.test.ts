import t from 'tap'
import { checkRow, createClient, rowProblem, type SyncRow } from '@order-exchange/client'
import { checkOutstandingShipmentRow } from '../../src/shipments/sync-row.js'
import { serve } from '../helpers/client.js'

/*
 * client.shipments.sync against the real service: each row checked before sending (docs/api/shipments.md),
 * chunks, merged counts.
 */

t.test('a 250,000-row sync goes out in chunks; its counts add up and match what is stored', async (t) => {
  const served = await serve(t, { orders: 0 })
  const bodies: number[] = []
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    fetch: async (input, init) => { bodies.push(JSON.parse(String(init?.body)).length); return fetch(input, init) }
  })
  const rows: SyncRow[] = []
  for (let i = 0; i < 250_000; i++) {
    rows.push({ retailerSyncId: `RET-${i % 5000}`, shopSyncId: i % 3 === 0 ? null : `SHOP-${i % 7}`, offerSyncId: `OFF-${Math.floor(i / 5000)}`, outstandingQuantity: `${i % 97}.5` })
  }
  // Bad rows the client catches (never sent), rows the service refuses, and keys sent twice.
  rows[10] = { retailerSyncId: '', offerSyncId: 'OFF-0', outstandingQuantity: 1 }
  rows[20] = { retailerSyncId: 'RET-1', offerSyncId: 'OFF-0', outstandingQuantity: 'lots' }
  rows[30] = { retailerSyncId: 'RET-1', offerSyncId: 'OFF-0', outstandingQuantity: -4 }
  rows[249_999] = { ...rows[0]!, outstandingQuantity: '777' }
  rows[150_000] = { ...rows[1]!, outstandingQuantity: '888' }

  const result = await client.shipments.sync(rows)
  // Rows 150,000 and 249,999 repeat the keys of rows 1 and 0: they go with them, in the first request.
  t.same(bodies, [50_002, 50_000, 50_000, 50_000, 49_996], 'five requests within the service\'s limit; bad rows not sent; a key\'s rows together')
  t.equal(result.received, 250_000)
  t.equal(result.inserted + result.updated + result.unchanged + result.duplicates + result.failed, 250_000, 'every row accounted for')
  t.equal(result.duplicates, 2, 'a key sent twice is a duplicate, as in one request')
  t.equal(result.inserted, 249_995)
  t.same(result.errors.map((e) => e.index), [10, 20, 30], 'bad rows by their index in the caller\'s array')
  t.match(result.errors[0], { error: /^retailerSyncId must be a non-empty string/, code: 'INVALID_SYNC_ID' })
  t.match(result.errors[1], { error: /^outstandingQuantity must be a finite number of at least 0/, code: 'INVALID_QUANTITY' })
  t.match(result.errors[2], { error: /outstandingQuantity must not be negative/, code: 'INVALID_QUANTITY' }, 'a row the service refuses, by the caller\'s index')
  t.equal(result.failed, 3)
  const [count] = await served.database.sql`select count(*)::int as n from outstanding_shipments where seller_id = 1`
  t.equal(count!.n, result.inserted, 'as many stored as inserted')
  const [last] = await served.database.sql`select outstanding_quantity from outstanding_shipments
    where seller_id = 1 and retailer_sync_id = 'RET-0' and shop_sync_id is null and offer_sync_id = 'OFF-0'`
  t.equal(last!.outstanding_quantity, '777', 'the last row of a key wins across the whole input')
  const [other] = await served.database.sql`select outstanding_quantity from outstanding_shipments
    where seller_id = 1 and retailer_sync_id = 'RET-1' and shop_sync_id = 'SHOP-1' and offer_sync_id = 'OFF-0'`
  t.equal(other!.outstanding_quantity, '888')

  const again = await client.shipments.sync(rows)
  t.equal(again.unchanged, result.inserted, 'sent again: every stored row unchanged')
  t.equal(again.inserted + again.updated, 0)
})

t.test('the checks before sending: what is checked, and an input with nothing valid sends nothing', async (t) => {
  t.equal(rowProblem({ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: '10.500' }), null)
  t.equal(rowProblem({ retailerSyncId: 'R', shopSyncId: null, offerSyncId: 'O', outstandingQuantity: 0 }), null)
  t.equal(rowProblem([]), 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity')
  t.equal(rowProblem({ offerSyncId: 'O', outstandingQuantity: 1 }), 'retailerSyncId is required')
  t.equal(rowProblem({ retailerSyncId: 'R', offerSyncId: '', outstandingQuantity: Infinity }),
    'offerSyncId must be a non-empty string of at most 200 characters; ' +
    'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"')
  t.equal(rowProblem({ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1, shopSyncId: 5 }),
    'shopSyncId must be a non-empty string of at most 200 characters, or null')

  const served = await serve(t, { orders: 0 })
  let requests = 0
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    fetch: async (i, init) => { requests++; return fetch(i, init) }
  })
  const result = await client.shipments.sync([{ retailerSyncId: '', offerSyncId: 'O', outstandingQuantity: 1 }])
  t.equal(requests, 0)
  t.match(result, { received: 1, failed: 1, inserted: 0, errors: [{ index: 0 }] })
})

t.test('what the client finds wrong with a row, the service says in the same words and code', async (t) => {
  const long = 'x'.repeat(201)
  const rows: unknown[] = [
    null, [], 'row', {},
    { retailerSyncId: '', offerSyncId: 'O', outstandingQuantity: 1 },
    { retailerSyncId: long, offerSyncId: 'O', outstandingQuantity: '1' },
    { retailerSyncId: 'R', shopSyncId: '', offerSyncId: 7, outstandingQuantity: 'lots' },
    { retailerSyncId: 'R', offerSyncId: 'O' },
    { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: '1e' },
    { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: true },
    { retailerSyncId: 'R', shopSyncId: null, offerSyncId: 'O', outstandingQuantity: '+.5E3' }
  ]
  for (const row of rows) {
    const client = checkRow(row)
    const service = checkOutstandingShipmentRow(JSON.parse(JSON.stringify(row)))
    const expected = service.error === undefined ? null : { error: service.error.text, code: service.error.code }
    t.same(client, expected, JSON.stringify(row))
  }
})
