import t from 'tap'
import { build } from '../helpers/build.js'
import { createSeller, credential, platformKey } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { createCatalogue, createOrder, createRetailer } from '../helpers/order-fixtures.js'
import { PLATFORM_RETAILERS_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'
import { PlatformRowErrors as E } from '../../src/platform/texts.js'

/*
 * PUT /v2/platform/retailers (docs/platform/api.md): the per-row results, every refusal's text and code, a
 * re-send that rewrites no row (xmin unchanged), one retailer linked to several sellers in one batch and
 * across batches with each seller's sync IDs left alone, racing batches, and what each seller reads back
 * through its orders: the same retailer, field for field, with its own sync IDs only.
 */

const retailer = (id: number, companyId: number, extra: Record<string, unknown> = {}) => ({
  id,
  companyId,
  name: `Retailer ${id}`,
  firstName: 'Asha',
  lastName: 'Rao',
  phone: '+919800000001',
  whatsapp: null,
  shops: [{ id: id * 10 + 1, shopName: `Shop ${id}-1` }],
  ...extra
})

const seller = (companyId: number) => ({
  companyId,
  name: `Seller ${companyId}`,
  status: 'ACTIVE',
  takeRate: '0.02',
  autoRejectEnabled: false,
  stores: [
    { id: companyId * 100 + 1, name: `Store ${companyId}` }
  ]
})

async function setup (t: Parameters<typeof build>[0], companyIds = [1, 2, 3]) {
  const ctx = await build(t)
  const key = await platformKey(ctx.database)
  const put = (url: string, body: unknown, headers: Record<string, string> = {}) => ctx.app.inject({
    method: 'PUT',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  if (companyIds.length > 0) {
    const made = await put(PLATFORM_SELLERS_PATH, companyIds.map(seller))
    t.equal(made.json().data.inserted, companyIds.length, 'the sellers exist')
  }
  const retailers = (body: unknown, headers?: Record<string, string>) => put(PLATFORM_RETAILERS_PATH, body, headers)
  return { ...ctx, key, retailers }
}

const errorOf = (e: { code: string, text: string }) => ({ error: e.text, code: e.code })
const counts = (inserted: number, updated: number, unchanged: number, failed = 0) =>
  ({ received: inserted + updated + unchanged + failed, inserted, updated, unchanged, failed })

/** Every stored row of the four tables, with its row version (xmin): a rewrite shows as a new xmin. */
async function stored (sql: Awaited<ReturnType<typeof build>>['database']['sql']) {
  return {
    retailers: await sql`select xmin::text, id, name, first_name, last_name, phone, whatsapp from retailers order by id`,
    shops: await sql`select xmin::text, id, retailer_id, shop_name from shops order by id`,
    sellerRetailers: await sql`select xmin::text, seller_id, retailer_id, sync_id from seller_retailers
      order by seller_id, retailer_id`,
    sellerShops: await sql`select xmin::text, seller_id, shop_id, sync_id from seller_shops order by seller_id, shop_id`
  }
}

t.test('inserted, updated, unchanged; shops added and renamed, never removed; links never rewritten', async (t) => {
  const { retailers, database } = await setup(t)
  const bare = { firstName: null, lastName: null, phone: null, shops: [] }
  const first = await retailers([retailer(5, 1), retailer(6, 1, bare)])
  t.equal(first.statusCode, 200)
  t.same(first.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: 'Retailers upserted',
    data: { ...counts(2, 0, 0), errors: [] }
  })
  t.same(await database.sql`select id, name, first_name, last_name, phone, whatsapp from retailers order by id`, [
    { id: 5, name: 'Retailer 5', first_name: 'Asha', last_name: 'Rao', phone: '+919800000001', whatsapp: null },
    { id: 6, name: 'Retailer 6', first_name: null, last_name: null, phone: null, whatsapp: null }
  ])
  t.same(await database.sql`select seller_id, retailer_id, sync_id from seller_retailers order by retailer_id`, [
    { seller_id: 1, retailer_id: 5, sync_id: null }, { seller_id: 1, retailer_id: 6, sync_id: null }
  ], 'linked to the seller, no sync ID')
  t.same(await database.sql`select seller_id, shop_id, sync_id from seller_shops`, [{ seller_id: 1, shop_id: 51, sync_id: null }])

  const before = await stored(database.sql)
  const again = await retailers([retailer(5, 1), retailer(6, 1, bare)])
  t.same(again.json().data, { ...counts(0, 0, 2), errors: [] }, 'a re-send is unchanged row by row')
  t.same(await stored(database.sql), before, 'no row was rewritten (xmin unchanged)')

  // The seller's own sync IDs (set by its own route later; here directly) survive every later write.
  await database.sql`update seller_retailers set sync_id = 'R-5' where retailer_id = 5`
  await database.sql`update seller_shops set sync_id = 'S-51' where shop_id = 51`
  const changed = await retailers([
    retailer(5, 1, { whatsapp: '+919800000002', shops: [{ id: 51, shopName: 'Renamed' }, { id: 52, shopName: 'New shop' }] }),
    retailer(6, 1, { firstName: 'Bala', lastName: null, phone: null, shops: [] })
  ])
  t.same(changed.json().data, { ...counts(0, 2, 0), errors: [] })
  t.same(await database.sql`select id, retailer_id, shop_name from shops order by id`, [
    { id: 51, retailer_id: 5, shop_name: 'Renamed' }, { id: 52, retailer_id: 5, shop_name: 'New shop' }
  ])
  t.same(await database.sql`select seller_id, shop_id, sync_id from seller_shops order by shop_id`, [
    { seller_id: 1, shop_id: 51, sync_id: 'S-51' }, { seller_id: 1, shop_id: 52, sync_id: null }
  ], 'the new shop is linked; the existing link keeps its sync ID')
  t.same((await database.sql`select sync_id from seller_retailers where retailer_id = 5`)[0].sync_id, 'R-5')
  t.same((await database.sql`select whatsapp from retailers where id = 5`)[0].whatsapp, '+919800000002')

  const links = await database.sql`select xmin::text, * from seller_shops order by shop_id`
  const omitted = await retailers([retailer(5, 1, { whatsapp: '+919800000002', shops: [] })])
  t.same(omitted.json().data, { ...counts(0, 0, 1), errors: [] }, 'a shop left out is never removed')
  t.equal((await database.sql`select count(*)::int as n from shops`)[0].n, 2)
  t.same(await database.sql`select xmin::text, * from seller_shops order by shop_id`, links, 'nor unlinked')

  // A retailer made without an id (the demo seed's way) never draws one of the marketplace's.
  const made = await createRetailer(database, 1)
  t.ok(made.retailerId > 6 && made.shopId! > 52, 'the id sequences moved past the marketplace\'s ids')
})

t.test('one retailer linked to several sellers, in one batch and across batches', async (t) => {
  const { retailers, database } = await setup(t)
  const one = await retailers([retailer(5, 1), retailer(5, 2)])
  t.same(one.json().data, { ...counts(1, 1, 0), errors: [] },
    'the first row inserts the retailer, the second only links it to another seller')
  t.same(await database.sql`select count(*)::int as n from retailers`, [{ n: 1 }])
  t.same(await database.sql`select seller_id, retailer_id from seller_retailers order by seller_id`,
    [{ seller_id: 1, retailer_id: 5 }, { seller_id: 2, retailer_id: 5 }])
  t.same(await database.sql`select seller_id, shop_id from seller_shops order by seller_id`,
    [{ seller_id: 1, shop_id: 51 }, { seller_id: 2, shop_id: 51 }])

  await database.sql`update seller_retailers set sync_id = 'ONE-' || seller_id`
  await database.sql`update seller_shops set sync_id = 'SHOP-' || seller_id`
  const before = await stored(database.sql)
  const resent = await retailers([retailer(5, 1), retailer(5, 2)])
  t.same(resent.json().data, { ...counts(0, 0, 2), errors: [] })
  t.same(await stored(database.sql), before, 'nothing rewritten, sync IDs as the sellers set them')

  const third = await retailers([retailer(5, 3)])
  t.same(third.json().data, { ...counts(0, 1, 0), errors: [] }, 'a link to a third seller is an update')
  t.same(await database.sql`select seller_id, sync_id from seller_retailers order by seller_id`, [
    { seller_id: 1, sync_id: 'ONE-1' }, { seller_id: 2, sync_id: 'ONE-2' }, { seller_id: 3, sync_id: null }
  ])
  const after = await stored(database.sql)
  t.same(after.retailers, before.retailers, 'the retailer itself was not rewritten')
  t.same(after.sellerRetailers.slice(0, 2), before.sellerRetailers, 'nor the other sellers\' links')
  t.same(after.sellerShops.slice(0, 2), before.sellerShops)
  t.same(after.sellerShops.map((l) => [l.seller_id, l.shop_id]), [[1, 51], [2, 51], [3, 51]])
})

t.test('every refusal names its field, with its code; the other rows are applied', async (t) => {
  const { retailers, database } = await setup(t)
  await retailers([retailer(9, 1)])
  const rows: Array<[unknown, { code: string, text: string } | null, number | null]> = [
    [42, E.notAnObject, null],
    [{ ...retailer(3, 1), id: undefined }, E.missing('id'), null],
    [retailer(0, 1, { shops: [] }), E.retailerId, null],
    [retailer(2 ** 31, 1, { shops: [] }), E.retailerId, null],
    [retailer(4, 0), E.companyId, 4],
    [{ ...retailer(4, 1), companyId: undefined }, E.missing('companyId'), 4],
    [retailer(4, 1, { name: '' }), E.name('name'), 4],
    [retailer(4, 1, { name: null }), E.name('name'), 4],
    [retailer(4, 1, { name: 'a\u0000b' }), E.unstorable('name'), 4],
    [{ ...retailer(4, 1), firstName: undefined }, E.missing('firstName'), 4],
    [retailer(4, 1, { firstName: '' }), E.nullableName('firstName'), 4],
    [retailer(4, 1, { lastName: 7 }), E.nullableName('lastName'), 4],
    [retailer(4, 1, { lastName: '\ud800' }), E.unstorable('lastName'), 4],
    [{ ...retailer(4, 1), phone: undefined }, E.missing('phone'), 4],
    [retailer(4, 1, { phone: '9800000001' }), E.phone('phone'), 4],
    [retailer(4, 1, { phone: '+12345' }), E.phone('phone'), 4],
    [retailer(4, 1, { whatsapp: '+1234567890123456789012' }), E.phone('whatsapp'), 4],
    [retailer(4, 1, { whatsapp: '+91 98000 00001' }), E.phone('whatsapp'), 4],
    [{ ...retailer(4, 1), shops: undefined }, E.missing('shops'), 4],
    [retailer(4, 1, { shops: {} }), E.shops, 4],
    [retailer(4, 1, { shops: [7] }), E.shop(0), 4],
    [retailer(4, 1, { shops: [{ id: -1, shopName: 'x' }] }), E.shopId(0), 4],
    [retailer(4, 1, { shops: [{ id: 41 }] }), E.missing('shops[0].shopName'), 4],
    [retailer(4, 1, { shops: [{ id: 41, shopName: 'x' }, { id: 42, shopName: '' }] }), E.name('shops[1].shopName'), 4],
    [retailer(4, 1, { shops: [{ id: 41, shopName: 'a' }, { id: 41, shopName: 'b' }] }), E.shopIdTwiceInRow(1, 41), 4],
    [retailer(10, 1, { shops: [{ id: 91, shopName: 'taken' }] }), E.shopOfAnotherRetailer(0, 91), 10],
    [retailer(11, 99), E.sellerNotFound(99), 11],
    [retailer(12, 1), null, 12],
    [retailer(12, 1), E.retailerLinkTwice(12, 1, 27), 12],
    [retailer(12, 2, { phone: null, shops: [] }), E.retailerMismatch(12, 27, 'phone, shops'), 12],
    [retailer(13, 1, { shops: [{ id: 121, shopName: 'Shop 12-1' }] }), E.shopIdTwiceInRequest(0, 121, 27), 13],
    [retailer(12, 3), null, 12]
  ]
  const before = await stored(database.sql)
  const res = await retailers(rows.map(([row]) => row))
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.same(data.errors, rows.flatMap(([, error, id], index) => error ? [{ index, id, ...errorOf(error) }] : []))
  t.same([data.received, data.inserted, data.updated, data.failed], [rows.length, 1, 1, rows.length - 2])
  const several = await retailers([{ id: 'x', companyId: 1, name: 7, phone: '', shops: [{ id: 1, shopName: 'a' }, 3] }])
  t.same(several.json().data.errors[0], {
    index: 0,
    id: null,
    code: 'INVALID_RETAILER_ID',
    error: [E.retailerId, E.name('name'), E.missing('firstName'), E.missing('lastName'), E.phone('phone'),
      E.missing('whatsapp'), E.shop(1)].map((e) => e.text).join('; ')
  }, 'every broken field, the first one\'s code')
  const after = await stored(database.sql)
  t.same(after.retailers.map((r) => r.id), [9, 12], 'refused rows wrote nothing')
  t.same(after.retailers[0], before.retailers[0], 'and the retailer whose shop was claimed is untouched')
  t.same(after.shops.map((s) => s.id), [91, 121])
  t.same(after.sellerRetailers.map((l) => [l.seller_id, l.retailer_id]), [[1, 9], [1, 12], [3, 12]])
})

t.test('a shop of another retailer, an unknown companyId: refused against what is stored', async (t) => {
  const { retailers, database } = await setup(t)
  await retailers([retailer(5, 1)])
  const res = await retailers([
    retailer(6, 2, { shops: [{ id: 61, shopName: 'Own' }, { id: 51, shopName: 'Not yours' }] }),
    retailer(7, 1)
  ])
  t.same(res.json().data,
    { ...counts(1, 0, 0, 1), errors: [{ index: 0, id: 6, ...errorOf(E.shopOfAnotherRetailer(1, 51)) }] })
  t.same(await database.sql`select id, retailer_id, shop_name from shops order by id`, [
    { id: 51, retailer_id: 5, shop_name: 'Shop 5-1' }, { id: 71, retailer_id: 7, shop_name: 'Shop 7-1' }
  ], 'the shop stayed with its retailer, shop 61 was not made')
  const unknown = await retailers([retailer(5, 404), retailer(5, 2)])
  t.same(unknown.json().data,
    { ...counts(0, 1, 0, 1), errors: [{ index: 0, id: 5, ...errorOf(E.sellerNotFound(404)) }] })
  t.same(await database.sql`select seller_id, retailer_id from seller_retailers order by seller_id, retailer_id`,
    [{ seller_id: 1, retailer_id: 5 }, { seller_id: 1, retailer_id: 7 }, { seller_id: 2, retailer_id: 5 }])
  t.same(await database.sql`select count(*)::int as n from sellers where id = 404`, [{ n: 0 }])
})

t.test('racing identical batches end in the same state, with counts that add up', async (t) => {
  const { retailers, database } = await setup(t)
  const batch = Array.from({ length: 150 }, (_, i) => retailer(i + 1, 1 + (i % 3), {
    shops: [{ id: (i + 1) * 10, shopName: 'A' }, { id: (i + 1) * 10 + 1, shopName: 'B' }]
  }))
  // The same retailers linked to a second seller, in the same batch.
  const linked = [...batch, ...batch.map((r) => ({ ...r, companyId: r.companyId === 3 ? 1 : r.companyId + 1 }))]
  const answers = await Promise.all([retailers(linked), retailers(linked), retailers([...linked].reverse())])
  t.same(answers.map((a) => a.statusCode), [200, 200, 200])
  const data = answers.map((a) => a.json().data)
  for (const d of data) {
    t.same([d.received, d.failed, d.inserted + d.updated + d.unchanged], [300, 0, 300], 'every row counted once')
  }
  t.equal(data.reduce((n, d) => n + d.inserted, 0), 150, 'each retailer inserted by exactly one send')
  t.equal(data.reduce((n, d) => n + d.inserted + d.updated, 0), 300, 'each link made by exactly one send')
  t.equal(data.reduce((n, d) => n + d.unchanged, 0), 600, 'the others find every row unchanged')
  const [totals] = await database.sql`select (select count(*)::int from retailers) as retailers,
    (select count(*)::int from shops) as shops, (select count(*)::int from seller_retailers) as links,
    (select count(*)::int from seller_shops) as shop_links`
  t.same(totals, { retailers: 150, shops: 300, links: 300, shop_links: 600 })
  const before = await stored(database.sql)
  const again = await retailers(linked)
  t.same(again.json().data, { ...counts(0, 0, 300), errors: [] })
  t.same(await stored(database.sql), before)
})

t.test('a retailers batch and a sellers batch on the same seller take turns, never deadlock', async (t) => {
  const { retailers, database, app, key } = await setup(t, [])
  const sellers = (body: unknown) => app.inject({
    method: 'PUT', url: PLATFORM_SELLERS_PATH, headers: { authorization: `Bearer ${key}` }, payload: body as object[]
  })
  const rows = Array.from({ length: 100 }, (_, i) => retailer(i + 1, 1 + (i % 20)))
  const made = Array.from({ length: 20 }, (_, i) => seller(20 - i))
  const [r1, s1, r2, s2] = await Promise.all([
    retailers(rows), sellers(made), retailers([...rows].reverse()), sellers(made)
  ])
  t.same([r1, s1, r2, s2].map((a) => a.statusCode), [200, 200, 200, 200])
  const applied = [r1, r2].map((a) => a.json().data).reduce((n, d) => n + d.inserted + d.updated + d.unchanged, 0)
  const refused = [r1, r2].flatMap((a) => a.json().data.errors)
  t.ok(refused.every((e: { code: string }) => e.code === 'SELLER_NOT_FOUND'), 'a row is applied or its seller is not made yet')
  t.equal(applied + refused.length, 200)
  const again = await retailers(rows)
  t.same(again.json().data.failed, 0, 'once the sellers exist every row applies')
  t.same((await database.sql`select count(*)::int as n from seller_retailers`)[0].n, 100)
})

t.test('the OpenAPI document\'s example is what the route answers, sent and re-sent', async (t) => {
  const { retailers, app } = await setup(t, [101, 102])
  const { requestBody, responses } = (await app.inject({ url: '/v2/openapi.json' })).json().paths[PLATFORM_RETAILERS_PATH].put
  const sent = requestBody.content['application/json'].examples.retailers.value
  const { processed, resent } = responses['200'].content['application/json'].examples
  t.same((await retailers(sent)).json(), processed.value)
  t.same((await retailers(sent)).json(), resent.value)
})

t.test('each seller reads the same retailer through its orders, with its own sync IDs only', async (t) => {
  const { retailers, database, app } = await setup(t, [])
  const sellerA = await createSeller(database)
  const sellerB = await createSeller(database)
  const row = {
    id: 7001,
    name: 'Rao Kirana Stores',
    firstName: 'Asha',
    lastName: null,
    phone: '+919800000001',
    whatsapp: '+447700900123',
    shops: [{ id: 8001, shopName: 'Rao Kirana, MG Road' }]
  }
  const put = await retailers([{ ...row, companyId: sellerA.sellerId }, { ...row, companyId: sellerB.sellerId }])
  t.same(put.json().data, { ...counts(1, 1, 0), errors: [] })
  await database.sql`update seller_retailers set sync_id = 'A-RET' where seller_id = ${sellerA.sellerId}`
  await database.sql`update seller_shops set sync_id = 'A-SHOP' where seller_id = ${sellerA.sellerId}`
  await database.sql`update seller_retailers set sync_id = 'B-RET' where seller_id = ${sellerB.sellerId}`
  // Seller B never synced the shop: its shop sync ID stays null, never A's.
  const query = `{ orders { nodes { orderId retailer { id name firstName lastName phone whatsapp syncId }
    shop { id syncId retailerSyncId shopName } } } }`
  for (const [seller, ret, shop] of [[sellerA, 'A-RET', 'A-SHOP'], [sellerB, 'B-RET', null]] as const) {
    const catalogue = await createCatalogue(database, seller, `R${seller.sellerId}`)
    const orderId = await createOrder(database, catalogue, { retailerId: row.id, shopId: row.shops[0].id })
    const token = await credential(database, seller.sellerId, 'access-token')
    const res = await graphql<{ orders: { nodes: unknown[] } }, never>(app, token, query)
    t.equal(res.statusCode, 200)
    t.same(res.body.data!.orders.nodes, [{
      orderId: String(orderId),
      retailer: {
        id: row.id,
        name: row.name,
        firstName: row.firstName,
        lastName: row.lastName,
        phone: row.phone,
        whatsapp: row.whatsapp,
        syncId: ret
      },
      shop: { id: row.shops[0].id, syncId: shop, retailerSyncId: ret, shopName: row.shops[0].shopName }
    }], `seller ${seller.sellerId}: what went in comes out, with its own sync IDs`)
    t.notMatch(res.raw, ret === 'A-RET' ? /B-RET/ : /A-RET|A-SHOP/, 'never the other seller\'s sync IDs')
  }
})
