import t from 'tap'
import { createClient } from '@order-exchange/client'
import { serve } from '../helpers/client.js'

/* client.references against the real service: both lists walked page by page, and what is not mapped yet. */

t.test('unmapped() walks both lists with unmapped: true and returns exactly what lacks a sync ID', async (t) => {
  const served = await serve(t, { orders: 200 })
  const { sql } = served.database
  // Seller 1's gaps: a third of its retailers unmapped in the seed; unmap a shop of a mapped retailer, an
  // offer of a mapped item, and one item itself.
  const [shop] = await sql`select sl.shop_id, s.retailer_id from seller_shops sl join shops s on s.id = sl.shop_id
    join seller_retailers rl on rl.seller_id = 1 and rl.retailer_id = s.retailer_id
    where sl.seller_id = 1 and rl.sync_id is not null order by sl.shop_id limit 1`
  await sql`update seller_shops set sync_id = null where seller_id = 1 and shop_id = ${shop.shop_id}`
  const [offer] = await sql`select f.id, k.item_id from offers f join skus k on k.id = f.sku_id where f.seller_id = 1 order by f.id limit 1`
  await sql`update offers set offer_sync_id = null where id = ${offer.id}`
  const [item] = await sql`select id from items where seller_id = 1 and id <> ${offer.item_id} order by id desc limit 1`
  await sql`update items set item_sync_id = null where id = ${item.id}`

  const expectedRetailers = (await sql`select l.retailer_id from seller_retailers l where l.seller_id = 1 and (l.sync_id is null
    or exists (select from seller_shops sl join shops s on s.id = sl.shop_id where sl.seller_id = 1 and s.retailer_id = l.retailer_id
      and sl.sync_id is null)) order by l.retailer_id`).map((r) => r.retailer_id as number)
  t.ok(expectedRetailers.length > 2, `${expectedRetailers.length} unmapped retailers: more than one page of 2`)
  t.ok(expectedRetailers.includes(shop.retailer_id as number), 'the mapped retailer with the unmapped shop')

  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const unmapped = await client.references.unmapped({ limit: 2 })
  t.strictSame(unmapped.retailers.map((r) => r.id), expectedRetailers, 'every unmapped retailer once, by id, over several pages')
  for (const r of unmapped.retailers) {
    t.ok(r.syncId === null || r.shops.some((s) => s.syncId === null), `retailer ${r.id} lacks its own or a shop's sync ID`)
  }
  t.strictSame(unmapped.items.map((i) => i.id), [offer.item_id as number, item.id as number].sort((a, b) => a - b),
    'the item with the unmapped offer and the unmapped item')
  const withOffer = unmapped.items.find((i) => i.id === offer.item_id)!
  t.equal(withOffer.skus[0]!.offers.find((f) => f.id === offer.id)!.offerSyncId, null)
  t.equal(typeof withOffer.skus[0]!.offers[0]!.finalPriceWithTax, 'number', 'prices as numbers')

  // The lists without the filter: every linked retailer and item of seller 1, page by page.
  let pages = 0
  let retailers = 0
  for await (const page of client.references.retailers({ limit: 100 })) { pages++; retailers += page.nodes.length }
  const [{ n }] = await sql`select count(*)::int as n from seller_retailers where seller_id = 1`
  t.equal(retailers, n, `all ${n} retailers in ${pages} pages`)
  const items = []
  for await (const page of client.references.items()) items.push(...page.nodes)
  const [{ m }] = await sql`select count(*)::int as m from items where seller_id = 1`
  t.equal(items.length, m)

  const noToken = createClient({ baseUrl: served.baseUrl })
  await t.rejects(noToken.references.unmapped(), /needs an accessToken/)
})
