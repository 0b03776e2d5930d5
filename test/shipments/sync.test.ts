import { Readable } from 'node:stream'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { build, testConfig } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { issueCredential, revokeCredential } from '../../src/credentials/service.js'
import { items, offers, retailers, sellerRetailers, sellerShops, shops, skus } from '../../src/db/schema.js'
import type { TestDatabase as Database } from '../helpers/build.js'

const PATH = '/v2/shipments/outstanding/sync-data'
const OK_MESSAGE = 'Outstanding shipments synced successfully'
const NOT_AN_ARRAY = 'Request body must be a non-empty JSON array of outstanding shipment records'
const TOO_SMALL = 'outstandingQuantity is too small: a quantity other than 0 must not round to 0 as a Float ' +
  '(below about 2.5e-324), the number the outstandingShipments read gives back'

interface Stored {
  seller_id: number
  retailer_sync_id: string
  shop_sync_id: string | null
  offer_sync_id: string
  outstanding_quantity: string
}

function put (app: FastifyInstance, key: string | null, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'PUT',
    url: PATH,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof payload === 'string' || payload instanceof Readable ? payload : JSON.stringify(payload)
  })
}

async function stored (database: Database, sellerId?: number): Promise<Stored[]> {
  return database.sql<Stored[]>`
    select seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity
    from outstanding_shipments where ${sellerId === undefined ? database.sql`true` : database.sql`seller_id = ${sellerId}`}
    order by seller_id, retailer_sync_id, shop_sync_id nulls first, offer_sync_id`
}

async function setup (t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const ctx = await build(t, env)
  const { sellerId } = await createSeller(ctx.database)
  const key = await credential(ctx.database, sellerId, 'api-key')
  return { ...ctx, sellerId, key }
}

t.test('a single row is stored and answered with the envelope', async (t) => {
  const { app, database, sellerId, key } = await setup(t)
  const res = await put(app, key, [{ retailerSyncId: 'RET-1', shopSyncId: 'SHOP-1', offerSyncId: 'OFF-1', outstandingQuantity: 12 }])
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /application\/json/)
  t.same(res.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: OK_MESSAGE,
    data: {
      received: 1,
      inserted: 1,
      updated: 0,
      unchanged: 0,
      duplicates: 0,
      failed: 0,
      errors: [],
      unmatched: {
        retailerSyncIds: { count: 1, examples: ['RET-1'] },
        shopSyncIds: { count: 1, examples: ['SHOP-1'] },
        offerSyncIds: { count: 1, examples: ['OFF-1'] }
      }
    }
  })
  t.same(await stored(database), [{ seller_id: sellerId, retailer_sync_id: 'RET-1', shop_sync_id: 'SHOP-1', offer_sync_id: 'OFF-1', outstanding_quantity: '12' }])
})

t.test('bulk: insert, then update, then unchanged; rows not sent are untouched', async (t) => {
  const { app, database, key } = await setup(t)
  const n = 12_345 // more than two write chunks
  const rows = (q: (i: number) => number | string) => Array.from({ length: n }, (_, i) => ({
    retailerSyncId: `RET-${i % 97}`, shopSyncId: i % 3 === 0 ? null : `SHOP-${i % 5}`, offerSyncId: `OFF-${i}`, outstandingQuantity: q(i)
  }))
  const first = (await put(app, key, rows((i) => i))).json().data
  t.match(first, { received: n, inserted: n, updated: 0, unchanged: 0, failed: 0, duplicates: 0 })

  const versions = async () => new Map((await database.sql`select id, xmin::text as v, updated_at from outstanding_shipments`)
    .map((r) => [r.id as string, `${r.v as string}/${String(r.updated_at)}`]))
  const before = await versions()

  // Every other row changes; the others are sent with the same value written differently ("7" vs 7.000).
  const second = (await put(app, key, rows((i) => i % 2 === 0 ? i + 1 : `${i}.000`))).json().data
  t.match(second, { received: n, inserted: 0, updated: Math.ceil(n / 2), unchanged: Math.floor(n / 2), failed: 0 })
  const after = await versions()
  let same = 0
  for (const [id, v] of before) if (after.get(id) === v) same++
  t.equal(same, Math.floor(n / 2), 'unchanged rows keep their row version and updated_at (no write)')

  const third = (await put(app, key, rows((i) => i % 2 === 0 ? i + 1 : `${i}.000`))).json().data
  t.match(third, { received: n, inserted: 0, updated: 0, unchanged: n })

  // A sync of a subset leaves the rest as it is.
  const subset = (await put(app, key, [{ retailerSyncId: 'RET-0', shopSyncId: null, offerSyncId: 'OFF-0', outstandingQuantity: 0 }])).json().data
  t.match(subset, { inserted: 0, updated: 1 })
  const [{ count }] = await database.sql`select count(*)::int as count from outstanding_shipments`
  t.equal(count, n)
  const [{ q }] = await database.sql`select outstanding_quantity as q from outstanding_shipments where offer_sync_id = 'OFF-2'`
  t.equal(q, '3')
})

t.test('null and absent shopSyncId are one key; a shop is another', async (t) => {
  const { app, database, key } = await setup(t)
  const a = (await put(app, key, [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }])).json().data
  t.match(a, { inserted: 1 })
  const b = (await put(app, key, [{ retailerSyncId: 'R', shopSyncId: null, offerSyncId: 'O', outstandingQuantity: 2 }])).json().data
  t.match(b, { inserted: 0, updated: 1 }, 'null updates the row sent without shopSyncId')
  const c = (await put(app, key, [{ retailerSyncId: 'R', shopSyncId: 'S', offerSyncId: 'O', outstandingQuantity: 3 }])).json().data
  t.match(c, { inserted: 1, updated: 0 }, 'a shop is a key of its own')
  t.same((await stored(database)).map((r) => [r.shop_sync_id, r.outstanding_quantity]), [[null, '2'], ['S', '3']])
})

t.test('quantities are stored exactly as sent', async (t) => {
  const { app, database, key } = await setup(t)
  const body = '[' + [
    '{"retailerSyncId":"R","offerSyncId":"a","outstandingQuantity":"10.500"}',
    '{"retailerSyncId":"R","offerSyncId":"b","outstandingQuantity":10.5}',
    '{"retailerSyncId":"R","offerSyncId":"c","outstandingQuantity":0.1000000000000000000001}',
    '{"retailerSyncId":"R","offerSyncId":"d","outstandingQuantity":123456789012345678901234567890}',
    '{"retailerSyncId":"R","offerSyncId":"e","outstandingQuantity":0.30000000000000004}',
    '{"retailerSyncId":"R","offerSyncId":"f","outstandingQuantity":"0.1000000000000000000001"}',
    '{"retailerSyncId":"R","offerSyncId":"g","outstandingQuantity":1.50E+2}',
    '{"retailerSyncId":"R","offerSyncId":"h","outstandingQuantity":-0}',
    '{"retailerSyncId":"R","offerSyncId":"i","outstandingQuantity":".25"}',
    '{"retailerSyncId":"R","offerSyncId":"j","outstandingQuantity":"+7"}',
    '{"retailerSyncId":"R","offerSyncId":"k","outstandingQuantity":0}',
    // The smallest and largest Floats: the read gives them back.
    '{"retailerSyncId":"R","offerSyncId":"l","outstandingQuantity":5e-324}',
    '{"retailerSyncId":"R","offerSyncId":"m","outstandingQuantity":"1.7976931348623157e308"}',
    '{"retailerSyncId":"R","offerSyncId":"n","outstandingQuantity":0e-400}'
  ].join(',\n') + ']'
  const res = await put(app, key, body)
  t.equal(res.statusCode, 200)
  t.match(res.json().data, { inserted: 14, failed: 0 })
  const byOffer = Object.fromEntries((await stored(database)).map((r) => [r.offer_sync_id, r.outstanding_quantity]))
  t.same(byOffer, {
    a: '10.500',
    b: '10.5',
    c: '0.1000000000000000000001',
    d: '123456789012345678901234567890',
    e: '0.30000000000000004',
    f: '0.1000000000000000000001',
    g: '150',
    h: '0',
    i: '0.25',
    j: '7',
    k: '0',
    l: `0.${'0'.repeat(323)}5`,
    m: `17976931348623157${'0'.repeat(292)}`,
    n: `0.${'0'.repeat(400)}`
  })
  // 10.5 and "10.500" are the same value: no write.
  const again = (await put(app, key, [{ retailerSyncId: 'R', offerSyncId: 'a', outstandingQuantity: 10.5 }])).json().data
  t.match(again, { unchanged: 1, updated: 0 })
})

t.test('bad rows are reported by index with the field named; good rows are applied', async (t) => {
  const { app, database, key } = await setup(t)
  const good = { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }
  const cases: Array<[string, string]> = [
    ['5', 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity'],
    ['"row"', 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity'],
    ['null', 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity'],
    ['[1]', 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity'],
    ['{"offerSyncId":"O","outstandingQuantity":1}', 'retailerSyncId is required'],
    ['{"retailerSyncId":"","offerSyncId":"O","outstandingQuantity":1}', 'retailerSyncId must be a non-empty string of at most 200 characters'],
    ['{"retailerSyncId":42,"offerSyncId":"O","outstandingQuantity":1}', 'retailerSyncId must be a non-empty string of at most 200 characters'],
    [`{"retailerSyncId":"${'x'.repeat(201)}","offerSyncId":"O","outstandingQuantity":1}`, 'retailerSyncId must be a non-empty string of at most 200 characters'],
    ['{"retailerSyncId":"a\\u0000b","offerSyncId":"O","outstandingQuantity":1}', 'retailerSyncId must not contain NUL characters or unpaired surrogates'],
    ['{"retailerSyncId":"\\u0000","offerSyncId":"O","outstandingQuantity":1}', 'retailerSyncId must not contain NUL characters or unpaired surrogates'],
    ['{"retailerSyncId":"R","offerSyncId":"\\ud800","outstandingQuantity":1}', 'offerSyncId must not contain NUL characters or unpaired surrogates'],
    ['{"retailerSyncId":"R","outstandingQuantity":1}', 'offerSyncId is required'],
    ['{"retailerSyncId":"R","offerSyncId":null,"outstandingQuantity":1}', 'offerSyncId must be a non-empty string of at most 200 characters'],
    ['{"retailerSyncId":"R","shopSyncId":7,"offerSyncId":"O","outstandingQuantity":1}', 'shopSyncId must be a non-empty string of at most 200 characters, or null'],
    ['{"retailerSyncId":"R","shopSyncId":"","offerSyncId":"O","outstandingQuantity":1}', 'shopSyncId must be a non-empty string of at most 200 characters, or null'],
    ['{"retailerSyncId":"R","shopSyncId":{},"offerSyncId":"O","outstandingQuantity":1}', 'shopSyncId must be a non-empty string of at most 200 characters, or null'],
    ['{"retailerSyncId":"R","offerSyncId":"O"}', 'outstandingQuantity is required'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":null}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":true}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"abc"}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"NaN"}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"Infinity"}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":" 5"}', 'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":-1}', 'outstandingQuantity must not be negative'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"-0.001"}', 'outstandingQuantity must not be negative'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":-1e-400}', 'outstandingQuantity must not be negative'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":1e999}', 'outstandingQuantity must be a finite number'],
    // Not 0, but 0 as the Float the outstandingShipments read gives back (22003 in PostgreSQL's float8).
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":1e-400}', TOO_SMALL],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"0.00000000000000000000000000000000000000000000000000001e-300"}', TOO_SMALL],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"2e-324"}', TOO_SMALL],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"1e-5000"}', 'outstandingQuantity is out of range (exponent beyond ±1000)'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":1E+1001}', 'outstandingQuantity is out of range (exponent beyond ±1000)'],
    ['{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"2e308"}', 'outstandingQuantity must be a finite number'],
    [`{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":"${'1'.repeat(101)}"}`, 'outstandingQuantity must be at most 100 characters long'],
    ['{}', 'retailerSyncId is required; offerSyncId is required; outstandingQuantity is required'],
    ['{"retailerSyncId":1,"shopSyncId":false,"offerSyncId":"","outstandingQuantity":-2}',
      'retailerSyncId must be a non-empty string of at most 200 characters; shopSyncId must be a non-empty string of at most 200 characters, or null; ' +
      'offerSyncId must be a non-empty string of at most 200 characters; outstandingQuantity must not be negative']
  ]
  const body = `[${JSON.stringify(good)},${cases.map(([row]) => row).join(',')},${JSON.stringify({ ...good, offerSyncId: 'O2' })}]`
  const res = await put(app, key, body)
  t.equal(res.statusCode, 200, 'bad rows never reject the request')
  const data = res.json().data
  t.match(data, { received: cases.length + 2, inserted: 2, failed: cases.length })
  t.same(data.errors.map(({ index, error }: { index: number, error: string }) => ({ index, error })),
    cases.map(([, error], i) => ({ index: i + 1, error })))
  // Each row's code is that of its first sentence.
  const codeOf = (first: string): string => /^Row must be/.test(first)
    ? 'ROW_NOT_OBJECT'
    : / is required$/.test(first)
      ? 'FIELD_REQUIRED'
      : /must not contain NUL/.test(first) ? 'UNSTORABLE_TEXT' : /^outstandingQuantity/.test(first) ? 'INVALID_QUANTITY' : 'INVALID_SYNC_ID'
  t.same(data.errors.map((e: { code: string }) => e.code), cases.map(([, error]) => codeOf(error.split('; ')[0]!)), 'codes')
  t.same((await stored(database)).map((r) => r.offer_sync_id), ['O', 'O2'])
})

t.test('the longest sync IDs, in 3-byte characters, fit the unique key', async (t) => {
  const { app, database, key } = await setup(t)
  const id = (c: string) => c.repeat(200)
  const res = await put(app, key, [{ retailerSyncId: id('日'), shopSyncId: id('本'), offerSyncId: id('語'), outstandingQuantity: 1 }])
  t.equal(res.statusCode, 200)
  t.match(res.json().data, { inserted: 1, failed: 0 })
  const lengths = (await stored(database))
    .map((r) => [r.retailer_sync_id.length, r.shop_sync_id?.length, r.offer_sync_id.length])
  t.same(lengths, [[200, 200, 200]])
})

t.test('a request in which every row fails is still 200', async (t) => {
  const { app, database, key } = await setup(t)
  const res = await put(app, key, [{}, { retailerSyncId: 'R' }])
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    error: false, status: true, message: OK_MESSAGE, data: { received: 2, inserted: 0, failed: 2 }
  })
  t.same(res.json().data.unmatched.retailerSyncIds, { count: 0, examples: [] })
  t.same(await stored(database), [])
})

t.test('unknown fields are ignored, however they look', async (t) => {
  const { app, database, key } = await setup(t)
  const body = '[{"note":"\\u0000 starts with NUL","nested":{"a":[1,2.5,{"b":"]"}],"c":"\\"},"}, "retailerSyncId":"R", "x":-3e2,' +
    '"offerSyncId":"O", "outstandingQuantity":"4.0", "retailerSyncIdExtra":null, "__proto__":{"polluted":1}}]'
  const res = await put(app, key, body)
  t.equal(res.statusCode, 200)
  t.match(res.json().data, { inserted: 1, failed: 0 })
  t.same((await stored(database)).map((r) => [r.retailer_sync_id, r.offer_sync_id, r.outstanding_quantity]), [['R', 'O', '4.0']])
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('the same key twice in one request: the last valid row wins', async (t) => {
  const { app, database, key } = await setup(t)
  const res = await put(app, key, [
    { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 },
    { retailerSyncId: 'R', shopSyncId: null, offerSyncId: 'O', outstandingQuantity: 2 },
    { retailerSyncId: 'R', offerSyncId: 'P', outstandingQuantity: 5 },
    { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 3 },
    { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: -1 } // invalid: skipped, does not win
  ])
  t.equal(res.statusCode, 200)
  t.match(res.json().data, { received: 5, inserted: 2, duplicates: 2, failed: 1 })
  t.same((await stored(database)).map((r) => [r.offer_sync_id, r.outstanding_quantity]), [['O', '3'], ['P', '5']])
})

t.test('sync IDs matching nothing of the seller are reported; the rows are stored anyway', async (t) => {
  const { app, database, sellerId, key } = await setup(t)
  const other = await createSeller(database)
  const db = database.db
  const [retailer] = await db.insert(retailers).values({ name: 'Known' }).returning()
  await db.insert(sellerRetailers).values({ sellerId, retailerId: retailer.id, syncId: 'RET-KNOWN' })
  const [shop] = await db.insert(shops).values({ retailerId: retailer.id, shopName: 'Shop' }).returning()
  await db.insert(sellerShops).values({ sellerId, shopId: shop.id, syncId: 'SHOP-KNOWN' })
  const [item] = await db.insert(items).values({ sellerId, itemName: 'Item' }).returning()
  const [sku] = await db.insert(skus).values({ sellerId, itemId: item.id, skuNickName: 'Sku' }).returning()
  await db.insert(offers).values({ sellerId, skuId: sku.id, offerSyncId: 'OFF-KNOWN', purchasePrice: '1', mrpPriceAmount: '2', finalPriceWithTax: '2' })
  // Known to another seller only: unknown for this one.
  const [theirs] = await db.insert(retailers).values({ name: 'Theirs' }).returning()
  await db.insert(sellerRetailers).values({ sellerId: other.sellerId, retailerId: theirs.id, syncId: 'RET-THEIRS' })
  // The same retailer linked to this seller too, without a sync ID of this seller's: still unknown here.
  await db.insert(sellerRetailers).values({ sellerId, retailerId: theirs.id, syncId: null })

  const rows = [
    { retailerSyncId: 'RET-KNOWN', shopSyncId: 'SHOP-KNOWN', offerSyncId: 'OFF-KNOWN', outstandingQuantity: 1 },
    { retailerSyncId: 'RET-THEIRS', shopSyncId: null, offerSyncId: 'OFF-KNOWN', outstandingQuantity: 1 },
    ...Array.from({ length: 15 }, (_, i) => ({ retailerSyncId: 'RET-KNOWN', shopSyncId: `SHOP-NEW-${String(i).padStart(2, '0')}`, offerSyncId: `OFF-NEW-${String(i).padStart(2, '0')}`, outstandingQuantity: i })),
    { retailerSyncId: 'RET-NEW', shopSyncId: 'SHOP-NEW-00', offerSyncId: 'OFF-NEW-00', outstandingQuantity: 1 }
  ]
  const data = (await put(app, key, rows)).json().data
  t.equal(data.inserted, 18, 'rows with unknown IDs are stored')
  t.same(data.unmatched.retailerSyncIds, { count: 2, examples: ['RET-NEW', 'RET-THEIRS'] })
  t.equal(data.unmatched.shopSyncIds.count, 15)
  t.equal(data.unmatched.offerSyncIds.count, 15)
  t.same(data.unmatched.offerSyncIds.examples, Array.from({ length: 10 }, (_, i) => `OFF-NEW-${String(i).padStart(2, '0')}`), 'at most 10 examples, distinct')
  t.equal(new Set(data.unmatched.shopSyncIds.examples).size, 10)
})

t.test('tenant isolation: a seller syncs only its own keys', async (t) => {
  const { app, database, sellerId, key } = await setup(t)
  const b = await createSeller(database)
  const keyB = await credential(database, b.sellerId, 'api-key')
  const row = (q: number) => [{ retailerSyncId: 'R', shopSyncId: 'S', offerSyncId: 'O', outstandingQuantity: q }]
  t.match((await put(app, keyB, row(100))).json().data, { inserted: 1 })
  t.match((await put(app, key, row(1))).json().data, { inserted: 1, updated: 0 }, 'same key, other seller: a new row')
  t.match((await put(app, key, row(2))).json().data, { updated: 1 })
  t.same((await stored(database)).map((r) => [r.seller_id, r.outstanding_quantity]), [[sellerId, '2'], [b.sellerId, '100']])
})

t.test('two concurrent syncs of overlapping keys both succeed and leave one of their values per key', async (t) => {
  const { app, database, key } = await setup(t)
  const n = 6_000
  const keys = Array.from({ length: n }, (_, i) => ({ retailerSyncId: `R${i % 50}`, shopSyncId: i % 4 === 0 ? null : `S${i % 7}`, offerSyncId: `O${i}` }))
  for (let round = 0; round < 3; round++) {
    const a = keys.map((k) => ({ ...k, outstandingQuantity: `${round}.1` }))
    // Overlapping, and in the opposite order: without sorted writes these would deadlock.
    const b = keys.slice(n / 3).reverse().map((k) => ({ ...k, outstandingQuantity: `${round}.2` }))
    const [ra, rb] = await Promise.all([put(app, key, a), put(app, key, b)])
    t.equal(ra.statusCode, 200, `round ${round}: first`)
    t.equal(rb.statusCode, 200, `round ${round}: second`)
    const rows = await stored(database)
    t.equal(rows.length, n)
    const bad = rows.filter((r) => ![`${round}.1`, `${round}.2`].includes(r.outstanding_quantity) || (Number(r.offer_sync_id.slice(1)) < n / 3 && r.outstanding_quantity !== `${round}.1`))
    t.same(bad, [], 'every key holds one of the two values; keys only in the first sync hold its value')
  }
})

t.test('authentication: x-api-key with an API key of this environment', async (t) => {
  const { app, database, sellerId, key } = await setup(t)
  const token = await credential(database, sellerId, 'access-token')
  const live = await credential(database, sellerId, 'api-key', { environment: 'production' })
  const revoked = await issueCredential(database.db, { sellerId, kind: 'api-key', environment: 'testing' })
  await revokeCredential(database.db, revoked.id)
  const unauthorized = { error: true, status: false, statusCode: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED' }
  const row = [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }]
  const cases: Array<[string, string | null, Record<string, string>]> = [
    ['missing key', null, {}],
    ['access token', token, {}],
    ['key of the other environment', live, {}],
    ['revoked key', revoked.secret, {}],
    ['unknown key', 'oxs_test_ak_000000000000_' + 'x'.repeat(43), {}],
    ['API key as Bearer instead of x-api-key', null, { authorization: `Bearer ${key}` }]
  ]
  for (const [name, secret, headers] of cases) {
    const res = await put(app, secret, row, headers)
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), unauthorized, name)
  }
  const early = await put(app, null, '[{not json')
  t.equal(early.statusCode, 401, 'authentication comes before reading the body')
  t.same(await stored(database), [])
})

t.test('request-level errors', async (t) => {
  const { app, key } = await setup(t)
  const bad = (statusCode: number, message: string, code: string) =>
    ({ error: true, status: false, statusCode, message, code })
  for (const body of ['', '   ', '[{', '[1,]', '[,1]', '[1 2]', '{"a":', '[] []', '[{"a":01}]', '[{"a":"\u0001"}]', 'nul', '[-]', '["\\x"]']) {
    const res = await put(app, key, body)
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.same(res.json(), bad(400, 'Invalid JSON format', 'INVALID_JSON'), JSON.stringify(body))
  }
  for (const body of ['[]', ' [ ] ', '{}', '{"rows":[]}', '"rows"', '5', 'null', 'true']) {
    const res = await put(app, key, body)
    t.equal(res.statusCode, 400, body)
    t.same(res.json(), bad(400, NOT_AN_ARRAY, 'NOT_AN_ARRAY'), body)
  }
  const noBody = await app.inject({ method: 'PUT', url: PATH, headers: { 'x-api-key': key } })
  t.same(noBody.json(), bad(400, NOT_AN_ARRAY, 'NOT_AN_ARRAY'), 'no body at all')

  const tooMany = await put(app, key, '[' + Array.from({ length: 100_001 }, () => '{}').join(',') + ']')
  t.equal(tooMany.statusCode, 400)
  t.same(tooMany.json(), bad(400, 'Too many outstanding shipment records: at most 100000 per request, got 100001', 'TOO_MANY_ROWS'))

  const text = await put(app, key, '[]', { 'content-type': 'text/plain' })
  t.equal(text.statusCode, 415)
  t.same(text.json(), bad(415, 'Content-Type must be application/json', 'UNSUPPORTED_MEDIA_TYPE'))

  const withCharset = await put(app, key, [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }], { 'content-type': 'application/json; charset=utf-8' })
  t.equal(withCharset.statusCode, 200)

  const bom = await put(app, key, '\ufeff[{"retailerSyncId":"R","offerSyncId":"O","outstandingQuantity":1}]')
  t.equal(bom.statusCode, 200, 'a leading byte order mark is allowed')
})

t.test('exactly 100,000 rows in one call', async (t) => {
  const { app, database, key } = await setup(t)
  const rows = Array.from({ length: 100_000 }, (_, i) => ({ retailerSyncId: `R${i % 1000}`, shopSyncId: null, offerSyncId: `O${i}`, outstandingQuantity: i % 10 }))
  const res = await put(app, key, rows)
  t.equal(res.statusCode, 200)
  t.match(res.json().data, { received: 100_000, inserted: 100_000, failed: 0 })
  const [{ count }] = await database.sql`select count(*)::int as count from outstanding_shipments`
  t.equal(count, 100_000)
})

t.test('body limit: 413 above the sync limit, other routes keep the small default', async (t) => {
  const { app, key } = await setup(t, { SYNC_BODY_LIMIT_BYTES: '4096', BODY_LIMIT_BYTES: '1024' })
  const row = { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }
  const fits = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ ...row, offerSyncId: `O${i}` })))
  t.ok(fits.length > 1024 && fits.length <= 4096)
  t.equal((await put(app, key, fits)).statusCode, 200, 'bigger than the default limit, within the sync limit')

  const tooLarge = JSON.stringify(Array.from({ length: 120 }, (_, i) => ({ ...row, offerSyncId: `O${i}` })))
  const expected = { error: true, status: false, statusCode: 413, message: 'Request body is larger than the limit of 4096 bytes', code: 'PAYLOAD_TOO_LARGE' }
  const res = await put(app, key, tooLarge)
  t.equal(res.statusCode, 413, 'declared length above the limit')
  t.same(res.json(), expected)
  const chunks = [Buffer.from(tooLarge.slice(0, 3000)), Buffer.from(tooLarge.slice(3000))]
  const streamed = await put(app, key, Readable.from(chunks))
  t.equal(streamed.statusCode, 413, 'chunked body counted as it streams')
  t.same(streamed.json(), expected)
  t.equal(streamed.headers.connection, 'close')
})

t.test('other routes keep the small default body limit', async (t) => {
  const { database } = await setup(t)
  const app = await buildApp({ config: testConfig(database, { BODY_LIMIT_BYTES: '1024' }), database })
  t.teardown(() => app.close())
  app.post('/probe', async (request) => ({ got: Array.isArray(request.body) ? request.body.length : null }))
  await app.ready()
  const body = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ i })))
  t.ok(body.length > 1024)
  const res = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: body })
  t.equal(res.statusCode, 413)
  t.same(res.json(), { error: true, status: false, statusCode: 413, message: 'Request body is larger than the limit of 1024 bytes', code: 'PAYLOAD_TOO_LARGE' })
  const small = await app.inject({ method: 'POST', url: '/probe', headers: { 'content-type': 'application/json' }, payload: '[1,2,3]' })
  t.same(small.json(), { got: 3 }, "Fastify's own JSON parser still serves other routes")
})
