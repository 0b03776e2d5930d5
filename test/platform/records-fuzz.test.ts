import t from 'tap'
import fc from 'fast-check'
import { build } from '../helpers/build.js'
import { platformKey } from '../helpers/fixtures.js'
import {
  assertDeepBodies, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns, fuzzSeed,
  hostileString, listen, responseProblem, rowRouteStatusProblem, send
} from '../helpers/fuzz.js'
import {
  PLATFORM_CATALOGUE_PATH, PLATFORM_DEALS_PATH, PLATFORM_POINTS_PATH, PLATFORM_RETAILERS_PATH, PLATFORM_SELLERS_PATH
} from '../../src/routes/rest-contract.js'
import { PlatformRowErrors } from '../../src/platform/texts.js'

/*
 * The platform routes fuzzed over real HTTP from fixed seeds: rows whose fields are of every wrong type,
 * hostile text, repeated keys and stores of other sellers, amounts that would overflow or go below zero.
 * Every answer is a 200 or a 4xx in the envelope; a 200's counts add up to the rows received, its errors
 * are in row order with a code of the platform's table; and after every request each seller's points
 * balance still equals its ledger. Retailer bodies repeat a retailer for several sellers (agreeing or not),
 * claim shops of other retailers and name unknown sellers; every shop link keeps its retailer's link beside it.
 * Catalogue and deal bodies, from small id spaces so that ids repeat within
 * a request and across sellers and parents: the same rules, and afterwards every record is its parent's
 * seller's and no deal is below what was grabbed of it.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const CODES = new Set<string>(Object.values(PlatformRowErrors).map((e) => typeof e === 'function' ? (e as unknown as () => { code: string })().code : e.code))

function wild (g: G): unknown {
  return g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.integer(), fc.double(), fc.constant(null)))
}

const companyId = (g: G): unknown => coin(g, 85) ? g(fc.integer, { min: 1, max: 12 }) : wild(g)

function storeList (g: G): unknown {
  if (coin(g, 5)) return wild(g)
  return Array.from({ length: g(fc.nat, 3) }, () => coin(g, 5)
    ? wild(g)
    : { id: coin(g, 85) ? g(fc.integer, { min: 1, max: 40 }) : wild(g), name: coin(g, 80) ? pick(g, ['a', 'b', 'Main']) : wild(g) })
}

function sellerRow (g: G): unknown {
  if (coin(g, 4)) return wild(g)
  const row: Record<string, unknown> = {
    companyId: companyId(g),
    name: coin(g, 80) ? pick(g, ['Acme', 'Bolt', 'Ünïcode ☃']) : wild(g),
    status: coin(g, 80) ? pick(g, ['ACTIVE', 'SUSPENDED']) : wild(g),
    takeRate: coin(g, 80) ? pick(g, [0, 0.02, '0.0200', 1, '1.0000', 0.12345, -0.1, '1e-2', 2]) : wild(g),
    autoRejectEnabled: coin(g, 85) ? g(fc.boolean) : wild(g),
    stores: storeList(g)
  }
  for (const key of Object.keys(row)) if (coin(g, 4)) delete row[key]
  return row
}

function pointsRow (g: G): unknown {
  if (coin(g, 4)) return wild(g)
  const row: Record<string, unknown> = {
    companyId: companyId(g),
    amount: coin(g, 80)
      ? pick(g, [1, 10, -5, '250.00', '-0.01', 0, 0.001, 1e12, -1e12, 999_999_999_999.99, '12.345', 1e21, '007.10'])
      : wild(g),
    reference: coin(g, 85) ? pick(g, ['R1', 'R2', 'R3', 'ADJ']) : wild(g)
  }
  for (const key of Object.keys(row)) if (coin(g, 4)) delete row[key]
  return row
}

const phone = (g: G): unknown => coin(g, 80)
  ? pick(g, [null, '+919800000001', '+1234567', '+12345678901234567890', '+123456', '9800000001', '+91 98000', ''])
  : wild(g)

function retailerRow (g: G, earlier: unknown[]): unknown {
  if (coin(g, 4)) return wild(g)
  // Often the same retailer again, for another seller (or the same one): the rows must agree.
  const base = earlier.length > 0 && coin(g, 30) ? earlier[g(fc.nat, earlier.length - 1)] : undefined
  if (base !== null && typeof base === 'object' && !Array.isArray(base)) {
    const again: Record<string, unknown> = { ...base, companyId: companyId(g) }
    if (coin(g, 20)) again.name = pick(g, ['Other', 'Rao'])
    return again
  }
  const row: Record<string, unknown> = {
    id: coin(g, 85) ? g(fc.integer, { min: 1, max: 15 }) : wild(g),
    companyId: companyId(g),
    name: coin(g, 80) ? pick(g, ['Rao', 'Kirana ☃', 'Other']) : wild(g),
    firstName: coin(g, 80) ? pick(g, [null, 'Asha', '']) : wild(g),
    lastName: coin(g, 80) ? pick(g, [null, 'Rao']) : wild(g),
    phone: phone(g),
    whatsapp: phone(g),
    shops: coin(g, 5)
      ? wild(g)
      : Array.from({ length: g(fc.nat, 3) }, () => coin(g, 5)
        ? wild(g)
        : {
            id: coin(g, 85) ? g(fc.integer, { min: 1, max: 40 }) : wild(g),
            shopName: coin(g, 80) ? pick(g, ['a', 'b', 'Main']) : wild(g)
          })
  }
  for (const key of Object.keys(row)) if (coin(g, 3)) delete row[key]
  return row
}

function rowsProblem (status: number, json: any, rows: number): string | null {
  if (status !== 200) return null
  const d = json?.data
  if (!d) return `200 without data: ${JSON.stringify(json).slice(0, 200)}`
  if (d.received !== rows) return `received ${d.received} of ${rows}`
  if (d.inserted + d.updated + d.unchanged + d.failed !== rows) return `counts do not add up: ${JSON.stringify(d)}`
  if (d.failed !== d.errors.length) return 'failed is not the number of errors'
  let last = -1
  for (const e of d.errors) {
    if (!(e.index > last && e.index < rows)) return `errors out of order: ${JSON.stringify(d.errors)}`
    last = e.index
    if (!CODES.has(e.code)) return `unknown code ${e.code}`
    if (typeof e.error !== 'string' || e.error.length === 0) return 'an error without text'
    if (!(e.id === null || typeof e.id === 'number' || typeof e.id === 'string')) return `id ${e.id}`
  }
  return null
}

t.test('fuzzed platform bodies: never a 5xx, every answer by the per-row rules, the ledger equal to the balance', async (t) => {
  const { app, database } = await build(t)
  const key = await platformKey(database)
  const base = await listen(app)
  let requests = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const sellers = coin(g, 50)
    const rows = Array.from({ length: g(fc.integer, { min: 1, max: 12 }) }, () => sellers ? sellerRow(g) : pointsRow(g))
    let body = JSON.stringify(rows)
    if (coin(g, 4)) body = pick(g, ['{}', '[]', 'null', '[', '"rows"', JSON.stringify({ rows }), body.slice(0, -1)])
    const res = await send(base, {
      method: sellers ? 'PUT' : 'POST',
      path: sellers ? PLATFORM_SELLERS_PATH : PLATFORM_POINTS_PATH,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body
    })
    requests++
    const problem = responseProblem(res) ?? rowRouteStatusProblem(res, body, app.initialConfig.bodyLimit ?? 0) ??
      rowsProblem(res.status, res.json, rows.length) ??
      (res.status === 400 && res.json?.data !== undefined ? 'a 400 with data' : null)
    if (problem) throw new Error(`${problem}\nbody: ${body.slice(0, 500)}`)
  }), { seed: fuzzSeed(2207), numRuns: fuzzRuns(2500), endOnFailure: true })
  const drift = await database.sql`select s.id from sellers s
    where s.points_balance <> coalesce((select sum(amount) from points_ledger l where l.seller_id = s.id), 0)`
  t.same(drift, [], 'every balance equals its ledger')
  const [{ n }] = await database.sql`select count(*)::int as n from points_ledger`
  t.ok(n > 0, `the fuzz reached the writes (${n} ledger entries, ${requests} requests)`)
})

t.test('fuzzed retailer bodies: never a 5xx, every answer by the per-row rules, every shop link beside its retailer\'s',
  async (t) => {
    const { app, database } = await build(t)
    const key = await platformKey(database)
    const base = await listen(app)
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
    const sellers = Array.from({ length: 8 }, (_, i) => ({
      companyId: i + 1, name: `S${i + 1}`, status: 'ACTIVE', takeRate: 0, autoRejectEnabled: false, stores: []
    }))
    const made = await send(base, { method: 'PUT', path: PLATFORM_SELLERS_PATH, headers, body: JSON.stringify(sellers) })
    t.equal(made.json?.data?.inserted, 8, 'companyIds 1 to 8 are sellers, 9 to 12 are not')
    let requests = 0
    await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
      const rows: unknown[] = []
      const length = g(fc.integer, { min: 1, max: 12 })
      while (rows.length < length) rows.push(retailerRow(g, rows))
      let body = JSON.stringify(rows)
      if (coin(g, 4)) body = pick(g, ['{}', '[]', 'null', '[', '"rows"', JSON.stringify({ rows }), body.slice(0, -1)])
      const res = await send(base, { method: 'PUT', path: PLATFORM_RETAILERS_PATH, headers, body })
      requests++
      const problem = responseProblem(res) ?? rowRouteStatusProblem(res, body, app.initialConfig.bodyLimit ?? 0) ??
        rowsProblem(res.status, res.json, rows.length) ??
        (res.status === 400 && res.json?.data !== undefined ? 'a 400 with data' : null)
      if (problem) throw new Error(`${problem}\nbody: ${body.slice(0, 500)}`)
    }), { seed: fuzzSeed(4409), numRuns: fuzzRuns(1500), endOnFailure: true })
    // What the route keeps true whatever it is sent: a seller linked to a shop is linked to its retailer.
    const orphans = await database.sql`select l.seller_id, l.shop_id from seller_shops l join shops s on s.id = l.shop_id
      where not exists (select 1 from seller_retailers r where r.seller_id = l.seller_id and r.retailer_id = s.retailer_id)`
    t.same(orphans, [], 'every shop link has its retailer\'s link')
    const [{ links, sellersLinked }] = await database.sql`select count(*)::int as links,
      count(distinct seller_id)::int as "sellersLinked" from seller_retailers`
    t.ok(links > 0 && sellersLinked > 1, `the fuzz reached the writes (${links} links, ${requests} requests)`)
  })

/*
 * A request is either clean (every value valid, nothing left out: the rows reach the writes and meet each
 * other's ids) or noisy (a wrong value or a missing field anywhere: the row checks). With noise in every
 * field of every offer, almost no item row would ever be valid.
 */
let clean = false
/** One of a few values: in a clean request one of the first `valid`; else any of them, sometimes anything. */
const mostly = <T>(g: G, items: readonly T[], valid = items.length): unknown =>
  clean ? pick(g, items.slice(0, valid)) : coin(g, 85) ? pick(g, items) : wild(g)
const smallId = (g: G, max: number): unknown => clean || coin(g, 90) ? g(fc.integer, { min: 1, max }) : wild(g)
const MONEY = [0, 1, '80.10', 99.5, '105.25', '999999999999.99', '007.50', 1e12, -1, '1.005', '1e3']
const QUANTITY = [1, '0.5', 9, '9.999', 10, '99999999999.999', 0, 1e11, -1, '1.0001']

function listOf (g: G, max: number, make: (g: G) => unknown): unknown {
  if (!clean && coin(g, 4)) return wild(g)
  return Array.from({ length: g(fc.nat, max) }, () => !clean && coin(g, 4) ? wild(g) : make(g))
}

/** Some fields left out, as the marketplace's mistakes would. */
function sparse (g: G, row: Record<string, unknown>): Record<string, unknown> {
  if (clean) return row
  for (const key of Object.keys(row)) if (coin(g, 3)) delete row[key]
  return row
}

function itemRow (g: G): unknown {
  if (!clean && coin(g, 4)) return wild(g)
  // In a clean slab maxQuantity is null or the largest quantity: never below minQuantity.
  const slab = (g: G) => sparse(g, {
    minQuantity: mostly(g, QUANTITY, 6),
    maxQuantity: coin(g, 30) ? null : clean ? '99999999999.999' : mostly(g, QUANTITY),
    price: mostly(g, MONEY, 7)
  })
  const offer = (g: G) => sparse(g, {
    id: smallId(g, 40),
    purchasePrice: mostly(g, MONEY, 7),
    mrpPriceAmount: mostly(g, MONEY, 7),
    finalPriceWithTax: mostly(g, MONEY, 7),
    currency: mostly(g, ['INR', 'USD', 'inr', 'RUPEE'], 2),
    priceRange: listOf(g, 3, slab)
  })
  const unit = (g: G) => sparse(g, {
    id: smallId(g, 30),
    name: mostly(g, ['Piece', 'Case', ''], 2),
    multiplier: mostly(g, QUANTITY, 6),
    // Two base units in one SKU is a refusal of its own: a clean unit is never the base.
    isBaseUnit: mostly(g, [false, true], 1)
  })
  const sku = (g: G) => sparse(g, {
    id: smallId(g, 30),
    skuNickName: mostly(g, ['Sku', 'Ünï ☃']),
    images: listOf(g, 2, (g) => mostly(g, ['https://img/a.jpg', ''], 1)),
    tags: listOf(g, 2, (g) => mostly(g, ['tea', 'x\u0000'], 1)),
    itemSellingUnits: listOf(g, 2, unit),
    offers: listOf(g, 3, offer)
  })
  return sparse(g, {
    id: smallId(g, 20),
    companyId: clean ? g(fc.integer, { min: 1, max: 4 }) : companyId(g),
    itemName: mostly(g, ['Tea', 'Coffee']),
    skus: listOf(g, 2, sku)
  })
}

function dealRow (g: G): unknown {
  if (!clean && coin(g, 4)) return wild(g)
  return sparse(g, {
    id: smallId(g, 15),
    companyId: clean ? g(fc.integer, { min: 1, max: 4 }) : companyId(g),
    offerId: smallId(g, 40),
    dealDate: mostly(g, ['2024-06-30', '2024-02-29', '2023-02-29', '2024-6-1', '0000-01-01'], 2),
    dealPrice: mostly(g, MONEY, 7),
    maxQuantity: mostly(g, QUANTITY, 6)
  })
}

t.test('fuzzed catalogue and deal bodies: never a 5xx, every answer by the per-row rules, records stay their seller\'s', async (t) => {
  const { app, database } = await build(t)
  const key = await platformKey(database)
  const base = await listen(app)
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const sellers = await send(base, {
    method: 'PUT',
    path: PLATFORM_SELLERS_PATH,
    headers,
    body: JSON.stringify([1, 2, 3].map((id) =>
      ({ companyId: id, name: `S${id}`, status: 'ACTIVE', takeRate: 0, autoRejectEnabled: false, stores: [] })))
  })
  t.equal(sellers.status, 200)
  const statuses = new Map<string, number>()
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const catalogue = coin(g, 60)
    clean = coin(g, 50)
    // Now and then orders grab some of every deal, so that rows meet a grabbed quantity.
    if (!catalogue && coin(g, 3)) await database.sql`update daily_deals set grabbed_quantity = least(max_quantity, 2)`
    const rows = Array.from({ length: g(fc.integer, { min: 1, max: 8 }) }, () => catalogue ? itemRow(g) : dealRow(g))
    let body = JSON.stringify(rows)
    if (!clean && coin(g, 3)) body = pick(g, ['{}', '[]', 'null', '[', JSON.stringify({ rows }), body.slice(0, -1)])
    const res = await send(base, { method: 'PUT', path: catalogue ? PLATFORM_CATALOGUE_PATH : PLATFORM_DEALS_PATH, headers, body })
    for (const e of res.json?.data?.errors ?? []) statuses.set(e.code, (statuses.get(e.code) ?? 0) + 1)
    const problem = responseProblem(res) ?? rowRouteStatusProblem(res, body, app.initialConfig.bodyLimit ?? 0) ??
      rowsProblem(res.status, res.json, rows.length) ??
      (res.status === 400 && res.json?.data !== undefined ? 'a 400 with data' : null)
    if (problem) throw new Error(`${problem}\nbody: ${body.slice(0, 500)}`)
  }), { seed: fuzzSeed(3011), numRuns: fuzzRuns(2000), endOnFailure: true })
  const [counts] = await database.sql`select (select count(*)::int from items) as items,
    (select count(*)::int from offers) as offers, (select count(*)::int from daily_deals) as deals`
  t.ok(counts.items > 0 && counts.offers > 0 && counts.deals > 0, `the fuzz reached the writes (${JSON.stringify(counts)})`)
  t.ok(statuses.size >= 10, `many refusals met: ${[...statuses.keys()].sort().join(' ')}`)
  t.same(await database.sql`select o.id from offers o join skus k on k.id = o.sku_id join items i on i.id = k.item_id
    where o.seller_id <> k.seller_id or k.seller_id <> i.seller_id`, [], 'every offer is its SKU\'s and item\'s seller\'s')
  t.same(await database.sql`select d.id from daily_deals d join offers o on o.id = d.offer_id
    where d.seller_id <> o.seller_id or d.grabbed_quantity > d.max_quantity`, [], 'every deal on its seller\'s offer, within its max')
})

t.test('deep bodies on every platform upsert route, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database } = await build(t)
  const headers = { authorization: `Bearer ${await platformKey(database)}` }
  const base = await listen(app)
  const seen = await assertDeepBodies(base, [
    { method: 'PUT', path: PLATFORM_SELLERS_PATH, headers, template: `[{"companyId":1,"name":"A","stores":${DEEP_SLOT}}]` },
    { method: 'POST', path: PLATFORM_POINTS_PATH, headers, template: `[{"companyId":1,"amount":${DEEP_SLOT},"reference":"r"}]` },
    { method: 'PUT', path: PLATFORM_RETAILERS_PATH, headers, template: `[{"id":1,"companyId":1,"shops":${DEEP_SLOT}}]` },
    { method: 'PUT', path: PLATFORM_CATALOGUE_PATH, headers, template: `[{"id":1,"companyId":1,"itemName":"I","skus":[{"id":2,"offers":${DEEP_SLOT}}]}]` },
    { method: 'PUT', path: PLATFORM_DEALS_PATH, headers, template: DEEP_SLOT }
  ], fuzzSeed(6402))
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
})
