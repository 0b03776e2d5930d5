// A small marketplace for the platform order tests, and the invariants every placement and change must keep.
import type postgres from 'postgres'
import { PLATFORM_POINTS_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'
import { canTransition, PLATFORM_TARGET_STATUSES, TARGET_STATUSES } from '../../src/status-update/state-machine.js'
import type { OrderStatus } from '../../src/db/schema.js'

/*
 * A small marketplace for the platform order tests (fuzz and faults): four sellers through
 * PUT /v2/platform/sellers and their points through POST /v2/platform/sellers/points; retailers, their
 * links and shops, the catalogue and the daily deals straight into the tables. And the invariants every
 * placement and status change must keep, checked in one round trip.
 */

export const DAY = '2026-11-25'
export const PLACED_AT = `${DAY}T09:30:00+05:30`

export type Caller = (method: 'PUT' | 'POST', path: string, body: unknown) => Promise<{ status: number, json: any }>

/** Sellers 1 to 4 (3 suspended; 1 and 4 with auto-rejection); companyIds 5 and up are not sellers. */
export const SELLERS = [1, 2, 3, 4] as const
export const storesOf = (s: number): number[] => [s * 10 + 1, s * 10 + 2]
/** Retailers each seller is linked to; 506 is linked to nobody. */
export const LINKS: Record<number, number[]> = {
  1: [501, 502, 503], 2: [501, 504], 3: [505], 4: [501, 502, 503, 504, 505]
}
export const RETAILERS = [501, 502, 503, 504, 505, 506]
/** Shop → retailer. */
export const SHOPS: Record<number, number> = { 601: 501, 602: 501, 603: 502, 604: 503, 605: 504, 606: 505, 607: 506 }
/** Offers of seller s: s*100 + 0..3 (prices 100, 50, 12.5, 0). */
export const offersOf = (s: number): number[] => [0, 1, 2, 3].map((k) => s * 100 + k)
/**
 * Deals of seller s on DAY: s*100 on offer s*100 (max 5), s*100+1 on offer s*100+1 (max 20), s*100+2 on
 * offer s*100+2 (max 1,000,000); s*100+3 on offer s*100 the day before (max 5).
 */
export const dealsOf = (s: number): Array<{ id: number, offerId: number, day: string, max: number }> => [
  { id: s * 100, offerId: s * 100, day: DAY, max: 5 },
  { id: s * 100 + 1, offerId: s * 100 + 1, day: DAY, max: 20 },
  { id: s * 100 + 2, offerId: s * 100 + 2, day: DAY, max: 1_000_000 },
  { id: s * 100 + 3, offerId: s * 100, day: '2026-11-24', max: 5 }
]

export async function setupMarket (call: Caller, sql: postgres.Sql): Promise<void> {
  const sellers = SELLERS.map((s) => ({
    companyId: s,
    name: `Seller ${s}`,
    status: s === 3 ? 'SUSPENDED' : 'ACTIVE',
    takeRate: s === 2 ? '0.05' : '0.1',
    autoRejectEnabled: s === 1 || s === 4,
    stores: storesOf(s).map((id) => ({ id, name: `Store ${id}` }))
  }))
  const made = await call('PUT', PLATFORM_SELLERS_PATH, sellers)
  if (made.status !== 200 || made.json.data.inserted !== SELLERS.length) throw new Error(`sellers: ${JSON.stringify(made.json)}`)
  const points = await call('POST', PLATFORM_POINTS_PATH,
    SELLERS.map((s) => ({ companyId: s, amount: '100000000.00', reference: `OPEN-${s}` })))
  if (points.status !== 200 || points.json.data.inserted !== SELLERS.length) throw new Error(`points: ${JSON.stringify(points.json)}`)
  await sql`insert into retailers ${sql(RETAILERS.map((id) => ({ id, name: `Retailer ${id}`, phone: null, whatsapp: null })))}`
  await sql`insert into shops ${sql(Object.entries(SHOPS).map(([id, r]) => ({ id: Number(id), retailer_id: r, shop_name: `Shop ${id}` })))}`
  await sql`insert into seller_retailers ${sql(Object.entries(LINKS).flatMap(([s, rs]) =>
    rs.map((r) => ({ seller_id: Number(s), retailer_id: r, sync_id: `R-${s}-${r}` }))))}`
  for (const s of SELLERS) {
    await sql`insert into items (id, seller_id, item_name, item_sync_id) values (${s * 100}, ${s}, ${`Tea ${s}`}, ${`ITEM-${s}`})`
    await sql`insert into skus (id, seller_id, item_id, sku_nick_name) values (${s * 100}, ${s}, ${s * 100}, 'Tea 1kg')`
    await sql`insert into offers ${sql(offersOf(s).map((id, k) => ({
      id,
seller_id: s,
sku_id: s * 100,
offer_sync_id: `VAR-${id}`,
purchase_price: 1,
mrp_price_amount: 200,
      final_price_with_tax: ['100', '50', '12.5', '0'][k]
    })))}`
    await sql`insert into daily_deals ${sql(dealsOf(s).map((d) => ({
      id: d.id, seller_id: s, offer_id: d.offerId, deal_date: d.day, deal_price: 9, max_quantity: d.max
    })))}`
  }
}

/** Every (from, to) of the state machine, placement (null → ORDER_PLACED) included. */
export function allowedSteps (): Array<[string | null, string]> {
  const statuses: OrderStatus[] = ['ORDER_PLACED', 'ORDER_ACCEPTED', 'DELIVERED', 'CANCELLED', 'ORDER_REJECTED_BY_SELLER',
    'ORDER_COMPLETED_BY_SELLER']
  const steps: Array<[string | null, string]> = [[null, 'ORDER_PLACED']]
  for (const from of statuses) {
    for (const to of [...TARGET_STATUSES, ...PLATFORM_TARGET_STATUSES]) {
      if (canTransition(from, to)) steps.push([from, to])
    }
  }
  return steps
}

/**
 * The invariants of placement and of the state machine, whatever was sent: a list of what is wrong
 * (empty when all hold). One statement.
 */
export async function invariantProblems (sql: postgres.Sql): Promise<string[]> {
  const steps = allowedSteps().map(([from, to]) => `${from ?? '-'}>${to}`)
  const [row] = await sql`select
    (select coalesce(json_agg(d.id), '[]') from daily_deals d
      left join (select oi.deal_id, sum(oi.quantity) as q from order_items oi join orders o on o.id = oi.order_id
        where o.status not in ('CANCELLED', 'ORDER_REJECTED_BY_SELLER') and oi.deal_id is not null group by oi.deal_id) g
      on g.deal_id = d.id
      where d.grabbed_quantity <> coalesce(g.q, 0) or d.grabbed_quantity > d.max_quantity) as deals,
    (select coalesce(json_agg(json_build_object('seller', coalesce(c.seller_id, o.seller_id),
        'store', coalesce(c.store_id, o.store_id))), '[]')
      from order_counts c full join (select seller_id, store_id, count(*) as n from orders where not is_deleted group by 1, 2) o
        on o.seller_id = c.seller_id and o.store_id = c.store_id
      where coalesce(c.live_orders, 0) <> coalesce(o.n, 0)) as counts,
    (select coalesce(json_agg(o.id), '[]') from orders o
      where (select count(*) from order_status_history h where h.order_id = o.id and h.to_status = 'ORDER_PLACED'
        and h.from_status is null and h.source = 'platform') <> 1
        or (select count(*) from order_status_history h where h.order_id = o.id and h.to_status = 'ORDER_PLACED') <> 1
        or (select count(*) from order_items l where l.order_id = o.id) <> o.total_items_in_order) as placed,
    (select coalesce(json_agg(s.id), '[]') from sellers s
      where s.points_balance <> coalesce((select sum(amount) from points_ledger l where l.seller_id = s.id), 0)
        or s.points_balance < 0) as balances,
    (select coalesce(json_agg(x.order_id), '[]') from (select order_id from points_ledger where order_id is not null
      group by order_id, kind having count(*) > 1) x) as ledger,
    (select coalesce(json_agg(distinct h.order_id), '[]') from (
      select order_id, coalesce(from_status::text, '-') || '>' || to_status::text as step, from_status,
        lag(to_status) over (partition by order_id order by id) as before from order_status_history) h
      where h.step <> all(${steps}::text[]) or h.from_status is distinct from h.before) as machine,
    (select coalesce(json_agg(o.id), '[]') from orders o where o.status is distinct from
      (select h.to_status from order_status_history h where h.order_id = o.id order by h.id desc limit 1)) as last`
  const problems: string[] = []
  for (const [name, ids] of Object.entries(row)) {
    if ((ids as unknown[]).length > 0) problems.push(`${name}: ${JSON.stringify(ids).slice(0, 300)}`)
  }
  return problems
}
