import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { createCatalogue, createOrder, createRetailer, type Catalogue } from '../helpers/order-fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { listen } from '../helpers/fuzz.js'
import { eq } from 'drizzle-orm'
import { items, sellerRetailers, sellerShops } from '../../src/db/schema.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { ReferenceErrors, ReferenceText } from '../../src/references/texts.js'
import { WRITE_CHUNK } from '../../src/references/reference-work.js'
import type { TestDatabase as Database } from '../helpers/build.js'

/*
 * PUT /v2/references/sync-data over HTTP (app.inject) on a real database: every refusal and its code, no
 * leak of another seller's records, swaps within one request, conflicts with what is stored, clearing,
 * the orders read showing the result at once, the matched shipment counts, the row limit, re-sending.
 */

type Row = { type: string, id: unknown, syncId: unknown }

function put (app: FastifyInstance, key: string | null, payload: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'PUT',
    url: REFERENCES_SYNC_PATH,
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
  })
}

/** A seller with two catalogue lines, two retailers with a shop each, an order of each, and its keys. */
async function market (database: Database, tag: string) {
  const seller = await createSeller(database)
  const lines: Catalogue[] = [await createCatalogue(database, seller, `${tag}1`), await createCatalogue(database, seller, `${tag}2`)]
  const r1 = await createRetailer(database, seller.sellerId, { syncId: null, shopSyncId: null })
  const r2 = await createRetailer(database, seller.sellerId, { syncId: `RET-${tag}2`, shopSyncId: `SHOP-${tag}2` })
  const orderIds = [
    await createOrder(database, lines[0], { retailerId: r1.retailerId, shopId: r1.shopId }),
    await createOrder(database, lines[1], { retailerId: r2.retailerId, shopId: r2.shopId })
  ]
  const key = await credential(database, seller.sellerId, 'api-key')
  const token = await credential(database, seller.sellerId, 'access-token')
  return { ...seller, lines, retailers: [r1, r2], orderIds, key, token }
}

async function setup (t: Parameters<typeof build>[0]) {
  const ctx = await build(t)
  const a = await market(ctx.database, 'A')
  const b = await market(ctx.database, 'B')
  return { ...ctx, a, b }
}

/** Every sync ID of a seller: type → id → sync ID. */
async function mappings (database: Database, sellerId: number) {
  const rows = await database.sql<Array<{ type: string, id: number, sync_id: string | null }>>`
    select 'RETAILER' as type, retailer_id as id, sync_id from seller_retailers where seller_id = ${sellerId}
    union all select 'SHOP', shop_id, sync_id from seller_shops where seller_id = ${sellerId}
    union all select 'ITEM', id, item_sync_id from items where seller_id = ${sellerId}
    union all select 'OFFER', id, offer_sync_id from offers where seller_id = ${sellerId}
    order by 1, 2`
  return rows.map((r) => `${r.type} ${r.id} ${r.sync_id}`)
}

const ORDERS = `query { orders(input: {limit: 100}) { nodes { orderId retailer { id syncId } shop { id syncId retailerSyncId }
  orderItems { item { id itemSyncId } offer { id offerSyncId } sku { offers { id offerSyncId } } } } } }`

t.test('sets sync IDs of every type; the next orders read shows them on the old orders', async (t) => {
  const { app, a } = await setup(t)
  const [r1, r2] = a.retailers
  const rows: Row[] = [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'CUST-1' },
    { type: 'SHOP', id: r1.shopId, syncId: 'OUTLET-1' },
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'PRODUCT-1' },
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'VARIANT-1' },
    { type: 'RETAILER', id: r2.retailerId, syncId: 'CUST-2' }
  ]
  const res = await put(app, a.key, rows)
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: ReferenceText.success,
    data: {
      received: 5,
      inserted: 2,
      updated: 3,
      unchanged: 0,
      failed: 0,
      errors: [],
      matched: { retailers: 0, shops: 0, offers: 0 }
    }
  }, 'the first retailer and its shop had none: inserted; the item, offer and second retailer had one: updated')

  const read = await graphql<any, any>(app, a.token, ORDERS)
  t.equal(read.statusCode, 200)
  const byId = new Map(read.body.data.orders.nodes.map((n: any) => [Number(n.orderId), n]))
  const first = byId.get(a.orderIds[0]) as any
  t.same(first.retailer, { id: r1.retailerId, syncId: 'CUST-1' })
  t.same(first.shop, { id: r1.shopId, syncId: 'OUTLET-1', retailerSyncId: 'CUST-1' }, 'shop.retailerSyncId follows the retailer')
  t.same(first.orderItems[0].item, { id: a.lines[0].itemId, itemSyncId: 'PRODUCT-1' })
  t.same(first.orderItems[0].offer, { id: a.lines[0].offerId, offerSyncId: 'VARIANT-1' })
  t.same(first.orderItems[0].sku.offers, [{ id: a.lines[0].offerId, offerSyncId: 'VARIANT-1' }])
  const second = byId.get(a.orderIds[1]) as any
  t.same(second.retailer.syncId, 'CUST-2')
  t.same(second.shop, { id: r2.shopId, syncId: 'SHOP-A2', retailerSyncId: 'CUST-2' }, 'a shop not sent keeps its sync ID')
  t.same(second.orderItems[0].offer.offerSyncId, 'VAR-A2')

  const again = await put(app, a.key, rows)
  t.match(again.json().data, { received: 5, inserted: 0, updated: 0, unchanged: 5, failed: 0 }, 're-sent: unchanged')
})

t.test('null clears a mapping (counted as updated); clearing what is not set is unchanged', async (t) => {
  const { app, database, a } = await setup(t)
  const [r1, r2] = a.retailers
  const res = await put(app, a.key, [
    { type: 'RETAILER', id: r2.retailerId, syncId: null },
    { type: 'OFFER', id: a.lines[1].offerId, syncId: null },
    { type: 'SHOP', id: r1.shopId, syncId: null }
  ])
  t.match(res.json().data, { received: 3, inserted: 0, updated: 2, unchanged: 1, failed: 0, errors: [] })
  const stored = await mappings(database, a.sellerId)
  t.ok(stored.includes(`RETAILER ${r2.retailerId} null`))
  t.ok(stored.includes(`OFFER ${a.lines[1].offerId} null`))
  const read = await graphql<any, any>(app, a.token, ORDERS)
  const second = read.body.data.orders.nodes.find((n: any) => Number(n.orderId) === a.orderIds[1])
  t.same([second.retailer.syncId, second.shop.retailerSyncId, second.orderItems[0].offer.offerSyncId],
    [null, null, null])
  // A cleared sync ID is free for another record.
  const reuse = await put(app, a.key, [{ type: 'RETAILER', id: r1.retailerId, syncId: 'RET-A2' }])
  t.match(reuse.json().data, { inserted: 1, failed: 0 })
})

t.test('a swap of two sync IDs in one request works, for every type', async (t) => {
  const { app, database, a } = await setup(t)
  const [r1, r2] = a.retailers
  await put(app, a.key, [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'X' }, { type: 'SHOP', id: r1.shopId, syncId: 'X' }
  ])
  const before = await mappings(database, a.sellerId)
  const swap = await put(app, a.key, [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'RET-A2' }, { type: 'RETAILER', id: r2.retailerId, syncId: 'X' },
    { type: 'SHOP', id: r2.shopId, syncId: 'X' }, { type: 'SHOP', id: r1.shopId, syncId: 'SHOP-A2' },
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'ITEM-A2' }, { type: 'ITEM', id: a.lines[1].itemId, syncId: 'ITEM-A1' },
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'VAR-A2' }, { type: 'OFFER', id: a.lines[1].offerId, syncId: 'VAR-A1' }
  ])
  t.equal(swap.statusCode, 200)
  t.match(swap.json().data, { received: 8, inserted: 0, updated: 8, failed: 0, errors: [] })
  const after = await mappings(database, a.sellerId)
  t.not(after, before)
  t.same(after, [
    `ITEM ${a.lines[0].itemId} ITEM-A2`, `ITEM ${a.lines[1].itemId} ITEM-A1`,
    `OFFER ${a.lines[0].offerId} VAR-A2`, `OFFER ${a.lines[1].offerId} VAR-A1`,
    `RETAILER ${r1.retailerId} RET-A2`, `RETAILER ${r2.retailerId} X`,
    `SHOP ${r1.shopId} SHOP-A2`, `SHOP ${r2.shopId} X`
  ])
  // A rotation of three (offers of a third catalogue line) works the same way.
  const c = await createCatalogue(database, a, 'A3')
  const rotate = await put(app, a.key, [
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'VAR-A1' },
    { type: 'OFFER', id: a.lines[1].offerId, syncId: 'VAR-A3' },
    { type: 'OFFER', id: c.offerId, syncId: 'VAR-A2' }
  ])
  t.match(rotate.json().data, { updated: 3, failed: 0 })
})

t.test('a rotation longer than one write statement: each record written once, uniqueness checked on commit', async (t) => {
  // Every record takes the sync ID its neighbour holds. The writes go in statements of WRITE_CHUNK rows,
  // so the last record of the first statement takes a sync ID that the second statement only moves away:
  // a check at the end of each statement would refuse this valid request. The constraint is deferred to
  // the commit (drizzle/0010, write-references.ts).
  const { app, database, a } = await setup(t)
  const n = WRITE_CHUNK + 1
  const made = await database.sql<Array<{ id: number }>>`insert into items (seller_id, item_name, item_sync_id)
    select ${a.sellerId}, 'Rotated ' || g, 'ROT-' || g from generate_series(0, ${n - 1}) g returning id`
  const ids = made.map((r) => r.id).sort((x, y) => x - y)
  const rotate = await put(app, a.key, ids.map((id, i) => ({ type: 'ITEM', id, syncId: `ROT-${(i + 1) % n}` })))
  t.equal(rotate.statusCode, 200)
  t.match(rotate.json().data, { received: n, inserted: 0, updated: n, failed: 0, errors: [] })
  const [wrong] = await database.sql<Array<{ count: number }>>`select count(*)::int as count from unnest(${ids}::int[])
    with ordinality as v(id, i) join items x on x.id = v.id where x.item_sync_id is distinct from 'ROT-' || (v.i % ${n})`
  t.equal(wrong.count, 0, 'every record holds its neighbour\'s former sync ID')
  // Outside the sync the constraint still holds at once: a second holder is refused by its statement.
  await t.rejects(database.sql`update items set item_sync_id = 'ROT-0' where id = ${ids[0]}`, { code: '23505' })
})

t.test('a write the database refuses while later types are queued behind it: nothing applied; refused once, run again', async (t) => {
  // The sync sends a type's writes while it decides the next type (sync-references.ts): when the first type's
  // write fails, the item and offer statements already sent after it fail with it, and the request must still
  // answer once, cleanly, with nothing of any type applied, and no promise left rejected behind it.
  const { app, database, a } = await setup(t)
  const rows: Row[] = [
    { type: 'RETAILER', id: a.retailers[0].retailerId, syncId: 'NEW-RET' },
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'NEW-ITEM' },
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'NEW-OFFER' }
  ]
  const before = await mappings(database, a.sellerId)
  await database.sql`create function refuse_link() returns trigger language plpgsql as $$
    begin raise exception 'injected: link write refused'; end $$`
  await database.sql`create trigger refuse_link before update on seller_retailers for each row execute function refuse_link()`
  const refused = await put(app, a.key, rows)
  t.equal(refused.statusCode, 500)
  t.same(refused.json(), { error: true, status: false, statusCode: 500, message: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' })
  t.same(await mappings(database, a.sellerId), before, 'nothing applied: the items and offers sent after it neither')

  // Refused once by the unique index (as a writer outside the service could make it: SYNC_ID_TAKEN's
  // check missed it): the whole run is made again, and applies. A sequence counts outside the transaction.
  await database.sql`drop trigger refuse_link on seller_retailers`
  await database.sql`create sequence refusals`
  await database.sql`create or replace function refuse_link() returns trigger language plpgsql as $$
    begin
      if nextval('refusals') = 1 then raise exception using errcode = 'unique_violation', message = 'injected'; end if;
      return new;
    end $$`
  await database.sql`create trigger refuse_link before update on seller_retailers for each row execute function refuse_link()`
  const retried = await put(app, a.key, rows)
  t.equal(retried.statusCode, 200)
  t.match(retried.json().data, { received: 3, failed: 0, errors: [] })
  const [{ calls }] = await database.sql<Array<{ calls: number }>>`select last_value::int as calls from refusals`
  t.equal(calls, 2, 'refused on the first run, passed on the second')
  const after = await mappings(database, a.sellerId)
  for (const row of rows) t.ok(after.includes(`${row.type} ${row.id} ${row.syncId}`), `${row.type} ${row.id} applied`)

  // The server is still whole: the same request again is unchanged.
  const again = await put(app, a.key, rows)
  t.match(again.json().data, { received: 3, inserted: 0, updated: 0, unchanged: 3 })
})

t.test('a sync ID another record holds is refused naming it; in the same request too', async (t) => {
  const { app, database, a } = await setup(t)
  const [r1, r2] = a.retailers
  const before = await mappings(database, a.sellerId)
  const res = await put(app, a.key, [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'RET-A2' }, // held by r2, which is not in the request
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'NEW-ITEM' },
    { type: 'ITEM', id: a.lines[1].itemId, syncId: 'NEW-ITEM' }, // the same request gives it to another item
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'VAR-A1' }, // its own: unchanged
    { type: 'SHOP', id: r1.shopId, syncId: 'RET-A2' } // another type: no conflict
  ])
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.same(data.errors, [
    { index: 0, ...text(ReferenceErrors.taken('RETAILER', 'RET-A2', r2.retailerId)) },
    { index: 2, ...text(ReferenceErrors.duplicateSyncId('ITEM', 'NEW-ITEM', a.lines[0].itemId, 1)) }
  ])
  t.match(data.errors[0].error, `retailer id ${r2.retailerId}`, 'names the other id')
  t.match(data, { received: 5, inserted: 1, updated: 1, unchanged: 1, failed: 2 })
  const after = await mappings(database, a.sellerId)
  t.ok(after.includes(`RETAILER ${r1.retailerId} null`), 'the refused row changed nothing')
  t.ok(after.includes(`RETAILER ${r2.retailerId} RET-A2`))
  t.equal(after.filter((m) => m !== before.find((b) => b === m)).length, 2, 'only the item and the shop changed')

  // A refusal cascades: r2 cannot give RET-A2 away (its row is refused: another retailer holds what it
  // asks for), so r1's row that takes RET-A2 is refused in turn.
  const r3 = await createRetailer(database, a.sellerId, { syncId: 'HELD', withShop: false })
  const cascade = await put(app, a.key, [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'RET-A2' },
    { type: 'RETAILER', id: r2.retailerId, syncId: 'HELD' }
  ])
  t.same(cascade.json().data.errors.map((e: any) => [e.index, e.code, e.error]), [
    [0, 'SYNC_ID_TAKEN', ReferenceErrors.taken('RETAILER', 'RET-A2', r2.retailerId).text],
    [1, 'SYNC_ID_TAKEN', ReferenceErrors.taken('RETAILER', 'HELD', r3.retailerId).text]
  ])
  t.same(await mappings(database, a.sellerId), [...after, `RETAILER ${r3.retailerId} HELD`].sort(), 'nothing changed')
})

t.test('no leak: another seller\'s records and unknown ids get the same answer, and change nothing', async (t) => {
  const { app, database, a, b } = await setup(t)
  const beforeA = await mappings(database, a.sellerId)
  const beforeB = await mappings(database, b.sellerId)
  const foreign: Row[] = [
    { type: 'RETAILER', id: a.retailers[0].retailerId, syncId: 'MINE-1' },
    { type: 'SHOP', id: a.retailers[0].shopId, syncId: 'MINE-2' },
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'MINE-3' },
    { type: 'OFFER', id: a.lines[0].offerId, syncId: null }
  ]
  const unknown: Row[] = [
    { type: 'RETAILER', id: 999_001, syncId: 'MINE-1' },
    { type: 'SHOP', id: 999_002, syncId: 'MINE-2' },
    { type: 'ITEM', id: 999_003, syncId: 'MINE-3' },
    { type: 'OFFER', id: 999_004, syncId: null }
  ]
  const seen = await put(app, b.key, foreign)
  const none = await put(app, b.key, unknown)
  t.equal(seen.statusCode, 200)
  const shape = (res: typeof seen, rows: Row[]) =>
    res.json().data.errors.map((e: any, i: number) => `${e.index} ${e.code} ${e.error.replace(String(rows[i].id), 'N')}`)
  t.same(shape(seen, foreign), shape(none, unknown), 'the same codes and texts')
  t.same(seen.json().data.errors[2], { index: 2, ...text(ReferenceErrors.notFound('ITEM', a.lines[0].itemId)) })
  t.match(seen.json().data, { failed: 4, inserted: 0, updated: 0, unchanged: 0 })
  t.same(await mappings(database, a.sellerId), beforeA)
  t.same(await mappings(database, b.sellerId), beforeB)

  // A retailer linked to both sellers: each seller's sync ID is its own.
  await database.db.insert(sellerRetailers)
    .values({ sellerId: b.sellerId, retailerId: a.retailers[1].retailerId, syncId: null })
  const both = await put(app, b.key, [{ type: 'RETAILER', id: a.retailers[1].retailerId, syncId: 'RET-A2' }])
  t.match(both.json().data, { inserted: 1, failed: 0 }, 'the same sync ID as seller A\'s: another seller\'s is no conflict')
  t.same(await mappings(database, a.sellerId), beforeA, 'seller A\'s link keeps its sync ID')
  // A shop is seen through the seller's own link only.
  await database.db.insert(sellerShops).values({ sellerId: b.sellerId, shopId: a.retailers[1].shopId!, syncId: null })
  const shop = await put(app, b.key, [{ type: 'SHOP', id: a.retailers[1].shopId, syncId: 'B-SHOP' }])
  t.match(shop.json().data, { inserted: 1, failed: 0 })
})

t.test('row refusals: every code, every text names its field', async (t) => {
  const { app, database, a } = await setup(t)
  const before = await mappings(database, a.sellerId)
  const item = a.lines[0].itemId
  const cases: Array<[unknown, string, string]> = [
    [null, 'ROW_NOT_OBJECT', ReferenceErrors.notAnObject.text],
    [[1, 2], 'ROW_NOT_OBJECT', ReferenceErrors.notAnObject.text],
    ['RETAILER', 'ROW_NOT_OBJECT', ReferenceErrors.notAnObject.text],
    [{ id: item, syncId: 'x' }, 'FIELD_REQUIRED', 'type is required'],
    [{ type: 'ITEM', syncId: 'x' }, 'FIELD_REQUIRED', 'id is required'],
    [{ type: 'ITEM', id: item }, 'FIELD_REQUIRED', 'syncId is required: a string, or null to clear the mapping'],
    [{ type: 'item', id: item, syncId: 'x' }, 'INVALID_TYPE', ReferenceErrors.type.text],
    [{ type: 'SKU', id: item, syncId: 'x' }, 'INVALID_TYPE', ReferenceErrors.type.text],
    [{ type: 'ITEM', id: String(item), syncId: 'x' }, 'INVALID_ID', ReferenceErrors.id.text],
    [{ type: 'ITEM', id: 0, syncId: 'x' }, 'INVALID_ID', ReferenceErrors.id.text],
    [{ type: 'ITEM', id: 1.5, syncId: 'x' }, 'INVALID_ID', ReferenceErrors.id.text],
    [{ type: 'ITEM', id: 2 ** 31, syncId: 'x' }, 'INVALID_ID', ReferenceErrors.id.text],
    [{ type: 'ITEM', id: item, syncId: '' }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 'x'.repeat(201) }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 'a\tb' }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 'a\u0000b' }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 'a\u009fb' }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 42 }, 'INVALID_SYNC_ID', ReferenceErrors.syncId.text],
    [{ type: 'ITEM', id: item, syncId: 'a\ud800' }, 'UNSTORABLE_TEXT', 'syncId must not contain NUL characters or unpaired surrogates'],
    [{ type: 'ITEM', id: 999_999, syncId: 'x' }, 'RECORD_NOT_FOUND', 'id 999999 is not a known item'],
    [{ type: 'SKU', id: -1, syncId: '' }, 'INVALID_TYPE',
      `${ReferenceErrors.type.text}; ${ReferenceErrors.id.text}; ${ReferenceErrors.syncId.text}`]
  ]
  const res = await put(app, a.key, cases.map(([row]) => row))
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.match(data, { received: cases.length, failed: cases.length, inserted: 0, updated: 0, unchanged: 0 })
  t.same(data.errors, cases.map(([, code, error], index) => ({ index, error, code })))
  for (const [, , error] of cases) t.match(error, /\b(type|id|syncId)\b|Row must be/, `names the field: ${error}`)
  t.same(await mappings(database, a.sellerId), before, 'nothing written')

  // The same record twice: the later row is refused naming the first.
  const twice = await put(app, a.key, [
    { type: 'ITEM', id: item, syncId: 'P1' }, { type: 'OFFER', id: a.lines[0].offerId, syncId: 'P1' },
    { type: 'ITEM', id: item, syncId: 'P2' }
  ])
  t.same(twice.json().data.errors, [{ index: 2, ...text(ReferenceErrors.duplicateRecord('ITEM', item, 0)) }])
  t.match(twice.json().data, { updated: 2, failed: 1 }, 'a sync ID of another type is no conflict')
  // 200-character sync IDs and any other printable text are kept exactly.
  const long = 'é'.repeat(100) + '📦'.repeat(50)
  const exact = await put(app, a.key, [{ type: 'ITEM', id: item, syncId: long }, { type: 'OFFER', id: a.lines[0].offerId, syncId: ' spaced \'"\\ ' }])
  t.match(exact.json().data, { updated: 2, failed: 0 })
  const [row] = await database.db.select({ s: items.itemSyncId }).from(items).where(eq(items.id, item))
  t.equal(row.s, long)

  // Ids as the request's text spells them (rows are parsed by JSON.parse): the same integer written
  // another way is that id; beyond a double, or a string that only looks like a number, is not an id.
  const offer = a.lines[0].offerId
  const spelled = await put(app, a.key, `[{"type":"ITEM","id":${item}.0,"syncId":"S1"},
    {"type":"OFFER","id":${offer}e0,"syncId":"S2"},{"type":"ITEM","id":1e400,"syncId":"S3"},
    {"type":"ITEM","id":21474836470000000000000,"syncId":"S4"},{"type":"ITEM","id":"\\u0000${item}","syncId":"S5"}]`)
  t.equal(spelled.statusCode, 200)
  t.same(spelled.json().data.errors, [2, 3, 4].map((index) => ({ index, ...text(ReferenceErrors.id) })))
  t.match(spelled.json().data, { updated: 2, failed: 3 })
})

t.test('request-level answers: auth, not an array, invalid JSON, too many rows, too large', async (t) => {
  const { app, database, a } = await setup(t)
  const token = a.token
  t.equal((await put(app, null, [])).statusCode, 401)
  t.equal((await put(app, token, [{ type: 'ITEM', id: 1, syncId: 'x' }])).statusCode, 401, 'an access token is not an API key')
  const bearer = await app.inject({
    method: 'PUT', url: REFERENCES_SYNC_PATH, headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` }, payload: '[]'
  })
  t.equal(bearer.statusCode, 401)
  t.same(bearer.json(), { error: true, status: false, statusCode: 401, message: 'Unauthorized', code: 'UNAUTHENTICATED' })
  for (const body of ['[]', '{}', '"x"', '{"type":"ITEM"}', 'null']) {
    const res = await put(app, a.key, body)
    t.same([res.statusCode, res.json().code, res.json().message], [400, 'NOT_AN_ARRAY', ReferenceText.notAnArray], body)
  }
  for (const body of ['', '[', '[{"type":"ITEM",}]', '[1,]', 'nope']) {
    const res = await put(app, a.key, body)
    t.same([res.statusCode, res.json().code], [400, 'INVALID_JSON'], JSON.stringify(body))
  }
  const text415 = await app.inject({ method: 'PUT', url: REFERENCES_SYNC_PATH, headers: { 'content-type': 'text/plain', 'x-api-key': a.key }, payload: '[]' })
  t.equal(text415.statusCode, 415)

  // 100,001 rows: 400 naming the limit, nothing written; 100,000 are taken.
  const before = await mappings(database, a.sellerId)
  const rows = (n: number) => '[' + Array.from({ length: n }, (_, i) => `{"type":"ITEM","id":${a.lines[i % 2].itemId + (i < 2 ? 0 : 10_000_000)},"syncId":"S${i}"}`).join(',') + ']'
  const over = await put(app, a.key, rows(100_001))
  t.same([over.statusCode, over.json().code, over.json().message], [400, 'TOO_MANY_ROWS', ReferenceText.tooManyRows(100_000, 100_001)])
  t.same(await mappings(database, a.sellerId), before)
  const max = await put(app, a.key, rows(100_000))
  t.equal(max.statusCode, 200)
  t.match(max.json().data, { received: 100_000, updated: 2, failed: 99_998 })

  const small = await build(t, { SYNC_BODY_LIMIT_BYTES: '2000' })
  const sellerKey = await credential(small.database, (await createSeller(small.database)).sellerId, 'api-key')
  const large = await put(small.app, sellerKey, rows(100))
  t.same([large.statusCode, large.json().code], [413, 'PAYLOAD_TOO_LARGE'])
})

t.test('matched: stored shipment rows whose sync IDs now match', async (t) => {
  const { app, database, a } = await setup(t)
  const [r1] = a.retailers
  const shipments = await app.inject({
    method: 'PUT',
    url: '/v2/shipments/outstanding/sync-data',
    headers: { 'content-type': 'application/json', 'x-api-key': a.key },
    payload: JSON.stringify([
      { retailerSyncId: 'ERP-R1', shopSyncId: 'ERP-S1', offerSyncId: 'ERP-O1', outstandingQuantity: 1 },
      { retailerSyncId: 'ERP-R1', shopSyncId: null, offerSyncId: 'ERP-O1', outstandingQuantity: 2 },
      { retailerSyncId: 'ERP-R1', shopSyncId: null, offerSyncId: 'VAR-A2', outstandingQuantity: 3 },
      { retailerSyncId: 'RET-A2', shopSyncId: 'ERP-S1', offerSyncId: 'ERP-O2', outstandingQuantity: 4 }
    ])
  })
  t.match(shipments.json().data.unmatched,
    { retailerSyncIds: { count: 1 }, shopSyncIds: { count: 1 }, offerSyncIds: { count: 2 } })
  const res = await put(app, a.key, [
    { type: 'RETAILER', id: r1.retailerId, syncId: 'ERP-R1' },
    { type: 'SHOP', id: r1.shopId, syncId: 'ERP-S1' },
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'ERP-O1' },
    { type: 'ITEM', id: a.lines[0].itemId, syncId: 'ERP-O2' }
  ])
  t.same(res.json().data.matched, { retailers: 3, shops: 2, offers: 2 })
  // Matched already: moving a sync ID to another record, or sending it again, matches nothing new.
  const moved = await put(app, a.key, [
    { type: 'OFFER', id: a.lines[0].offerId, syncId: 'VAR-A2' },
    { type: 'OFFER', id: a.lines[1].offerId, syncId: 'ERP-O1' }
  ])
  t.same(moved.json().data,
    { ...moved.json().data, updated: 2, failed: 0, matched: { retailers: 0, shops: 0, offers: 0 } })
  const after = await app.inject({
    method: 'PUT',
    url: '/v2/shipments/outstanding/sync-data',
    headers: { 'content-type': 'application/json', 'x-api-key': a.key },
    payload: JSON.stringify([{ retailerSyncId: 'ERP-R1', shopSyncId: 'ERP-S1', offerSyncId: 'ERP-O1', outstandingQuantity: 5 }])
  })
  t.match(after.json().data.unmatched,
    { retailerSyncIds: { count: 0 }, shopSyncIds: { count: 0 }, offerSyncIds: { count: 0 } },
    'the shipment sync sees them as matched')
  const [{ n }] = await database.sql`select count(*)::int as n from outstanding_shipments where seller_id = ${a.sellerId}`
  t.equal(n, 4, 'the references sync never writes shipment rows')
})

t.test('an Idempotency-Key replays the first answer', async (t) => {
  const { app, a } = await setup(t)
  const rows = [{ type: 'ITEM', id: a.lines[0].itemId, syncId: 'K1' }]
  const first = await put(app, a.key, rows, { 'idempotency-key': 'k-1' })
  const again = await put(app, a.key, rows, { 'idempotency-key': 'k-1' })
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.body, first.body)
  t.match(first.json().data, { updated: 1 })
})

/** An error as data.errors shows it, from the texts table. */
function text (error: { code: string, text: string }) {
  return { error: error.text, code: error.code }
}

t.test('concurrent syncs of one seller rotating sync IDs: never two records with one, never a 5xx', async (t) => {
  const { app, database, a } = await setup(t)
  const base = await listen(app)
  const lines = [...a.lines]
  for (let i = 3; i <= 6; i++) lines.push(await createCatalogue(database, a, `A${i}`))
  const retailers = [...a.retailers]
  for (let i = 0; i < 4; i++) {
    retailers.push(await createRetailer(database, a.sellerId, { syncId: null, shopSyncId: null }))
  }
  const records: Array<{ type: string, id: number }> = [
    ...retailers.map((r) => ({ type: 'RETAILER', id: r.retailerId })),
    ...lines.map((l) => ({ type: 'ITEM', id: l.itemId })),
    ...lines.map((l) => ({ type: 'OFFER', id: l.offerId }))
  ]
  const pool = retailers.map((_, i) => `P${i}`)
  let seed = 42
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  const permutation = () => {
    const p = [...pool]
    for (let i = p.length - 1; i > 0; i--) { const j = random(i + 1); [p[i], p[j]] = [p[j], p[i]] }
    return p
  }
  const send = async (rows: Row[]) => {
    const res = await fetch(`${base}${REFERENCES_SYNC_PATH}`, {
      method: 'PUT', headers: { 'content-type': 'application/json', 'x-api-key': a.key }, body: JSON.stringify(rows)
    })
    return { status: res.status, json: await res.json() as any }
  }
  const statuses: number[] = []
  const problems: string[] = []
  const worker = async (w: number) => {
    for (let round = 0; round < 25; round++) {
      // A whole permutation of the pool over each type's six records can never conflict: always all applied.
      // Every third request instead swaps two records' sync IDs as this worker last saw them: may be refused.
      let rows: Row[]
      if ((w + round) % 3 === 0) {
        const picked = [records[random(records.length)], records[random(records.length)]]
        rows = picked.map((r, i) => ({ ...r, syncId: pool[(round + i) % pool.length] }))
      } else {
        rows = ['RETAILER', 'ITEM', 'OFFER'].flatMap((type) => {
          const p = permutation()
          return records.filter((r) => r.type === type).map((r, i) => ({ ...r, syncId: p[i] }))
        })
      }
      const { status, json } = await send(rows)
      statuses.push(status)
      if (status !== 200) { problems.push(`${status} ${JSON.stringify(json).slice(0, 200)}`); continue }
      const d = json.data
      if (d.inserted + d.updated + d.unchanged + d.failed !== d.received) problems.push(`counts ${JSON.stringify(d)}`)
      if (rows.length > 2 && d.failed !== 0) problems.push(`a permutation refused: ${JSON.stringify(d.errors)}`)
      if (d.errors.some((e: any) => !['SYNC_ID_TAKEN', 'DUPLICATE_RECORD', 'DUPLICATE_SYNC_ID'].includes(e.code))) {
        problems.push(`unexpected ${JSON.stringify(d.errors)}`)
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
  t.same(problems, [])
  t.equal(statuses.length, 200)
  t.ok(statuses.every((s) => s === 200), 'never a 5xx (nor anything else)')
  const dupes = await database.sql`
    select 'RETAILER' as type, sync_id, count(*)::int from seller_retailers where seller_id = ${a.sellerId} and sync_id is not null group by sync_id having count(*) > 1
    union all select 'ITEM', item_sync_id, count(*)::int from items where seller_id = ${a.sellerId} and item_sync_id is not null group by item_sync_id having count(*) > 1
    union all select 'OFFER', offer_sync_id, count(*)::int from offers where seller_id = ${a.sellerId} and offer_sync_id is not null group by offer_sync_id having count(*) > 1`
  t.same(dupes, [], 'no sync ID on two records of one type')
  const final = await mappings(database, a.sellerId)
  t.ok(final.filter((m) => m.startsWith('ITEM')).every((m) => /P\d$/.test(m)), 'every item holds a pool sync ID')
})
