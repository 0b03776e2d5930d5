import t from 'tap'
import { asc, eq, inArray } from 'drizzle-orm'
import { build, type TestDatabase } from '../helpers/build.js'
import { credential, createSeller } from '../helpers/fixtures.js'
import { graphql, type GraphqlReply } from '../helpers/graphql.js'
import {
  ItemsDocument, OrdersDocument, RetailersDocument, type ItemsQuery, type RetailersQuery
} from '../../src/graphql/generated/operations.js'
import {
  items, offers, retailers, sellerRetailers, sellerShops, sellingUnits, shops, skus, type PriceSlab
} from '../../src/db/schema.js'

/*
 * The seller's reference lists (issue 23): `retailers` and `items`, over real HTTP requests to the app on
 * a real PostgreSQL. Seller scoping, the unmapped filter with its parent rule, paging and input errors as
 * the orders read has them, the cost, and every field as stored.
 */

type RetailerNode = NonNullable<RetailersQuery['retailers']>['nodes'][number]
type ItemNode = NonNullable<ItemsQuery['items']>['nodes'][number]

async function retailer (database: TestDatabase, name: string, phone: string | null = null): Promise<number> {
  const [row] = await database.db.insert(retailers).values({ name, firstName: name.split(' ')[0], lastName: 'Rao', phone, whatsapp: phone })
    .returning({ id: retailers.id })
  return row.id
}
async function shop (database: TestDatabase, retailerId: number, shopName: string): Promise<number> {
  const [row] = await database.db.insert(shops).values({ retailerId, shopName }).returning({ id: shops.id })
  return row.id
}
const linkRetailer = (database: TestDatabase, sellerId: number, retailerId: number, syncId: string | null) =>
  database.db.insert(sellerRetailers).values({ sellerId, retailerId, syncId })
const linkShop = (database: TestDatabase, sellerId: number, shopId: number, syncId: string | null) =>
  database.db.insert(sellerShops).values({ sellerId, shopId, syncId })

const SLABS: PriceSlab[] = [
  { minQuantity: 1, maxQuantity: 9, price: 105.25 }, { minQuantity: 10, maxQuantity: null, price: 99.5 }
]

/** An item of the seller with one SKU and one offer per given offer sync ID (none: a SKU without offers). */
async function item (
  database: TestDatabase, sellerId: number, itemSyncId: string | null, offerSyncIds: Array<string | null>
): Promise<number> {
  const { db } = database
  const [row] = await db.insert(items).values({ sellerId, itemName: `Item ${itemSyncId ?? 'unmapped'}`, itemSyncId }).returning({ id: items.id })
  const [sku] = await db.insert(skus).values({ sellerId, itemId: row.id, skuNickName: 'Tea 1kg', images: ['https://img/a.jpg'], tags: ['tea'] })
    .returning({ id: skus.id })
  for (const [i, offerSyncId] of offerSyncIds.entries()) {
    await db.insert(offers).values({
      sellerId, skuId: sku.id, offerSyncId, purchasePrice: '80.10', mrpPriceAmount: '120.00', finalPriceWithTax: `${105 + i}.25`, priceRange: SLABS
    })
  }
  await db.insert(sellingUnits).values({ skuId: sku.id, name: 'Case', multiplier: '12.5', isBaseUnit: false })
  return row.id
}

/**
 * Seller A and seller B. Retailers: r1 A only (mapped, a mapped shop); r2 linked to both (A: no sync ID,
 * its shop s2a mapped by both; s2b linked to B only, unmapped); r3 A only, mapped, its shop unmapped;
 * r4 B only; r5 A only, a mapped shop and a shop linked to nobody.
 * Items: A's i1 mapped (two mapped offers), i2 without item sync ID, i3 with an unmapped offer, i4 a SKU
 * without offers; B's i5.
 */
async function world (database: TestDatabase) {
  const a = await createSeller(database, { name: 'Seller A' })
  const b = await createSeller(database, { name: 'Seller B' })
  const r1 = await retailer(database, 'Asha Rao', '+919800000001')
  const r2 = await retailer(database, 'Bina Rao', '+919800000002')
  const r3 = await retailer(database, 'Chitra Rao')
  const r4 = await retailer(database, 'Deepa Rao', '+919800000004')
  const r5 = await retailer(database, 'Esha Rao', '+919800000005')
  await linkRetailer(database, a.sellerId, r1, 'A-R1')
  await linkRetailer(database, a.sellerId, r2, null)
  await linkRetailer(database, b.sellerId, r2, 'B-R2')
  await linkRetailer(database, a.sellerId, r3, 'A-R3')
  await linkRetailer(database, b.sellerId, r4, 'B-R4')
  await linkRetailer(database, a.sellerId, r5, 'A-R5')
  const s1 = await shop(database, r1, 'Asha Kirana')
  const s2a = await shop(database, r2, 'Bina Stores')
  const s2b = await shop(database, r2, 'Bina Mart')
  const s3 = await shop(database, r3, 'Chitra Traders')
  const s5 = await shop(database, r5, 'Esha Mart')
  const s5x = await shop(database, r5, 'Esha Nobody\'s')
  await linkShop(database, a.sellerId, s1, 'A-S1')
  await linkShop(database, a.sellerId, s2a, 'A-S2a')
  await linkShop(database, b.sellerId, s2a, 'B-S2a')
  await linkShop(database, b.sellerId, s2b, null)
  await linkShop(database, a.sellerId, s3, null)
  await linkShop(database, a.sellerId, s5, 'A-S5')
  const i1 = await item(database, a.sellerId, 'A-I1', ['A-V1', 'A-V2'])
  const i2 = await item(database, a.sellerId, null, ['A-V3'])
  const i3 = await item(database, a.sellerId, 'A-I3', ['A-V4', null])
  const i4 = await item(database, a.sellerId, 'A-I4', [])
  const i5 = await item(database, b.sellerId, null, [null])
  return { a, b, r: { r1, r2, r3, r4, r5 }, s: { s1, s2a, s2b, s3, s5, s5x }, i: { i1, i2, i3, i4, i5 } }
}

/** A retailer node as the database holds it, for `sellerId`: its link's sync ID and its shops linked to the seller. */
async function expectedRetailer (database: TestDatabase, sellerId: number, retailerId: number): Promise<RetailerNode> {
  const { db } = database
  const [r] = await db.select().from(retailers).where(eq(retailers.id, retailerId))
  const links = await db.select().from(sellerRetailers).where(eq(sellerRetailers.sellerId, sellerId))
  const syncId = links.find((l) => l.retailerId === retailerId)!.syncId
  const shopRows = await db.select().from(sellerShops).where(eq(sellerShops.sellerId, sellerId))
  const shopLinks = new Map(shopRows.map((l) => [l.shopId, l.syncId]))
  const own = (await db.select().from(shops).where(eq(shops.retailerId, retailerId)).orderBy(asc(shops.id)))
    .filter((s) => shopLinks.has(s.id))
  return {
    id: r.id,
    name: r.name,
    firstName: r.firstName,
    lastName: r.lastName,
    phone: r.phone,
    whatsapp: r.whatsapp,
    syncId,
    shops: own.map((s) => ({ id: s.id, syncId: shopLinks.get(s.id)!, retailerSyncId: syncId, shopName: s.shopName }))
  }
}

async function expectedItem (database: TestDatabase, itemId: number): Promise<ItemNode> {
  const { db } = database
  const [i] = await db.select().from(items).where(eq(items.id, itemId))
  const skuRows = await db.select().from(skus).where(eq(skus.itemId, itemId)).orderBy(asc(skus.id))
  const skuIds = skuRows.map((k) => k.id)
  const offerRows = await db.select().from(offers).where(inArray(offers.skuId, skuIds)).orderBy(asc(offers.id))
  const unitRows = await db.select().from(sellingUnits).where(inArray(sellingUnits.skuId, skuIds))
    .orderBy(asc(sellingUnits.id))
  return {
    id: i.id,
    itemName: i.itemName,
    itemSyncId: i.itemSyncId,
    skus: skuRows.map((k) => ({
      id: k.id,
      itemId: k.itemId,
      skuNickName: k.skuNickName,
      images: k.images,
      tags: k.tags,
      offers: offerRows.filter((f) => f.skuId === k.id).map((f) => ({
        id: f.id,
        skuId: f.skuId,
        offerSyncId: f.offerSyncId,
        finalPriceWithTax: Number(f.finalPriceWithTax),
        purchasePrice: Number(f.purchasePrice),
        mrpPriceAmount: Number(f.mrpPriceAmount),
        currency: f.currency,
        priceRange: f.priceRange
      })),
      itemSellingUnits: unitRows.filter((u) => u.skuId === k.id).map((u) => ({
        id: u.id, name: u.name, multiplier: Number(u.multiplier), isBaseUnit: u.isBaseUnit, skuId: u.skuId
      }))
    }))
  }
}

t.test('retailers: each seller sees only its own links, shops and sync IDs, as stored', async (t) => {
  const { app, database } = await build(t)
  const { a, b, r } = await world(database)
  const tokenA = await credential(database, a.sellerId, 'access-token')
  const tokenB = await credential(database, b.sellerId, 'access-token')

  const resA = await graphql(app, tokenA, RetailersDocument, { input: {} })
  t.equal(resA.statusCode, 200)
  t.notOk(resA.body.errors)
  const pageA = resA.body.data!.retailers!
  t.same(pageA.pageInfo, { total: 4, page: 1, hasNext: false, limit: 20 })
  const idsA = [r.r1, r.r2, r.r3, r.r5]
  t.strictSame(pageA.nodes, await Promise.all(idsA.map((id) => expectedRetailer(database, a.sellerId, id))), 'every field as stored, by id')
  const r2ForA = pageA.nodes.find((n) => n.id === r.r2)!
  t.equal(r2ForA.syncId, null, 'A never mapped r2: its own sync ID is null, not B\'s')
  t.strictSame(r2ForA.shops.map((s) => [s.shopName, s.syncId, s.retailerSyncId]), [['Bina Stores', 'A-S2a', null]],
    'only the shop linked to A, with A\'s sync IDs')
  t.strictSame(pageA.nodes.find((n) => n.id === r.r5)!.shops.map((s) => s.shopName), ['Esha Mart'], 'a shop linked to nobody is not listed')

  const pageB = (await graphql(app, tokenB, RetailersDocument, { input: {} })).body.data!.retailers!
  t.strictSame(pageB.nodes.map((n) => n.id), [r.r2, r.r4], 'B sees its two, never A\'s r1, r3, r5')
  t.strictSame(pageB.nodes, await Promise.all([r.r2, r.r4].map((id) => expectedRetailer(database, b.sellerId, id))))
  const r2ForB = pageB.nodes[0]
  t.equal(r2ForB.syncId, 'B-R2')
  t.strictSame(r2ForB.shops.map((s) => [s.shopName, s.syncId, s.retailerSyncId]),
    [['Bina Stores', 'B-S2a', 'B-R2'], ['Bina Mart', null, 'B-R2']], 'B\'s shops of r2 with B\'s sync IDs')
  t.notOk(resA.raw.includes('B-'), 'none of B\'s sync IDs in A\'s answer')
})

t.test('retailers unmapped: the retailer without a sync ID, or with a shop without one', async (t) => {
  const { app, database } = await build(t)
  const { a, b, r } = await world(database)
  const tokenA = await credential(database, a.sellerId, 'access-token')
  const tokenB = await credential(database, b.sellerId, 'access-token')
  const unmappedA = (await graphql(app, tokenA, RetailersDocument, { input: { unmapped: true } })).body.data!.retailers!
  t.strictSame(unmappedA.nodes.map((n) => n.id), [r.r2, r.r3], 'r2 (its own sync ID) and r3 (its shop\'s)')
  t.equal(unmappedA.pageInfo.total, 2)
  t.strictSame(unmappedA.nodes[1], await expectedRetailer(database, a.sellerId, r.r3), 'listed with all its shops')
  const unmappedB = (await graphql(app, tokenB, RetailersDocument, { input: { unmapped: true } })).body.data!.retailers!
  t.strictSame(unmappedB.nodes.map((n) => n.id), [r.r2], 'for B, r2 counts through its shop s2b; r4 is mapped')
  const all = (await graphql(app, tokenA, RetailersDocument, { input: { unmapped: false } })).body.data!.retailers!
  t.equal(all.pageInfo.total, 4, 'unmapped: false lists all')

  // Mapping the last ones empties the list; the other seller's gaps stay its own.
  await database.sql`update seller_retailers set sync_id = 'A-R2' where seller_id = ${a.sellerId} and retailer_id = ${r.r2}`
  await database.sql`update seller_shops set sync_id = 'A-S3' where seller_id = ${a.sellerId} and sync_id is null`
  const none = (await graphql(app, tokenA, RetailersDocument, { input: { unmapped: true } })).body.data!.retailers!
  t.same(none, { pageInfo: { total: 0, page: 1, hasNext: false, limit: 20 }, nodes: [] })
  const stillB = await graphql(app, tokenB, RetailersDocument, { input: { unmapped: true } })
  t.equal(stillB.body.data!.retailers!.nodes.length, 1)
})

t.test('items: only the seller\'s, with SKUs, offers and selling units as stored; unmapped by the item or an offer', async (t) => {
  const { app, database } = await build(t)
  const { a, b, i } = await world(database)
  const tokenA = await credential(database, a.sellerId, 'access-token')
  const tokenB = await credential(database, b.sellerId, 'access-token')
  const resA = await graphql(app, tokenA, ItemsDocument, { input: { limit: 100 } })
  t.notOk(resA.body.errors)
  const pageA = resA.body.data!.items!
  t.same(pageA.pageInfo, { total: 4, page: 1, hasNext: false, limit: 100 })
  t.strictSame(pageA.nodes, await Promise.all([i.i1, i.i2, i.i3, i.i4].map((id) => expectedItem(database, id))), 'every field as stored, by id')
  t.strictSame(pageA.nodes[3].skus[0].offers, [], 'a SKU without offers: an empty list')
  const pageB = (await graphql(app, tokenB, ItemsDocument, {})).body.data!.items!
  t.strictSame(pageB.nodes, [await expectedItem(database, i.i5)], 'B sees only its own item')

  const unmapped = (await graphql(app, tokenA, ItemsDocument, { input: { unmapped: true } })).body.data!.items!
  t.strictSame(unmapped.nodes.map((n) => n.id), [i.i2, i.i3], 'i2 (its own sync ID) and i3 (an offer\'s)')
  t.equal(unmapped.pageInfo.total, 2)
  t.strictSame(unmapped.nodes[1], await expectedItem(database, i.i3), 'listed with all its SKUs and offers')
  const unmappedB = await graphql(app, tokenB, ItemsDocument, { input: { unmapped: true } })
  t.strictSame(unmappedB.body.data!.items!.nodes.map((n) => n.id), [i.i5])
})

t.test('paging and input errors as the orders read has them', async (t) => {
  const { app, database } = await build(t)
  const seller = await createSeller(database)
  const token = await credential(database, seller.sellerId, 'access-token')
  const ids: number[] = []
  for (let n = 0; n < 45; n++) {
    const id = await retailer(database, `Retailer ${n}`)
    await linkRetailer(database, seller.sellerId, id, n % 3 === 0 ? null : `R-${n}`)
    ids.push(id)
    await item(database, seller.sellerId, n % 3 === 0 ? null : `I-${n}`, ['V-' + n])
  }
  const seen: number[] = []
  for (let page = 1; page <= 3; page++) {
    const body = (await graphql(app, token, RetailersDocument, { input: { page } })).body.data!.retailers!
    t.same(body.pageInfo, { total: 45, page, hasNext: page < 3, limit: 20 })
    seen.push(...body.nodes.map((n) => n.id))
  }
  t.strictSame(seen, [...ids].sort((x, y) => x - y), 'three pages of 20, 20 and 5, by id, none twice')
  const past = (await graphql(app, token, RetailersDocument, { input: { page: 9 } })).body.data!.retailers!
  t.same(past, { pageInfo: { total: 45, page: 9, hasNext: false, limit: 20 }, nodes: [] }, 'past the end: empty, total still counted')
  const capped = (await graphql(app, token, ItemsDocument, { input: { limit: 1000 } })).body.data!.items!
  t.same(capped.pageInfo, { total: 45, page: 1, hasNext: false, limit: 100 }, 'a limit above 100 is cut to 100')
  const unmappedPage = await graphql(app, token, ItemsDocument, { input: { unmapped: true, limit: 10, page: 2 } })
  const unmapped = unmappedPage.body.data!.items!
  t.same(unmapped.pageInfo, { total: 15, page: 2, hasNext: false, limit: 10 })
  t.equal(unmapped.nodes.length, 5)

  // The unmapped retailers' total when it must be counted (a full page with more, and past the end): the 15
  // without a sync ID, plus a mapped one through its shop without one; a shop link without one whose
  // retailer is not linked to the seller counts for nothing (its retailer is not the seller's).
  await linkShop(database, seller.sellerId, await shop(database, ids[1], 'Mapped retailer, unmapped shop'), null)
  await linkShop(database, seller.sellerId, await shop(database, await retailer(database, 'Not linked'), 'Stray shop'), null)
  const unmappedRetailers = async (page: number) =>
    (await graphql(app, token, RetailersDocument, { input: { unmapped: true, limit: 10, page } })).body.data!.retailers!
  const firstUnmapped = await unmappedRetailers(1)
  t.same(firstUnmapped.pageInfo, { total: 16, page: 1, hasNext: true, limit: 10 }, 'counted: 15 + 1 through its shop')
  t.same(await unmappedRetailers(5), { pageInfo: { total: 16, page: 5, hasNext: false, limit: 10 }, nodes: [] },
    'past the end: counted too')
  const secondUnmapped = await unmappedRetailers(2)
  t.ok([...firstUnmapped.nodes, ...secondUnmapped.nodes].some((n) => n.id === ids[1]), 'the mapped retailer is listed')
  t.equal(firstUnmapped.nodes.length + secondUnmapped.nodes.length, 16)

  for (const input of [{ page: 0 }, { page: -3 }, { limit: 0 }, { limit: -1 }, { page: 0, limit: 0 }]) {
    const orders = await graphql(app, token, OrdersDocument, { input })
    const lists: Array<[string, GraphqlReply<unknown>]> = [
      ['retailers', await graphql(app, token, RetailersDocument, { input })],
      ['items', await graphql(app, token, ItemsDocument, { input })]
    ]
    for (const [name, res] of lists) {
      t.equal(res.statusCode, orders.statusCode, `${name} ${JSON.stringify(input)}: same status`)
      t.same(res.body.data, { [name]: null })
      t.strictSame(res.body.errors!.map((e) => ({ ...e, path: undefined, locations: undefined })),
        orders.body.errors!.map((e) => ({ ...e, path: undefined, locations: undefined })),
        `${name} ${JSON.stringify(input)}: same error as orders`)
    }
  }
  const typed = await graphql(app, token, 'query ($input: RetailerListInput) { retailers(input: $input) { nodes { id } } }', { input: { limit: 'ten' } })
  t.equal(typed.statusCode, 400)
  t.equal(typed.body.errors![0].extensions!.code, 'BAD_USER_INPUT')
  const unauthenticated = await graphql(app, null, RetailersDocument, {})
  t.equal(unauthenticated.statusCode, 401)
})

const BUDGET = { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '1000000', GRAPHQL_COST_RESTORE_PER_SECOND: '1' }

t.test('cost: charged for the page asked for, billed for what came back', async (t) => {
  const { app, database } = await build(t, BUDGET)
  const { a } = await world(database)
  const token = await credential(database, a.sellerId, 'access-token')
  const cost = async (query: string) => {
    const res = await graphql(app, token, query)
    t.notOk(res.body.errors, query)
    const { requestedQueryCost, actualQueryCost } = (JSON.parse(res.raw) as {
      extensions: { cost: { requestedQueryCost: number, actualQueryCost: number } }
    }).extensions.cost
    return { requestedQueryCost, actualQueryCost }
  }
  // retailers 251, nodes 1; per retailer id 1 and shops 1; per shop id 1 (3 assumed per retailer).
  // A has 4 retailers with 1, 1, 1 and 1 shops linked to it.
  t.same(await cost('{ retailers(input: {limit: 5}) { nodes { id shops { id } } } }'),
    { requestedQueryCost: 252 + 5 * 2 + 5 * 3, actualQueryCost: 252 + 4 * 2 + 4 }, 'retailers')
  // items 251, nodes 1; per item id 1, skus 1; per SKU offers 1 (3 assumed per item); per offer id 1,
  // priceRange 1 (3 assumed per SKU); per slab price 1 (3 assumed per offer).
  // A has 4 items of one SKU each, 5 offers, 2 slabs each.
  t.same(await cost('{ items(input: {limit: 4}) { nodes { id skus { offers { id priceRange { price } } } } } }'),
    { requestedQueryCost: 252 + 4 * 2 + 12 * 1 + 36 * 2 + 108 * 1, actualQueryCost: 252 + 4 * 2 + 4 + 5 * 2 + 10 }, 'items')
  t.same(await cost('{ items { pageInfo { total } } }'), { requestedQueryCost: 253, actualQueryCost: 253 }, 'pageInfo alone')
  // docs/api/references.md "Listing your retailers and items": its example document.
  const example = `query Unmapped {
    retailers(input: {unmapped: true, limit: 100}) {
      pageInfo { total page hasNext limit }
      nodes { id name phone syncId shops { id shopName syncId retailerSyncId } }
    }
    items(input: {unmapped: true, limit: 100}) {
      pageInfo { total page hasNext limit }
      nodes { id itemName itemSyncId skus { id skuNickName offers { id offerSyncId finalPriceWithTax mrpPriceAmount } } }
    }
  }`
  t.equal((await cost(example)).requestedQueryCost, 7114, 'the documented example asks for 7,114 points')
})
