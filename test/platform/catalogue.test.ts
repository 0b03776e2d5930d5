import t from 'tap'
import { build } from '../helpers/build.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { createOrder, createRetailer } from '../helpers/order-fixtures.js'
import { PLATFORM_CATALOGUE_PATH, PLATFORM_DEALS_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'
import {
  IMAGE_MAX_LENGTH, MAX_IMAGES_PER_SKU, MAX_OFFERS_PER_SKU, MAX_SKUS_PER_ITEM, MAX_SLABS_PER_OFFER, MAX_TAGS_PER_SKU,
  MAX_UNITS_PER_SKU, PlatformRowErrors as E
} from '../../src/platform/texts.js'

/*
 * PUT /v2/platform/catalogue and PUT /v2/platform/deals (docs/platform/api.md): the per-row results, every
 * refusal's text and code, a re-send that writes nothing, records never removed by omission nor moved
 * between sellers or parents, the seller's sync IDs left alone, racing re-sends, an offer placed here read
 * back by its seller through POST /v2/graphql field for field, and deals kept above what orders grabbed.
 */

type Row = Record<string, any>

const offer = (id: number, extra: Row = {}): Row => ({
  id,
  purchasePrice: '80.10',
  mrpPriceAmount: 120,
  finalPriceWithTax: '105.25',
  currency: 'INR',
  priceRange: [{ minQuantity: 1, maxQuantity: 9, price: '105.25' }, { minQuantity: '10', maxQuantity: null, price: 99.5 }],
  ...extra
})
const unit = (id: number, extra: Row = {}): Row => ({ id, name: `Unit ${id}`, multiplier: 1, isBaseUnit: false, ...extra })
const sku = (id: number, extra: Row = {}): Row => ({
  id,
  skuNickName: `Sku ${id}`,
  images: [`https://img.example/${id}.jpg`],
  tags: ['tea'],
  itemSellingUnits: [unit(id * 10, { isBaseUnit: true }), unit(id * 10 + 1, { multiplier: '12.5' })],
  offers: [offer(id * 10), offer(id * 10 + 1, { priceRange: [] })],
  ...extra
})
const item = (id: number, companyId: number, extra: Row = {}): Row =>
  ({ id, companyId, itemName: `Item ${id}`, skus: [sku(id * 10)], ...extra })

const errorOf = (e: { code: string, text: string }) => ({ error: e.text, code: e.code })

async function setup (t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const ctx = await build(t, env)
  const key = await platformKey(ctx.database)
  const put = (url: string, body: unknown, headers: Record<string, string> = {}) => ctx.app.inject({
    method: 'PUT',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body)
  })
  const catalogue = (body: unknown, headers?: Record<string, string>) => put(PLATFORM_CATALOGUE_PATH, body, headers)
  const deals = (body: unknown, headers?: Record<string, string>) => put(PLATFORM_DEALS_PATH, body, headers)
  const sellers = await put(PLATFORM_SELLERS_PATH, [1, 2].map((companyId) => ({
    companyId,
    name: `Seller ${companyId}`,
    status: 'ACTIVE',
    takeRate: 0,
    autoRejectEnabled: false,
    stores: [{ id: companyId * 100, name: 'Main' }]
  })))
  t.equal(sellers.json().data.inserted, 2, 'sellers 1 and 2')
  return { ...ctx, key, catalogue, deals }
}

/** Every catalogue table, whole, in id order: what "nothing changed" is compared against. */
async function snapshot (sql: Awaited<ReturnType<typeof setup>>['database']['sql']) {
  return {
    items: await sql`select * from items order by id`,
    skus: await sql`select * from skus order by id`,
    offers: await sql`select *, price_range::text as price_range from offers order by id`,
    units: await sql`select * from selling_units order by id`
  }
}

t.test('inserted, updated, unchanged; records added, never removed; sync IDs left alone', async (t) => {
  const { catalogue, database } = await setup(t)
  const bare = { offers: [], itemSellingUnits: [] }
  const first = await catalogue([item(1, 1), item(2, 2, { skus: [sku(20), sku(21, bare)] })])
  t.equal(first.statusCode, 200)
  t.same(first.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: 'Catalogue upserted',
    data: { received: 2, inserted: 2, updated: 0, unchanged: 0, failed: 0, errors: [] }
  })
  const [stored] = await database.sql`select o.seller_id, o.sku_id, o.purchase_price::text as purchase,
      o.mrp_price_amount::text as mrp, o.final_price_with_tax::text as final, o.currency, o.price_range, o.offer_sync_id
    from offers o where o.id = 100`
  t.same(stored, {
    seller_id: 1,
    sku_id: 10,
    purchase: '80.10',
    mrp: '120.00',
    final: '105.25',
    currency: 'INR',
    price_range: [
      { minQuantity: 1, maxQuantity: 9, price: 105.25 },
      { minQuantity: 10, maxQuantity: null, price: 99.5 }
    ],
    offer_sync_id: null
  }, 'money stored exactly; the slabs as JSON numbers')
  t.same(await database.sql`select id, sku_id, name, multiplier::text, is_base_unit from selling_units where sku_id = 10 order by id`, [
    { id: 100, sku_id: 10, name: 'Unit 100', multiplier: '1.000', is_base_unit: true },
    { id: 101, sku_id: 10, name: 'Unit 101', multiplier: '12.500', is_base_unit: false }
  ])
  t.same(await database.sql`select id, seller_id, item_id, sku_nick_name, images, tags from skus where id = 10`,
    [{ id: 10, seller_id: 1, item_id: 1, sku_nick_name: 'Sku 10', images: ['https://img.example/10.jpg'], tags: ['tea'] }])

  // The seller's sync IDs (a later issue gives them) must survive every update of the marketplace.
  await database.sql`update items set item_sync_id = 'ITEM-1' where id = 1`
  await database.sql`update offers set offer_sync_id = 'VAR-100' where id = 100`
  const before = await snapshot(database.sql)

  const same = [
    item(1, 1, {
      skus: [sku(10, {
        itemSellingUnits: [unit(100, { isBaseUnit: true, multiplier: '1.000' }), unit(101, { multiplier: 12.5 })],
        offers: [offer(100, {
          purchasePrice: 80.1,
          mrpPriceAmount: '120.00',
          priceRange: [
            { minQuantity: '1.000', maxQuantity: 9, price: 105.25 }, { minQuantity: 10, maxQuantity: null, price: '99.50' }]
        }),
        offer(101, { priceRange: [] })]
      })]
    }),
    item(2, 2, { skus: [sku(20)] })
  ]
  const again = await catalogue(same)
  t.same(again.json().data, { received: 2, inserted: 0, updated: 0, unchanged: 2, failed: 0, errors: [] },
    'the same values in other forms are unchanged; sku 21 left out of item 2 is not removed')
  t.same(await snapshot(database.sql), before, 'nothing written')

  const changed = await catalogue([
    item(1, 1, { skus: [sku(10, { offers: [offer(100, { finalPriceWithTax: '104', priceRange: [{ minQuantity: 1, maxQuantity: null, price: 104 }] })] })] }),
    item(2, 2, { itemName: 'Renamed', skus: [] }),
    item(3, 1, { skus: [] })
  ])
  t.same(changed.json().data, { received: 3, inserted: 1, updated: 2, unchanged: 0, failed: 0, errors: [] })
  const after = await snapshot(database.sql)
  t.same(after.items.map((i) => [i.id, i.item_name, i.item_sync_id]),
    [[1, 'Item 1', 'ITEM-1'], [2, 'Renamed', null], [3, 'Item 3', null]], 'item_sync_id untouched')
  const offer100 = after.offers.find((o) => o.id === 100)!
  t.same([offer100.final_price_with_tax, offer100.offer_sync_id, offer100.price_range],
    ['104.00', 'VAR-100', '[{"price": 104, "maxQuantity": null, "minQuantity": 1}]'], 'offer_sync_id untouched')
  t.same(after.offers.map((o) => o.id), before.offers.map((o) => o.id), 'offers left out stay')
  t.same(after.skus.map((s) => s.id), [10, 20, 21], 'skus left out stay')

  const sku21 = await catalogue([item(2, 2, { itemName: 'Renamed', skus: [sku(21, { tags: ['a', 'b'], images: [] })] })])
  t.same(sku21.json().data.updated, 1, 'a change of a SKU alone updates its item row')
  t.same((await database.sql`select images, tags from skus where id = 21`)[0], { images: [], tags: ['a', 'b'] })

  // Rows made without an id (the demo seed's way) never draw one of the marketplace's.
  const [made] = await database.sql`insert into items (seller_id, item_name) values (1, 'seeded') returning id`
  t.ok(made.id > 3, 'the items sequence moved past the marketplace\'s ids')
  const [madeOffer] = await database.sql`insert into offers (seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    values (1, 10, 1, 1, 1) returning id`
  t.ok(madeOffer.id > 211, 'so did the offers sequence')
})

t.test('every refusal names its field, with its code; a refused row writes nothing, the others are applied', async (t) => {
  const { catalogue, database } = await setup(t)
  t.equal((await catalogue([item(9, 1)])).json().data.inserted, 1)
  const FIRST = 36 // the index of the first row of item 43
  const base = { isBaseUnit: true }
  const withSlabs = (id: number, priceRange: unknown[]) =>
    item(id, 1, { skus: [sku(id * 10, { offers: [offer(id * 100, { priceRange })] })] })
  const big = (n: number, make: (i: number) => unknown) => Array.from({ length: n + 1 }, (_, i) => make(i))
  const rows: Array<[unknown, { code: string, text: string } | null, number | null]> = [
    [42, E.notAnObject, null],
    [{ ...item(10, 1), id: undefined }, E.missing('id'), null],
    [item(0, 1, { skus: [] }), E.id('id'), null],
    [item(11, 0), E.companyId, 11],
    [item(12, 1, { itemName: '' }), E.name('itemName'), 12],
    [item(13, 1, { itemName: 'a\u0000' }), E.unstorable('itemName'), 13],
    [item(14, 1, { skus: {} }), E.list('skus', MAX_SKUS_PER_ITEM, 'objects {id, skuNickName, images, tags, itemSellingUnits, offers}'), 14],
    [item(15, 1, { skus: big(MAX_SKUS_PER_ITEM, (i) => sku(1500 + i)) }),
      E.list('skus', MAX_SKUS_PER_ITEM, 'objects {id, skuNickName, images, tags, itemSellingUnits, offers}'), 15],
    [item(16, 1, { skus: [7] }), E.element('skus[0]'), 16],
    [item(17, 1, { skus: [sku(170, { id: 'x' })] }), E.id('skus[0].id'), 17],
    [item(18, 1, { skus: [sku(180, { skuNickName: undefined })] }), E.missing('skus[0].skuNickName'), 18],
    [item(19, 1, { skus: [sku(190, { images: ['https://ok', ''] })] }), E.image('skus[0].images[1]'), 19],
    [item(20, 1, { skus: [sku(200, { images: ['x'.repeat(IMAGE_MAX_LENGTH + 1)] })] }), E.image('skus[0].images[0]'), 20],
    [item(21, 1, { skus: [sku(210, { images: big(MAX_IMAGES_PER_SKU, () => 'i') })] }),
      E.list('skus[0].images', MAX_IMAGES_PER_SKU, 'strings'), 21],
    [item(22, 1, { skus: [sku(220, { tags: [1] })] }), E.tag('skus[0].tags[0]'), 22],
    [item(23, 1, { skus: [sku(230, { tags: big(MAX_TAGS_PER_SKU, () => 't') })] }),
      E.list('skus[0].tags', MAX_TAGS_PER_SKU, 'strings'), 23],
    [item(24, 1, { skus: [sku(240, { tags: ['\ud800'] })] }), E.unstorable('skus[0].tags[0]'), 24],
    [item(25, 1, { skus: [sku(250, { itemSellingUnits: big(MAX_UNITS_PER_SKU, (i) => unit(25000 + i)) })] }),
      E.list('skus[0].itemSellingUnits', MAX_UNITS_PER_SKU, 'objects {id, name, multiplier, isBaseUnit}'), 25],
    [item(26, 1, { skus: [sku(260, { itemSellingUnits: [unit(2600, { multiplier: 0 })] })] }),
      E.positiveQuantity('skus[0].itemSellingUnits[0].multiplier'), 26],
    [item(27, 1, { skus: [sku(270, { itemSellingUnits: [unit(2700, { multiplier: '1.0001' })] })] }),
      E.positiveQuantity('skus[0].itemSellingUnits[0].multiplier'), 27],
    [item(28, 1, { skus: [sku(280, { itemSellingUnits: [unit(2800, { isBaseUnit: 'yes' })] })] }),
      E.baseUnit('skus[0].itemSellingUnits[0].isBaseUnit'), 28],
    [item(29, 1, { skus: [sku(290, { itemSellingUnits: [unit(2900, base), unit(2901, base)] })] }),
      E.baseUnitTwice('skus[0].itemSellingUnits[1].isBaseUnit', 'skus[0].itemSellingUnits[0]'), 29],
    [item(30, 1, { skus: [sku(300, { offers: big(MAX_OFFERS_PER_SKU, (i) => offer(30000 + i)) })] }),
      E.list('skus[0].offers', MAX_OFFERS_PER_SKU, 'objects {id, purchasePrice, mrpPriceAmount, finalPriceWithTax, currency, priceRange}'), 30],
    [item(31, 1, { skus: [sku(310, { offers: [offer(3100, { purchasePrice: -1 })] })] }), E.money('skus[0].offers[0].purchasePrice'), 31],
    [item(32, 1, { skus: [sku(320, { offers: [offer(3200, { mrpPriceAmount: '1.005' })] })] }), E.money('skus[0].offers[0].mrpPriceAmount'), 32],
    [item(33, 1, { skus: [sku(330, { offers: [offer(3300, { finalPriceWithTax: 1e12 })] })] }),
      E.money('skus[0].offers[0].finalPriceWithTax'), 33],
    [item(34, 1, { skus: [sku(340, { offers: [offer(3400, { currency: 'inr' })] })] }), E.currency('skus[0].offers[0].currency'), 34],
    [withSlabs(35, big(MAX_SLABS_PER_OFFER, () => ({ minQuantity: 1, maxQuantity: null, price: 1 }))),
      E.list('skus[0].offers[0].priceRange', MAX_SLABS_PER_OFFER, 'objects {minQuantity, maxQuantity, price}'), 35],
    [withSlabs(36, [{ minQuantity: 5, maxQuantity: 4, price: 1 }]),
      E.slabBounds('skus[0].offers[0].priceRange[0]'), 36],
    [withSlabs(37, [{ minQuantity: 1, price: 1 }]),
      E.missing('skus[0].offers[0].priceRange[0].maxQuantity'), 37],
    [withSlabs(38, [{ minQuantity: -1, maxQuantity: null, price: 1 }]),
      E.quantity('skus[0].offers[0].priceRange[0].minQuantity'), 38],
    [withSlabs(138, [{ minQuantity: 1, maxQuantity: null, price: '1e3' }]),
      E.money('skus[0].offers[0].priceRange[0].price'), 138],
    [item(39, 1, { skus: [sku(390), sku(390, { offers: [], itemSellingUnits: [] })] }), E.skuIdTwiceInRow('skus[1].id', 390), 39],
    [item(40, 1, { skus: [sku(400, { offers: [offer(4000)] }), sku(401, { offers: [offer(4000)] })] }),
      E.offerIdTwiceInRow('skus[1].offers[0].id', 4000), 40],
    [item(41, 1, { skus: [sku(410, { itemSellingUnits: [unit(4100), unit(4100)] })] }),
      E.unitIdTwiceInRow('skus[0].itemSellingUnits[1].id', 4100), 41],
    [item(42, 3), E.sellerNotFound(3), 42],
    [item(43, 1), null, 43],
    [item(43, 1), E.itemIdTwice(43, FIRST), 43],
    [item(44, 1, { skus: [sku(430, { offers: [], itemSellingUnits: [] })] }), E.skuIdTwiceInRequest('skus[0].id', 430, FIRST), 44],
    [item(45, 1, { skus: [sku(450, { offers: [offer(4300)] })] }), E.offerIdTwiceInRequest('skus[0].offers[0].id', 4300, FIRST), 45],
    [item(46, 1, { skus: [sku(460, { itemSellingUnits: [unit(4300)] })] }),
      E.unitIdTwiceInRequest('skus[0].itemSellingUnits[0].id', 4300, FIRST), 46],
    [item(47, 1, { skus: [sku(90, { offers: [], itemSellingUnits: [] })] }), E.skuOfAnotherItem('skus[0].id', 90), 47],
    [item(48, 1, { skus: [sku(480, { offers: [offer(900)] })] }), E.offerOfAnotherSku('skus[0].offers[0].id', 900), 48],
    [item(49, 1, { skus: [sku(490, { itemSellingUnits: [unit(901)] })] }),
      E.unitOfAnotherSku('skus[0].itemSellingUnits[0].id', 901), 49],
    [item(9, 2, { skus: [] }), E.itemOfAnotherSeller(9), 9]
  ]
  t.same([(rows[FIRST][0] as Row).id, rows[FIRST][1]], [43, null])
  const res = await catalogue(rows.map(([row]) => row))
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.same(data.errors, rows.flatMap(([, error, id], index) => error ? [{ index, id, ...errorOf(error) }] : []))
  t.same([data.received, data.inserted, data.failed], [rows.length, 1, rows.length - 1])

  const several = await catalogue([{ id: 50, companyId: 'x', skus: [sku(500, { offers: [offer(5000, { currency: 'EURO', purchasePrice: 'a' })] })] }])
  t.same(several.json().data.errors[0], {
    index: 0,
    id: 50,
    code: 'INVALID_COMPANY_ID',
    error: [E.companyId, E.missing('itemName'), E.money('skus[0].offers[0].purchasePrice'), E.currency('skus[0].offers[0].currency')]
      .map((e) => e.text).join('; ')
  }, 'every broken field of the row in order, the first one\'s code: one bad offer refuses the whole item')
  const foreign = await catalogue([item(51, 1, {
    skus: [sku(90, { offers: [offer(900)] }), sku(510, { offers: [offer(901)] })]
  })])
  t.same(foreign.json().data.errors[0], {
    index: 0, id: 51, ...errorOf({ code: 'SKU_OF_ANOTHER_ITEM', text: [E.skuOfAnotherItem('skus[0].id', 90), E.offerOfAnotherSku('skus[1].offers[0].id', 901)].map((e) => e.text).join('; ') })
  }, 'every record that belongs elsewhere')
  t.same((await database.sql`select id from items order by id`).map((r) => r.id), [9, 43], 'refused rows wrote nothing')
  t.same((await database.sql`select id from skus order by id`).map((r) => r.id), [90, 430])
})

t.test('another seller\'s ids are refused without saying whose, and nothing of theirs changes', async (t) => {
  const { catalogue, database } = await setup(t)
  await catalogue([item(1, 1, { itemName: 'Secret item' })])
  const before = await snapshot(database.sql)
  const res = await catalogue([
    item(1, 2, { skus: [] }),
    item(2, 2, { skus: [sku(10, { offers: [], itemSellingUnits: [] })] }),
    item(3, 2, { skus: [sku(30, { offers: [offer(100)], itemSellingUnits: [unit(101)] })] })
  ])
  const { errors } = res.json().data
  t.same(errors, [
    { index: 0, id: 1, ...errorOf(E.itemOfAnotherSeller(1)) },
    { index: 1, id: 2, ...errorOf(E.skuOfAnotherItem('skus[0].id', 10)) },
    {
      index: 2,
      id: 3,
      error: [E.unitOfAnotherSku('skus[0].itemSellingUnits[0].id', 101), E.offerOfAnotherSku('skus[0].offers[0].id', 100)]
        .map((e) => e.text).join('; '),
      code: 'SELLING_UNIT_OF_ANOTHER_SKU'
    }
  ])
  t.notMatch(res.body, /Secret|Seller 1|companyId 1\b/, 'nothing of the other seller shows')
  t.same(await snapshot(database.sql), before)
})

t.test('racing re-sends of the same batch: one write, the same final state, the counts add up', async (t) => {
  const { catalogue, database } = await setup(t)
  const batch = Array.from({ length: 60 }, (_, i) => item(i + 1, (i % 2) + 1, {
    skus: [sku((i + 1) * 10, { offers: Array.from({ length: 5 }, (_, o) => offer((i + 1) * 100 + o)) })]
  }))
  const answers = await Promise.all([catalogue(batch), catalogue(batch), catalogue([...batch].reverse())])
  t.same(answers.map((a) => a.statusCode), [200, 200, 200])
  const data = answers.map((a) => a.json().data)
  t.same(data.map((d) => d.inserted + d.updated + d.unchanged), [60, 60, 60], 'every row of every send is applied')
  t.same(data.map((d) => d.inserted).sort((a: number, b: number) => a - b), [0, 0, 60], 'one send inserts every row')
  t.same(data.map((d) => d.updated), [0, 0, 0], 'the others find them unchanged')
  const state = await snapshot(database.sql)
  t.same([state.items.length, state.skus.length, state.offers.length, state.units.length], [60, 60, 300, 120])
  const resent = await catalogue(batch)
  t.same(resent.json().data.unchanged, 60)
  t.same(await snapshot(database.sql), state, 'a later re-send leaves it exactly as it was')

  const keyed = await Promise.all([1, 2].map(() => catalogue([item(99, 1)], { 'idempotency-key': 'cat-1' })))
  t.same(keyed.map((a) => a.statusCode), [200, 200])
  t.equal(keyed.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 1, 'one of them is the replay')
  t.same(keyed[0].json(), keyed[1].json())
})

const READ = `query { orders { nodes { orderItems {
  skuId
  item { id itemName itemSyncId }
  offer { id skuId offerSyncId finalPriceWithTax purchasePrice mrpPriceAmount currency priceRange { minQuantity maxQuantity price } }
  sku { itemId skuNickName images tags
    offers { id skuId offerSyncId finalPriceWithTax purchasePrice mrpPriceAmount currency priceRange { minQuantity maxQuantity price } }
    itemSellingUnits { id name multiplier isBaseUnit skuId } }
} } } }`

for (const passThrough of ['true', 'false']) {
  t.test(`what goes in is what the seller reads (GRAPHQL_PASS_THROUGH=${passThrough})`, async (t) => {
    const { app, catalogue, database } = await setup(t, { GRAPHQL_PASS_THROUGH: passThrough })
    const slabs = [
      { minQuantity: 0.5, maxQuantity: '9.999', price: '105.25' },
      { minQuantity: '10', maxQuantity: null, price: 99.5 },
      { minQuantity: 99999999999.999, maxQuantity: null, price: '999999999999.99' }
    ]
    const placed = item(7, 1, {
      itemName: 'Assam Tea ☕',
      skus: [sku(70, {
        images: ['https://img.example/a.jpg', 'https://img.example/b.jpg'],
        tags: ['tea', 'assam', 'ünï'],
        itemSellingUnits: [unit(700, { name: 'Pack', isBaseUnit: true }), unit(701, { name: 'Case', multiplier: '12.125' })],
        offers: [
          offer(700, { purchasePrice: '80.10', mrpPriceAmount: 120, finalPriceWithTax: '0.01', currency: 'USD', priceRange: slabs }),
          offer(701, { priceRange: [] })
        ]
      })]
    })
    t.equal((await catalogue([placed])).json().data.inserted, 1)
    const { retailerId, shopId } = await createRetailer(database, 1)
    const line = { sellerId: 1, storeIds: [100], itemId: 7, skuId: 70, offerId: 700 }
    await createOrder(database, line, { retailerId, shopId })
    const token = await credential(database, 1, 'access-token')
    const res = await graphql<any, never>(app, token, READ)
    t.equal(res.statusCode, 200, res.raw.slice(0, 300))
    const readOffer = (id: number, extra: Row) => ({
      id, skuId: 70, offerSyncId: null, ...extra
    })
    const expectedSlabs = [
      { minQuantity: 0.5, maxQuantity: 9.999, price: 105.25 },
      { minQuantity: 10, maxQuantity: null, price: 99.5 },
      { minQuantity: 99999999999.999, maxQuantity: null, price: 999999999999.99 }
    ]
    const offer700 = readOffer(700, {
      finalPriceWithTax: 0.01, purchasePrice: 80.1, mrpPriceAmount: 120, currency: 'USD', priceRange: expectedSlabs
    })
    const offer701 = readOffer(701, {
      finalPriceWithTax: 105.25, purchasePrice: 80.1, mrpPriceAmount: 120, currency: 'INR', priceRange: []
    })
    t.same(res.body.data.orders.nodes, [{
      orderItems: [{
        skuId: 70,
        item: { id: 7, itemName: 'Assam Tea ☕', itemSyncId: null },
        offer: offer700,
        sku: {
          itemId: 7,
          skuNickName: 'Sku 70',
          images: ['https://img.example/a.jpg', 'https://img.example/b.jpg'],
          tags: ['tea', 'assam', 'ünï'],
          offers: [offer700, offer701],
          itemSellingUnits: [
            { id: 700, name: 'Pack', multiplier: 1, isBaseUnit: true, skuId: 70 },
            { id: 701, name: 'Case', multiplier: 12.125, isBaseUnit: false, skuId: 70 }
          ]
        }
      }]
    }], 'field for field, with the JSON types of the read')
    t.match(res.raw, /"price":999999999999\.99/, 'the largest money value comes back digit for digit')
    const resent = await catalogue([placed])
    t.same(resent.json().data.unchanged, 1, 'and sending what was read back in is unchanged')
  })
}

const deal = (id: number, companyId: number, offerId: number, extra: Row = {}): Row =>
  ({ id, companyId, offerId, dealDate: '2024-06-30', dealPrice: '95.00', maxQuantity: 10, ...extra })

t.test('deals: inserted, updated, unchanged; every refusal; never below the grabbed quantity', async (t) => {
  const { catalogue, deals, database } = await setup(t)
  // Offers 10 and 11 (sku 1 of item 1) are seller 1's, offer 20 seller 2's.
  t.equal((await catalogue([
    item(1, 1, { skus: [sku(1, { offers: [offer(10), offer(11)], itemSellingUnits: [] })] }),
    item(2, 2, { skus: [sku(2, { offers: [offer(20)], itemSellingUnits: [] })] })
  ])).json().data.inserted, 2)
  const first = await deals([deal(1, 1, 10), deal(2, 1, 11, { dealPrice: 1, maxQuantity: '0.5' }), deal(3, 2, 20)])
  t.same(first.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: 'Deals upserted',
    data: { received: 3, inserted: 3, updated: 0, unchanged: 0, failed: 0, errors: [] }
  })
  const stored = () => database.sql`select id, seller_id, offer_id, deal_date::text, deal_price::text, max_quantity::text,
      grabbed_quantity::text, updated_at::text from daily_deals order by id`
  const before = await stored()
  t.same(before.map((d) => [d.id, d.offer_id, d.deal_date, d.deal_price, d.max_quantity, d.grabbed_quantity]), [
    [1, 10, '2024-06-30', '95.00', '10.000', '0.000'],
    [2, 11, '2024-06-30', '1.00', '0.500', '0.000'],
    [3, 20, '2024-06-30', '95.00', '10.000', '0.000']
  ])
  const again = await deals([
    deal(1, 1, 10, { dealPrice: 95, maxQuantity: '10.000' }),
    deal(2, 1, 11, { dealPrice: '1.0', maxQuantity: 0.5 })
  ])
  t.same(again.json().data, { received: 2, inserted: 0, updated: 0, unchanged: 2, failed: 0, errors: [] })
  t.same(await stored(), before, 'a re-send writes nothing, updated_at included')

  // Orders grabbed 4 of deal 1; deal 2 was named by an order line whose quantity was given back.
  await database.sql`update daily_deals set grabbed_quantity = 4 where id = 1`
  const { retailerId, shopId } = await createRetailer(database, 1)
  const line = { sellerId: 1, storeIds: [100], itemId: 1, skuId: 1, offerId: 11 }
  const orderId = await createOrder(database, line, { retailerId, shopId })
  await database.sql`update order_items set deal_id = 2 where order_id = ${orderId}`

  const rows: Array<[unknown, { code: string, text: string } | null, number | null]> = [
    ['x', E.notAnObject, null],
    [{ ...deal(0, 1, 10), id: undefined }, E.missing('id'), null],
    [deal(0, 1, 10), E.id('id'), null],
    [deal(4, 1, 10, { companyId: -1 }), E.companyId, 4],
    [deal(5, 1, 10, { offerId: '10' }), E.id('offerId'), 5],
    [deal(6, 1, 10, { dealDate: '2024-02-30' }), E.dealDate, 6],
    [deal(7, 1, 10, { dealDate: '2024-6-30' }), E.dealDate, 7],
    [deal(8, 1, 10, { dealPrice: '-1' }), E.money('dealPrice'), 8],
    [deal(9, 1, 10, { maxQuantity: 0 }), E.positiveQuantity('maxQuantity'), 9],
    [deal(10, 1, 10, { maxQuantity: '100000000000' }), E.positiveQuantity('maxQuantity'), 10],
    [deal(11, 3, 10), E.sellerNotFound(3), 11],
    [deal(12, 1, 999), E.offerNotFound(999, 1), 12],
    [deal(13, 1, 20), E.offerNotFound(20, 1), 13],
    [deal(3, 1, 10), E.dealOfAnotherSeller(3), 3],
    [deal(1, 1, 10, { maxQuantity: '3.999' }), E.belowGrabbed('3.999', '4'), 1],
    [deal(14, 1, 10), null, 14],
    [deal(14, 1, 10), E.dealIdTwice(14, 15), 14],
    [deal(2, 1, 10), E.offerOfGrabbedDeal(11, 10), 2]
  ]
  const res = await deals(rows.map(([row]) => row))
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.same(data.errors, rows.flatMap(([, error, id], index) => error ? [{ index, id, ...errorOf(error) }] : []))
  t.same([data.received, data.inserted, data.failed], [rows.length, 1, rows.length - 1])
  t.same(await database.sql`select id from daily_deals order by id`, [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 14 }])
  t.same((await stored()).slice(0, 3), [{ ...before[0], grabbed_quantity: '4.000' }, before[1], before[2]],
    'refused rows changed nothing')

  const changed = await deals([
    deal(1, 1, 10, { maxQuantity: 4, dealDate: '2024-07-01', dealPrice: '90.5' }),
    deal(2, 1, 11, { maxQuantity: 1 })
  ])
  t.same(changed.json().data, { received: 2, inserted: 0, updated: 2, unchanged: 0, failed: 0, errors: [] },
    'maxQuantity down to exactly the grabbed quantity is allowed; a grabbed deal keeps its offer but not the rest')
  const [one] = await stored()
  t.same([one.offer_id, one.deal_date, one.deal_price, one.max_quantity, one.grabbed_quantity],
    [10, '2024-07-01', '90.50', '4.000', '4.000'], 'never the grabbed quantity')
  t.ok(one.updated_at > before[0].updated_at, 'an update moves updated_at')
  const several = await deals([{ id: 'x', dealDate: 20240630 }])
  t.same(several.json().data.errors[0], {
    index: 0,
    id: null,
    code: 'INVALID_ID',
    error: [E.id('id'), E.missing('companyId'), E.missing('offerId'), E.dealDate, E.missing('dealPrice'), E.missing('maxQuantity')]
      .map((e) => e.text).join('; ')
  }, 'every broken field, the first one\'s code')
  const made = await database.sql`insert into daily_deals (seller_id, offer_id, deal_date, deal_price, max_quantity)
    values (1, 10, '2024-01-01', 1, 1) returning id`
  t.ok(made[0].id > 14, 'the deals sequence moved past the marketplace\'s ids')
})
