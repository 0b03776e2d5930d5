import t from 'tap'
import fc from 'fast-check'
import { build } from '../helpers/build.js'
import { credential, platformKey } from '../helpers/fixtures.js'
import {
  assertDeepBodies, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns, fuzzSeed,
  hostileString, listen, responseProblem, rowRouteStatusProblem, send
} from '../helpers/fuzz.js'
import {
  PLATFORM_ORDER_STATUS_PATH, PLATFORM_ORDERS_PATH, PLATFORM_POINTS_PATH, PLATFORM_SELLERS_PATH, STATUS_UPDATE_PATH
} from '../../src/routes/rest-contract.js'
import { OrderRowErrors } from '../../src/platform/order-texts.js'
import { PlatformRowErrors } from '../../src/platform/texts.js'
import { OrderErrors } from '../../src/status-update/texts.js'

/*
 * Placement and the platform's transitions fuzzed over real HTTP from a fixed seed, interleaved with the
 * seller's acceptances: order rows with fields of every wrong type, hostile text, impossible dates and
 * amounts, references to other sellers' records, deals past their maximum, ids and numbers repeated within
 * and across requests, re-sends with one field changed. Never a 5xx; every 200 by the per-row rules; and
 * after the run what placement and the transitions keep true: each deal's grabbed quantity is what its live
 * lines hold and within its maximum, the live-order counts are the orders, every order has one placement
 * in its history, the balance equals the ledger with at most one entry of a kind per order.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent
const codesOf = (table: object) => Object.values(table)
  .map((e) => typeof e === 'function' ? (e as (...a: unknown[]) => { code: string })(0, 0, '', '').code : (e as { code: string }).code)
const CODES = new Set<string>([...codesOf(OrderRowErrors), ...codesOf(PlatformRowErrors)])
const STATUS_CODES = new Set<string>(codesOf(OrderErrors))

const wild = (g: G): unknown =>
  g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.integer(), fc.double(), fc.constant(null)))
/** A clean request has every value valid and nothing left out, so its rows reach the writes and meet each other. */
let clean = false
const maybe = <T>(g: G, value: T, percent = 90): unknown => clean || coin(g, percent) ? value : wild(g)
/** One of a few values: in a clean request one of the first `valid`; else any of them. */
const some = <T>(g: G, items: readonly T[], valid = 1): T => clean ? pick(g, items.slice(0, valid)) : pick(g, items)

const DAY = '2026-11-25'

function line (g: G, orderId: number, i: number): unknown {
  if (!clean && coin(g, 3)) return wild(g)
  const row: Record<string, unknown> = {
    id: maybe(g, clean || coin(g, 85) ? String(orderId * 10 + i) : String(g(fc.integer, { min: 1, max: 400 }))),
    offerId: maybe(g, some(g, [100, 101, 200, 999], 2)),
    quantity: maybe(g, some(g, [1, 2, '0.5', 3.25, 0, -1, '1e3', 0.0001, 1e12], 4))
  }
  if (coin(g, 40)) row.dealId = maybe(g, some(g, [100, null, 101, 200], 2))
  return row
}

function orderRow (g: G, sent: Array<Record<string, unknown>>): unknown {
  if (!clean && coin(g, 3)) return wild(g)
  // A re-send of an earlier row, as it was or with one field changed.
  if (sent.length > 0 && coin(g, 20)) {
    const again = { ...sent[g(fc.nat, sent.length - 1)]! }
    if (coin(g, 40)) again[pick(g, ['orderTotal', 'storeId', 'placedAt', 'orderNumber'])] = pick(g, [5, 12, '2026-11-25T00:00:00Z', 'X'])
    return again
  }
  const orderId = g(fc.integer, { min: 1, max: 60 })
  const companyId = clean || coin(g, 80) ? 1 : pick(g, [2, 3, 99])
  const row: Record<string, unknown> = {
    orderId: maybe(g, coin(g, 80) ? String(orderId) : orderId),
    orderNumber: maybe(g, `ORD-${coin(g, 85) ? orderId : g(fc.integer, { min: 1, max: 60 })}`),
    serviceOrderNumber: maybe(g, `S-${orderId}`),
    companyId: maybe(g, companyId),
    storeId: maybe(g, some(g, [11, 21, 5])),
    retailerId: maybe(g, some(g, [501, 502, 9])),
    shopId: maybe(g, some(g, [601, null, 602, 7], 2)),
    deliveryType: maybe(g, 'REGULAR'),
    currencyCode: maybe(g, some(g, ['INR', 'inr', 'RUPEE'])),
    paymentMode: maybe(g, some(g, ['ONLINE_PAID', 'PREPAID', 'CASH_ON_DELIVERY', 'CARD'], 3)),
    orderTotal: maybe(g, some(g, [100, '100.00', -1, 1e12, '0.001'], 2)),
    orderTotalFinal: maybe(g, some(g, [100, '99.5', 1e13], 2)),
    orderTaxAmount: maybe(g, 0),
    orderCessAmount: maybe(g, 0),
    appliedPoints: maybe(g, 0),
    totalExtraCharges: maybe(g, 0),
    roundOff: maybe(g, some(g, [0, '-0.25', '0.001'], 2)),
    placedAt: maybe(g, some(g, [`${DAY}T10:00:00+05:30`, `${DAY}T23:59:59.999999Z`, '2026-11-24T10:00:00Z',
      '2026-02-30T10:00:00Z', `${DAY} 10:00`, `${DAY}T10:00:00+19:00`], 3)),
    orderItems: !clean && coin(g, 5)
      ? wild(g)
      : Array.from({ length: g(fc.integer, { min: clean ? 1 : 0, max: 4 }) }, (_, i) => line(g, orderId, i))
  }
  if (!clean) for (const key of Object.keys(row)) if (coin(g, 3)) delete row[key]
  return row
}

function rowsProblem (json: any, rows: number): string | null {
  const d = json?.data
  if (!d) return `200 without data: ${JSON.stringify(json).slice(0, 200)}`
  if (d.received !== rows || d.inserted + d.updated + d.unchanged + d.failed !== rows) return `counts: ${JSON.stringify(d)}`
  if (d.failed !== d.errors.length) return 'failed is not the number of errors'
  let last = -1
  for (const e of d.errors) {
    if (!(e.index > last && e.index < rows)) return 'errors out of order'
    last = e.index
    if (!CODES.has(e.code)) return `unknown code ${e.code}`
  }
  return null
}

t.test('fuzzed placements and transitions: never a 5xx, the per-row rules, and what placement keeps true', async (t) => {
  const { app, database } = await build(t)
  const key = await platformKey(database)
  const base = await listen(app)
  const platform = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const sql = database.sql
  const made = await send(base, {
    method: 'PUT',
    path: PLATFORM_SELLERS_PATH,
    headers: platform,
    body: JSON.stringify([1, 2].map((companyId) => ({
      companyId,
      name: `S${companyId}`,
      status: 'ACTIVE',
      takeRate: '0.05',
      autoRejectEnabled: companyId === 1,
      stores: [{ id: companyId * 10 + 1, name: 'Main' }]
    })))
  })
  t.equal(made.status, 200)
  await send(base, { method: 'POST', path: PLATFORM_POINTS_PATH, headers: platform, body: JSON.stringify([{ companyId: 1, amount: 50, reference: 'OPEN' }]) })
  await sql`insert into retailers (id, name) values (501, 'R1'), (502, 'R2')`
  await sql`insert into shops (id, retailer_id, shop_name) values (601, 501, 'S1'), (602, 502, 'S2')`
  await sql`insert into seller_retailers (seller_id, retailer_id) values (1, 501), (2, 502)`
  for (const s of [1, 2]) {
    await sql`insert into items (id, seller_id, item_name) values (${s * 100}, ${s}, 'I')`
    await sql`insert into skus (id, seller_id, item_id, sku_nick_name) values (${s * 100}, ${s}, ${s * 100}, 'K')`
    await sql`insert into offers (id, seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
      values (${s * 100}, ${s}, ${s * 100}, 1, 2, 2), (${s * 100 + 1}, ${s}, ${s * 100}, 1, 2, 2)`
    await sql`insert into daily_deals (id, seller_id, offer_id, deal_date, deal_price, max_quantity)
      values (${s * 100}, ${s}, ${s * 100}, ${DAY}, 1, 6), (${s * 100 + 1}, ${s}, ${s * 100}, '2026-11-24', 1, 6)`
  }
  const apiKey = await credential(database, 1, 'api-key')
  const sent: Array<Record<string, unknown>> = []
  let placements = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const what = g(fc.nat, 9)
    clean = coin(g, 50)
    if (what < 6) {
      const rows = Array.from({ length: g(fc.integer, { min: 1, max: 6 }) }, () => orderRow(g, sent))
      let body = JSON.stringify(rows)
      if (coin(g, 3)) body = pick(g, ['{}', '[]', 'null', '[', body.slice(0, -1)])
      const res = await send(base, { method: 'POST', path: PLATFORM_ORDERS_PATH, headers: platform, body })
      const problem = responseProblem(res) ?? rowRouteStatusProblem(res, body, app.initialConfig.bodyLimit ?? 0) ??
        (res.status === 200 ? rowsProblem(res.json, rows.length) : res.status === 400 && res.json?.data !== undefined ? 'a 400 with data' : null)
      if (problem) throw new Error(`${problem}\nbody: ${body.slice(0, 600)}`)
      if (res.status === 200) {
        placements += res.json.data.inserted
        for (const r of rows) if (typeof r === 'object' && r !== null && !Array.isArray(r)) sent.push(r as Record<string, unknown>)
      }
      return
    }
    const items = Array.from({ length: g(fc.integer, { min: 1, max: 5 }) }, () => ({
      Order_id: maybe(g, String(g(fc.integer, { min: 1, max: 62 }))),
      Order_Status: what < 8 ? maybe(g, pick(g, ['CANCELLED', 'DELIVERED']), 95) : pick(g, ['ORDER_ACCEPTED', 'ORDER_REJECTED_BY_SELLER']),
      reason: maybe(g, 'r')
    }))
    const seller = what >= 8
    const res = await send(base, {
      method: 'POST',
      path: seller ? STATUS_UPDATE_PATH : PLATFORM_ORDER_STATUS_PATH,
      headers: seller ? { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' } : platform,
      body: JSON.stringify({ order_status: items })
    })
    const problem = responseProblem(res) ?? (res.status === 200 || res.status === 400 ? null : `status ${res.status}`) ??
      (res.json?.data?.errors ?? []).map((e: { code: string }) => STATUS_CODES.has(e.code) ? null : `code ${e.code}`).find(Boolean) ?? null
    if (problem) throw new Error(`${problem}\nitems: ${JSON.stringify(items).slice(0, 400)}`)
  }), { seed: fuzzSeed(2211), numRuns: fuzzRuns(1500), endOnFailure: true })

  t.ok(placements > 10, `the fuzz placed orders (${placements})`)
  t.same(await sql`select d.id, d.grabbed_quantity::text, coalesce((select sum(l.quantity) from order_items l join orders o on o.id = l.order_id
      where l.deal_id = d.id and o.status not in ('CANCELLED', 'ORDER_REJECTED_BY_SELLER')), 0)::numeric(14,3)::text as held
    from daily_deals d where d.grabbed_quantity <> coalesce((select sum(l.quantity) from order_items l join orders o on o.id = l.order_id
      where l.deal_id = d.id and o.status not in ('CANCELLED', 'ORDER_REJECTED_BY_SELLER')), 0) or d.grabbed_quantity > d.max_quantity`, [],
  'every deal holds what its live lines grabbed, within its maximum')
  t.same(await sql`select c.seller_id, c.store_id from order_counts c
    where c.live_orders <> (select count(*) from orders o where o.seller_id = c.seller_id and o.store_id = c.store_id and not o.is_deleted)`, [],
  'the live-order counts are the orders')
  t.same(await sql`select o.id from orders o where (select count(*) from order_status_history h
    where h.order_id = o.id and h.from_status is null and h.to_status = 'ORDER_PLACED' and h.source = 'platform') <> 1`, [],
  'every order placed once')
  t.same(await sql`select s.id from sellers s
    where s.points_balance <> coalesce((select sum(amount) from points_ledger l where l.seller_id = s.id), 0)`, [], 'balance = ledger')
  t.same(await sql`select order_id, kind from points_ledger where order_id is not null group by 1, 2 having count(*) > 1`, [],
    'at most one ledger entry of a kind per order')
})

t.test('deep order and transition bodies, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database } = await build(t)
  const headers = { authorization: `Bearer ${await platformKey(database)}` }
  const base = await listen(app)
  const seen = await assertDeepBodies(base, [
    { method: 'POST', path: PLATFORM_ORDERS_PATH, headers, template: `[{"orderId":"1","companyId":1,"orderItems":[{"id":"2","offerId":${DEEP_SLOT}}]}]` },
    { method: 'POST', path: PLATFORM_ORDERS_PATH, headers, template: DEEP_SLOT },
    { method: 'POST', path: PLATFORM_ORDER_STATUS_PATH, headers, template: `{"order_status":[{"Order_id":1,"Order_Status":"CANCELLED","reason":${DEEP_SLOT}}]}` },
    { method: 'POST', path: PLATFORM_ORDER_STATUS_PATH, headers, template: `{"order_status":${DEEP_SLOT}}` }
  ], fuzzSeed(6405))
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
})
