import t from 'tap'
import { eq, inArray } from 'drizzle-orm'
import { buildApp } from '../../src/app.js'
import { build, testConfig } from '../helpers/build.js'
import { credential, createSeller, platformKey, seedDemo } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { createCatalogue, createOrder, createRetailer } from '../helpers/order-fixtures.js'
import { OrderIdsDocument, OrdersDocument, SellerDocument, type OrdersQuery } from '../../src/graphql/generated/operations.js'
import {
  items, offers, orderItems, orders, retailers, sellerRetailers, sellerShops, sellingUnits, shops, skus
} from '../../src/db/schema.js'
import { seed } from '../../src/seed/seed.js'
import { PLATFORM_ORDERS_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'

type Node = NonNullable<OrdersQuery['orders']>['nodes'][number]
const num = (v: string | null) => v === null ? null : Number(v)
const iso = (d: Date) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
/** The exact product of two decimal strings, as a decimal string without trailing zeros. */
const times = (a: string, b: string): string => {
  const scaled = (v: string) => { const [w, f = ''] = v.split('.'); return { n: BigInt(w + f), scale: f.length } }
  const x = scaled(a); const y = scaled(b)
  const digits = String(x.n * y.n).padStart(x.scale + y.scale + 1, '0')
  const point = digits.length - x.scale - y.scale
  return `${digits.slice(0, point)}.${digits.slice(point)}`.replace(/\.?0+$/, '')
}

t.test('every field of 2.1–2.7 reads back as the database holds it', async (t) => {
  const { app, database } = await build(t)
  const summary = await seedDemo(database, 150)
  const seller = summary.sellers[0]
  const token = await credential(database, seller.companyId, 'access-token')

  const res = await graphql(app, token, OrdersDocument, { input: { page: 1, limit: 100 } })
  t.equal(res.statusCode, 200)
  t.notOk(res.body.errors)
  const page = res.body.data!.orders!
  const { db } = database
  const live = await db.select().from(orders).where(eq(orders.sellerId, seller.companyId))
  const expectedIds = live.filter((o) => !o.isDeleted)
    .sort((a, b) => +a.createdAt - +b.createdAt || a.id - b.id)
    .map((o) => String(o.id))
  t.same(page.pageInfo, { total: expectedIds.length, page: 1, hasNext: expectedIds.length > 100, limit: 100 })
  t.same(page.nodes.map((n) => n.orderId), expectedIds.slice(0, 100), 'creation time, then id; soft-deleted left out')
  t.ok(live.some((o) => o.isDeleted), 'the demo data has soft-deleted orders to leave out')

  const ids = page.nodes.map((n) => Number(n.orderId))
  const byId = new Map(live.map((o) => [o.id, o]))
  const lines = await db.select().from(orderItems).where(inArray(orderItems.orderId, ids))
  const retailerRows = new Map((await db.select().from(retailers)).map((r) => [r.id, r]))
  const shopRows = new Map((await db.select().from(shops)).map((s) => [s.id, s]))
  // Each seller's own sync IDs, by seller and record.
  const retailerSync = new Map((await db.select().from(sellerRetailers)).map((l) => [`${l.sellerId}:${l.retailerId}`, l.syncId]))
  const shopSync = new Map((await db.select().from(sellerShops)).map((l) => [`${l.sellerId}:${l.shopId}`, l.syncId]))
  const itemRows = new Map((await db.select().from(items)).map((i) => [i.id, i]))
  const skuRows = new Map((await db.select().from(skus)).map((s) => [s.id, s]))
  const offerRows = await db.select().from(offers)
  const unitRows = await db.select().from(sellingUnits)
  const offerJson = (f: typeof offerRows[number]) => ({
    id: f.id,
    skuId: f.skuId,
    offerSyncId: f.offerSyncId,
    purchasePrice: num(f.purchasePrice),
    mrpPriceAmount: num(f.mrpPriceAmount),
    currency: f.currency,
    priceRange: f.priceRange
  })

  let withoutShop = 0
  for (const node of page.nodes) {
    const o = byId.get(Number(node.orderId))!
    const r = retailerRows.get(o.retailerId)!
    const s = o.shopId === null ? null : shopRows.get(o.shopId)!
    if (!s) withoutShop++
    const expected: Node = {
      orderId: String(o.id),
      orderNumber: o.orderNumber,
      serviceOrderNumber: o.serviceOrderNumber,
      orderStatus: o.status,
      deliveryType: o.deliveryType,
      paymentMode: o.paymentMode,
      companyId: o.sellerId,
      storeId: o.storeId,
      retailerName: o.retailerName,
      retailer: {
        id: r.id,
        name: r.name,
        firstName: r.firstName,
        lastName: r.lastName,
        phone: r.phone,
        whatsapp: r.whatsapp,
        syncId: retailerSync.get(`${o.sellerId}:${r.id}`) ?? null
      },
      isActionable: o.isActionable,
      currencyCode: o.currencyCode,
      orderTotal: num(o.orderTotal)!,
      orderTotalFinal: num(o.orderTotalFinal)!,
      orderTaxAmount: num(o.orderTaxAmount)!,
      orderCessAmount: num(o.orderCessAmount)!,
      appliedPoints: num(o.appliedPoints)!,
      totalExtraCharges: num(o.totalExtraCharges)!,
      roundOff: num(o.roundOff)!,
      totalItemsInOrder: o.totalItemsInOrder,
      isDeleted: false,
      shop: s && {
        id: s.id,
        syncId: shopSync.get(`${o.sellerId}:${s.id}`) ?? null,
        retailerSyncId: retailerSync.get(`${o.sellerId}:${s.retailerId}`) ?? null,
        shopName: s.shopName
      },
      orderItems: lines.filter((l) => l.orderId === o.id).sort((a, b) => a.id - b.id).map((l) => {
        const offer = offerRows.find((f) => f.id === l.offerId)!
        const item = itemRows.get(l.itemId)!
        const sku = skuRows.get(l.skuId)!
        return {
          id: String(l.id),
          skuId: l.skuId,
          quantity: num(l.quantity)!,
          unitPrice: num(l.unitPrice)!,
          lineTotal: Number(times(l.unitPrice, l.quantity)),
          offer: { id: offer.id, offerSyncId: offer.offerSyncId, finalPriceWithTax: num(offer.finalPriceWithTax)! },
          item: { id: item.id, itemName: item.itemName, itemSyncId: item.itemSyncId },
          sku: {
            itemId: sku.itemId,
            skuNickName: sku.skuNickName,
            images: sku.images,
            tags: sku.tags,
            offers: offerRows.filter((f) => f.skuId === sku.id).sort((a, b) => a.id - b.id).map(offerJson) as Node['orderItems'][number]['sku']['offers'],
            itemSellingUnits: unitRows.filter((u) => u.skuId === sku.id).sort((a, b) => a.id - b.id)
              .map((u) => ({
                id: u.id, name: u.name, multiplier: num(u.multiplier)!, isBaseUnit: u.isBaseUnit, skuId: u.skuId
              }))
          }
        }
      }),
      createdAt: iso(o.createdAt),
      updatedAt: iso(o.updatedAt)
    }
    t.same(node, expected, `order ${o.id}`)
    t.equal(typeof node.orderId, 'string'); t.equal(typeof node.orderTotal, 'number'); t.equal(typeof node.retailer.id, 'number')
    t.equal(node.orderItems.length, o.totalItemsInOrder)
  }
  t.ok(withoutShop > 0, 'some orders have no shop (shop: null)')
  t.ok(page.nodes.some((n) => n.retailer.syncId === null), 'some retailers have no sync ID')
})

t.test('a line shows what it cost: unitPrice is the deal price on a deal line, the offer price at placement otherwise; lineTotal = unitPrice × quantity', async (t) => {
  const { app, database } = await build(t)
  const sql = database.sql
  const key = await platformKey(database)
  const call = async (url: string, method: 'PUT' | 'POST', body: unknown) => {
    const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) })
    t.equal(res.statusCode, 200, url)
    t.same(res.json().data.errors, [], `${url}: no row refused`)
  }
  await call(PLATFORM_SELLERS_PATH, 'PUT', [{ companyId: 1, name: 'Seller 1', status: 'ACTIVE', takeRate: '0.1', autoRejectEnabled: false, stores: [{ id: 11, name: 'Main' }] }])
  await sql`insert into retailers (id, name, phone, whatsapp) values (501, 'Asha Rao', '+919800000001', null)`
  await sql`insert into seller_retailers (seller_id, retailer_id) values (1, 501)`
  await sql`insert into items (id, seller_id, item_name) values (100, 1, 'Tea')`
  await sql`insert into skus (id, seller_id, item_id, sku_nick_name) values (100, 1, 100, 'Tea 1kg')`
  await sql`insert into offers (id, seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    values (100, 1, 100, 8, 15, 12.5), (101, 1, 100, 40, 60, 50.10)`
  await sql`insert into daily_deals (id, seller_id, offer_id, deal_date, deal_price, max_quantity) values (7, 1, 100, '2026-11-25', 7.35, 10)`
  await call(PLATFORM_ORDERS_PATH, 'POST', [{
    orderId: '900',
    orderNumber: 'ORD-900',
    serviceOrderNumber: 'SVC-900',
    companyId: 1,
    storeId: 11,
    retailerId: 501,
    shopId: null,
    deliveryType: 'REGULAR',
    currencyCode: 'INR',
    paymentMode: 'CASH_ON_DELIVERY',
    orderTotal: '165.92',
    orderTotalFinal: '165.92',
    orderTaxAmount: 0,
    orderCessAmount: 0,
    appliedPoints: 0,
    totalExtraCharges: 0,
    roundOff: 0,
    placedAt: '2026-11-25T09:30:00+05:30',
    orderItems: [{ id: '9001', offerId: 100, quantity: '2.125', dealId: 7 }, { id: '9002', offerId: 101, quantity: 3 }]
  }])
  // The offer's price moves after the order was placed: the line keeps what it was charged.
  await sql`update offers set final_price_with_tax = 55 where id = 101`
  const token = await credential(database, 1, 'access-token')

  const full = await graphql(app, token, OrdersDocument, { input: { page: 1, limit: 10 } })
  t.notOk(full.body.errors)
  const lines = full.body.data!.orders!.nodes[0]!.orderItems
  t.same(lines.map((l) => [l.id, l.quantity, l.unitPrice, l.lineTotal, l.offer.finalPriceWithTax]), [
    ['9001', 2.125, 7.35, 15.61875, 12.5],
    ['9002', 3, 50.1, 150.3, 55]
  ], 'the deal line at the deal price, the other at the offer price it was placed at; products not rounded')
  t.match(full.raw, /"quantity":2\.125,"unitPrice":7\.35,"lineTotal":15\.61875,/, 'exact decimals in the body, as the other money fields')
  t.match(full.raw, /"quantity":3,"unitPrice":50\.1,"lineTotal":150\.3,/)

  // A selection of only these fields, written by the pass-through and by the standard execution: the same bytes.
  const standardApp = await buildApp({ config: testConfig(database, { GRAPHQL_PASS_THROUGH: 'false' }), database })
  t.teardown(() => standardApp.close())
  await standardApp.ready()
  const narrow = '{ orders { nodes { orderItems { unitPrice lineTotal } } } }'
  const expected = '{"data":{"orders":{"nodes":[{"orderItems":[{"unitPrice":7.35,"lineTotal":15.61875},{"unitPrice":50.1,"lineTotal":150.3}]}]}}}'
  t.equal((await graphql(app, token, narrow)).raw, expected, 'pass-through')
  t.equal((await graphql(standardApp, token, narrow)).raw, expected, 'standard execution')
  t.equal((await graphql(standardApp, token, OrdersDocument, { input: { page: 1, limit: 10 } })).raw, full.raw,
    'the full document alike through both')
  const [sum] = await sql`select sum(unit_price * quantity)::text as total from order_items where order_id = 900`
  t.equal(sum!.total, '165.91875', 'lineTotal is the stored unit_price × quantity')
})

t.test('sync IDs of 2.12, a retailer without sync ID, an order without shop', async (t) => {
  const { app, database } = await build(t)
  const seller = await createSeller(database)
  const catalogue = await createCatalogue(database, seller, 'S1')
  const synced = await createRetailer(database, seller.sellerId, { syncId: 'RET-77', shopSyncId: 'OUT-9' })
  const unsynced = await createRetailer(database, seller.sellerId, { syncId: null, withShop: false })
  const a = await createOrder(database, catalogue, { retailerId: synced.retailerId, shopId: synced.shopId, createdAt: new Date('2026-10-01T10:00:00Z') })
  const b = await createOrder(database, catalogue, { retailerId: unsynced.retailerId, shopId: null, createdAt: new Date('2026-10-01T11:00:00Z') })
  const token = await credential(database, seller.sellerId, 'access-token')

  const res = await graphql(app, token, OrdersDocument, {})
  const [first, second] = res.body.data!.orders!.nodes
  t.equal(first.orderId, String(a))
  t.equal(first.orderItems[0].offer.offerSyncId, 'VAR-S1', 'nodes[].orderItems[].offer.offerSyncId')
  t.equal(first.orderItems[0].item.itemSyncId, 'ITEM-S1', 'nodes[].orderItems[].item.itemSyncId')
  t.equal(first.shop!.syncId, 'OUT-9', 'nodes[].shop.syncId')
  t.equal(first.retailer.syncId, 'RET-77', 'nodes[].retailer.syncId')
  t.equal(first.shop!.retailerSyncId, 'RET-77', 'nodes[].shop.retailerSyncId')
  t.same(first.orderItems[0].sku.offers[0].priceRange, [
    { minQuantity: 1, maxQuantity: 9, price: 105.25 },
    { minQuantity: 10, maxQuantity: null, price: 99.5 }
  ])
  t.equal(first.orderItems[0].quantity, 2.5)
  t.same(first.orderItems[0].sku.itemSellingUnits.map((u) => u.multiplier), [1, 12.5])

  t.equal(second.orderId, String(b))
  t.equal(second.retailer.syncId, null, 'retailer syncId null')
  t.equal(second.retailer.phone, '+919800000001', 'phone to fall back on')
  t.equal(second.shop, null, 'order without shop')
})

t.test('a caller sees only its own seller, and a narrowed credential only its stores', async (t) => {
  const { app, database } = await build(t)
  const mine = await createSeller(database, { name: 'Mine', pointsBalance: '12.50' })
  const theirs = await createSeller(database, { name: 'Theirs' })
  const myCatalogue = await createCatalogue(database, mine, 'M')
  const theirCatalogue = await createCatalogue(database, theirs, 'T')
  const myBuyer = await createRetailer(database, mine.sellerId, { syncId: 'R-M' })
  const theirBuyer = await createRetailer(database, theirs.sellerId, { syncId: 'R-T' })
  const inStoreA = [
    await createOrder(database, myCatalogue, { ...myBuyer, storeId: mine.storeIds[0] }),
    await createOrder(database, myCatalogue, { ...myBuyer, storeId: mine.storeIds[0] })
  ]
  const inStoreB = await createOrder(database, myCatalogue, { ...myBuyer, storeId: mine.storeIds[1] })
  await createOrder(database, myCatalogue, { ...myBuyer, isDeleted: true })
  await createOrder(database, theirCatalogue, { ...theirBuyer })
  await createOrder(database, theirCatalogue, { ...theirBuyer })

  const all = await graphql(app, await credential(database, mine.sellerId, 'access-token'), OrderIdsDocument, {})
  t.same(all.body.data!.orders!.nodes.map((n) => Number(n.orderId)), [...inStoreA, inStoreB], 'own live orders only')
  t.equal(all.body.data!.orders!.pageInfo.total, 3)

  const narrowedToken = await credential(database, mine.sellerId, 'access-token', { storeIds: [mine.storeIds[1]] })
  const narrowed = await graphql(app, narrowedToken, OrderIdsDocument, {})
  t.same(narrowed.body.data!.orders!.nodes.map((n) => Number(n.orderId)), [inStoreB], 'the narrowed credential sees its store only')
  t.equal(narrowed.body.data!.orders!.pageInfo.total, 1)

  const sellerView = await graphql(app, narrowedToken, SellerDocument, {})
  t.same(sellerView.body.data!.seller, { companyId: mine.sellerId, name: 'Mine', status: 'ACTIVE', pointsBalance: 12.5, stores: [{ id: mine.storeIds[1], name: 'Store B' }] })
  const full = await graphql(app, await credential(database, theirs.sellerId, 'access-token'), SellerDocument, {})
  t.same(full.body.data!.seller.stores.map((s) => s.id), theirs.storeIds)
  const suspended = await createSeller(database, { name: 'Gone', status: 'suspended' })
  const gone = await graphql(app, await credential(database, suspended.sellerId, 'access-token'), SellerDocument, {})
  t.equal(gone.body.data!.seller.status, 'SUSPENDED')

  const theirView = await graphql(app, await credential(database, theirs.sellerId, 'access-token'), OrderIdsDocument, {})
  t.equal(theirView.body.data!.orders!.pageInfo.total, 2)
  t.notOk(theirView.body.data!.orders!.nodes.some((n) => [...inStoreA, inStoreB].includes(Number(n.orderId))), 'never another seller\'s order')
})

t.test('a page walk neither skips nor repeats while orders arrive', async (t) => {
  const { app, database } = await build(t)
  // Seeded orders lie in the past, so orders placed during the walk (created now) come after them.
  const summary = await seed(database, { orders: 90, seed: 7, anchor: new Date(Date.now() - 3_600_000) })
  const seller = summary.sellers[0]
  const token = await credential(database, seller.companyId, 'access-token')
  const catalogue = await createCatalogue(database, { sellerId: seller.companyId, storeIds: seller.storeIds }, 'W')
  const buyer = await createRetailer(database, seller.companyId)
  const [{ n: before }] = await database.sql`select count(*)::int as n from orders where seller_id = ${seller.companyId} and not is_deleted`
  // Two orders at the same instant: the id breaks the tie.
  const sameInstant = new Date(Date.now() - 1000)
  await createOrder(database, catalogue, { ...buyer, createdAt: sameInstant })
  await createOrder(database, catalogue, { ...buyer, createdAt: sameInstant })

  const seen: string[] = []
  const added: number[] = []
  let page = 1
  let last
  for (;;) {
    const res = await graphql(app, token, OrderIdsDocument, { input: { page, limit: 7 } })
    t.notOk(res.body.errors)
    last = res.body.data!.orders!
    seen.push(...last.nodes.map((n) => n.orderId))
    if (!last.pageInfo.hasNext) break
    if (page % 2 === 1) added.push(await createOrder(database, catalogue, { ...buyer }))
    page++
  }
  const [{ n: after }] = await database.sql`select count(*)::int as n from orders where seller_id = ${seller.companyId} and not is_deleted`
  t.equal(after, before + 2 + added.length)
  t.equal(new Set(seen).size, seen.length, 'no order twice')
  t.equal(seen.length, after, 'every order, including those placed during the walk')
  t.equal(last.pageInfo.total, after, 'total on the last page counts them all')
  t.equal(last.pageInfo.hasNext, false)
  t.ok(added.every((id) => seen.includes(String(id))))
  t.ok(page > 5, 'a walk of many pages')

  const past = await graphql(app, token, OrderIdsDocument, { input: { page: 999, limit: 7 } })
  t.same(past.body.data!.orders!.pageInfo, { total: after, page: 999, hasNext: false, limit: 7 }, 'a page past the end: no nodes, true total')
  t.same(past.body.data!.orders!.nodes, [])
})

t.test('page and limit defaults, the cap of 100', async (t) => {
  const { app, database } = await build(t)
  const summary = await seedDemo(database, 400)
  const seller = summary.sellers[0]
  const token = await credential(database, seller.companyId, 'access-token')
  const [{ n: total }] = await database.sql`select count(*)::int as n from orders where seller_id = ${seller.companyId} and not is_deleted`
  t.ok(total > 200)

  const defaults = await graphql(app, token, OrderIdsDocument, {})
  t.same(defaults.body.data!.orders!.pageInfo, { total, page: 1, hasNext: true, limit: 20 })
  t.equal(defaults.body.data!.orders!.nodes.length, 20)
  const nulls = await graphql(app, token, OrderIdsDocument, { input: { page: null, limit: null } })
  t.same(nulls.body.data!.orders!.pageInfo, defaults.body.data!.orders!.pageInfo, 'null is the default')

  const capped = await graphql(app, token, OrderIdsDocument, { input: { limit: 500 } })
  t.same(capped.body.data!.orders!.pageInfo, { total, page: 1, hasNext: true, limit: 100 }, 'cut to 100 and reported')
  t.equal(capped.body.data!.orders!.nodes.length, 100)

  const lastPage = Math.ceil(total / 100)
  const end = await graphql(app, token, OrderIdsDocument, { input: { page: lastPage, limit: 100 } })
  t.same(end.body.data!.orders!.pageInfo, { total, page: lastPage, hasNext: false, limit: 100 })
  t.equal(end.body.data!.orders!.nodes.length, total - (lastPage - 1) * 100)
  const exact = await graphql(app, token, OrderIdsDocument, { input: { page: 1, limit: total } })
  t.equal(exact.body.data!.orders!.pageInfo.hasNext, total > 100)

  const onlyCount = await graphql(app, token, '{ orders { pageInfo { total hasNext } } }')
  t.same(onlyCount.body.data, { orders: { pageInfo: { total, hasNext: true } } }, 'pageInfo alone')
})

t.test('fromDate/toDate are whole days in a non-UTC business time zone', async (t) => {
  for (const { zone, day, start, end } of [
    // India: UTC+05:30, no DST.
    { zone: 'Asia/Kolkata', day: '2026-03-10', start: '2026-03-09T18:30:00.000Z', end: '2026-03-10T18:30:00.000Z' },
    // New York on the day DST starts: a 23-hour day.
    { zone: 'America/New_York', day: '2026-03-08', start: '2026-03-08T05:00:00.000Z', end: '2026-03-09T04:00:00.000Z' }
  ]) {
    await t.test(zone, async (t) => {
      const { app, database } = await build(t, { BUSINESS_TIMEZONE: zone })
      const seller = await createSeller(database)
      const catalogue = await createCatalogue(database, seller, 'D')
      const buyer = await createRetailer(database, seller.sellerId)
      const at = async (ms: number) => createOrder(database, catalogue, { ...buyer, createdAt: new Date(ms) })
      const s = Date.parse(start); const e = Date.parse(end)
      const dayBefore = await at(s - 1) // last millisecond of the day before
      const first = await at(s) // first second of the day
      const lastSecond = await at(e - 1000) // last second of the day
      const lastMs = await at(e - 1)
      const dayAfter = await at(e) // first second of the next day
      const token = await credential(database, seller.sellerId, 'access-token')
      const ids = async (input: Record<string, string>) => {
        const res = await graphql(app, token, OrderIdsDocument, { input })
        t.notOk(res.body.errors, JSON.stringify(res.body.errors))
        return res.body.data!.orders!.nodes.map((n) => Number(n.orderId))
      }
      t.same(await ids({ fromDate: day, toDate: day }), [first, lastSecond, lastMs], 'the day, both ends inclusive')
      t.same(await ids({ fromDate: day }), [first, lastSecond, lastMs, dayAfter])
      t.same(await ids({ toDate: day }), [dayBefore, first, lastSecond, lastMs])
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)
      t.same(await ids({ fromDate: next, toDate: next }), [dayAfter])
    })
  }
})

t.test('updatedSince returns orders created or changed after an instant', async (t) => {
  const { app, database } = await build(t)
  const seller = await createSeller(database)
  const catalogue = await createCatalogue(database, seller, 'U')
  const buyer = await createRetailer(database, seller.sellerId)
  const old = await createOrder(database, catalogue, { ...buyer, createdAt: new Date('2026-10-01T00:00:00Z') })
  const changed = await createOrder(database, catalogue, { ...buyer, createdAt: new Date('2026-09-01T00:00:00Z'), updatedAt: new Date('2026-10-05T12:00:00Z') })
  const fresh = await createOrder(database, catalogue, { ...buyer, createdAt: new Date('2026-10-06T00:00:00Z') })
  await database.sql`update orders set updated_at = '2026-10-07T08:30:00.123456Z' where id = ${fresh}`
  const token = await credential(database, seller.sellerId, 'access-token')
  const read = async (updatedSince: string) => {
    const res = await graphql(app, token, OrderIdsDocument, { input: { updatedSince } })
    t.notOk(res.body.errors, JSON.stringify(res.body.errors))
    return res.body.data!.orders!
  }
  const since = await read('2026-10-02T00:00:00Z')
  t.same(since.nodes.map((n) => Number(n.orderId)), [changed, fresh], 'in creation order')
  t.equal(since.pageInfo.total, 2)
  t.equal(since.nodes[1].updatedAt, '2026-10-07T08:30:00.123456Z', 'microseconds kept')
  t.same((await read(since.nodes[1].updatedAt)).nodes, [], 'strictly after: the last updatedAt seen excludes that order')
  t.same((await read('2026-10-07T08:30:00.123455Z')).nodes.map((n) => Number(n.orderId)), [fresh])
  t.same((await read('2026-10-05T17:29:59+05:30')).nodes.map((n) => Number(n.orderId)), [changed, fresh], 'an offset is honoured')
  t.same((await read('2026-10-05T17:30:00+05:30')).nodes.map((n) => Number(n.orderId)), [fresh])
  t.same((await read('2000-01-01T00:00:00Z')).nodes.map((n) => Number(n.orderId)), [changed, old, fresh])

  const both = await graphql(app, token, OrderIdsDocument, { input: { updatedSince: '2026-10-02T00:00:00Z', fromDate: '2026-09-30' } })
  t.same(both.body.data!.orders!.nodes.map((n) => Number(n.orderId)), [fresh], 'combines with the date filter')
})

t.test('the number of SQL statements does not depend on the page size or the selection', async (t) => {
  const statements: string[] = []
  const { app, database } = await build(t, {}, { onQuery: (q) => statements.push(q) })
  const summary = await seedDemo(database, 400)
  const seller = summary.sellers[0]
  const token = await credential(database, seller.companyId, 'access-token')
  const count = async (limit: number, document: typeof OrdersDocument | typeof OrderIdsDocument = OrdersDocument) => {
    statements.length = 0
    const res = await graphql(app, token, document as typeof OrderIdsDocument, { input: { limit } })
    t.equal(res.body.data!.orders!.nodes.length, limit)
    return [...statements]
  }
  await count(1) // the first use of a credential also stamps last_used_at: not part of the comparison
  const one = await count(1)
  const hundred = await count(100)
  t.equal(one.length, hundred.length, 'limit 1 and limit 100: as many statements')
  t.equal(hundred.length, 2, 'credential lookup and one statement for the page (last_used_at is written only when stale)')
  t.equal((await count(100, OrderIdsDocument)).length, 2, 'the same for a small selection')

  const reads = (table: string) => new RegExp(`\\b(from|join) ${table}\\b`)
  const page = hundred.find((q) => q.includes('with page as'))!
  for (const table of ['retailers', 'shops', 'order_items', 'offers', 'items', 'skus', 'selling_units']) t.match(page, reads(table))
  const small = (await count(5, OrderIdsDocument)).find((q) => q.includes('with page as'))!
  for (const table of ['retailers', 'shops', 'order_items', 'offers', 'items', 'skus', 'selling_units']) {
    t.notMatch(small, reads(table), `${table}: not selected, not read`)
  }
  statements.length = 0
  await graphql(app, token, '{ orders { nodes { orderId orderItems { id sku { skuNickName } } } } }')
  const partial = statements.find((q) => q.includes('with page as'))!
  t.match(partial, reads('order_items'))
  t.match(partial, reads('skus'))
  for (const table of ['retailers', 'shops', 'offers', 'items', 'selling_units']) t.notMatch(partial, reads(table), `${table}: not selected, not read`)

  // Aliases, inline fragments and named fragments all count as selecting the field.
  statements.length = 0
  const merged = await graphql(app, token, `query { orders(input: {limit: 2}) { nodes { ... on Order { a: retailer { id } } b: retailer { syncId } ...Shop } } }
    fragment Shop on Order { shop { shopName } }`)
  t.notOk(merged.body.errors)
  const node = (merged.body.data as { orders: { nodes: Array<Record<string, unknown>> } }).orders.nodes[0]
  t.same(Object.keys(node).sort(), ['a', 'b', 'shop'])
  const mergedSql = statements.find((q) => q.includes('with page as'))!
  t.match(mergedSql, reads('retailers'))
  t.match(mergedSql, reads('shops'))
  t.notMatch(mergedSql, reads('order_items'))
})
