import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { PaymentMode } from '../db/schema.js'
import { decimalValue } from './fields.js'
import type { OrderRow } from './order-row.js'
import type { OrdersState, StoredDeal, StoredOffer, StoredOrder } from './plan-orders.js'

/*
 * What an orders batch is decided on (plan-orders.ts), read in one round trip: the batch's sellers,
 * stores, retailer links, shops, offers, the orders already stored under its orderIds (to tell a re-send
 * from a conflict), and which of its order numbers and line ids are taken. The daily deals are read
 * under their row locks (FOR NO KEY UPDATE, in id order, as the status update locks them): a grab is
 * decided on quantities no other batch can move until this one commits.
 */

const ints = (values: number[]): SQL => sql`${`{${[...new Set(values)].join(',')}}`}::bigint[]`
const texts = (values: string[]): SQL => sql`${sql.param([...new Set(values)])}::text[]`

type StoredOrderRow = {
  id: string
  order_number: string
  service_order_number: string
  seller_id: number
  store_id: number
  retailer_id: number
  shop_id: number | null
  delivery_type: string
  currency_code: string
  payment_mode: PaymentMode
  order_total: string
  order_total_final: string
  order_tax_amount: string
  order_cess_amount: string
  applied_points: string
  total_extra_charges: string
  round_off: string
  placed_micros: string
  lines: Array<{ id: number, offerId: number, quantity: string, dealId: number | null }>
}

const money = (text: string): string => decimalValue(text, 2)!

function storedOrder (o: StoredOrderRow): StoredOrder {
  return {
    orderId: Number(o.id),
    orderNumber: o.order_number,
    serviceOrderNumber: o.service_order_number,
    companyId: o.seller_id,
    storeId: o.store_id,
    retailerId: o.retailer_id,
    shopId: o.shop_id,
    deliveryType: o.delivery_type,
    currencyCode: o.currency_code,
    paymentMode: o.payment_mode,
    orderTotal: money(o.order_total),
    orderTotalFinal: money(o.order_total_final),
    orderTaxAmount: money(o.order_tax_amount),
    orderCessAmount: money(o.order_cess_amount),
    appliedPoints: money(o.applied_points),
    totalExtraCharges: money(o.total_extra_charges),
    roundOff: money(o.round_off),
    placedAtMicros: BigInt(o.placed_micros),
    orderItems: o.lines.map((l) => ({
      id: Number(l.id), offerId: l.offerId, quantity: decimalValue(String(l.quantity), 3)!, dealId: l.dealId
    }))
  }
}

export async function readOrdersState (tx: Tx, rows: OrderRow[]): Promise<OrdersState> {
  const lines = rows.flatMap((r) => r.orderItems)
  const dealIds = lines.flatMap((l) => l.dealId === null ? [] : [l.dealId])
  const pairs = JSON.stringify(rows.map((r) => ({ s: r.companyId, r: r.retailerId })))
  const [deals, sellers, stores, links, retailers, shops, offers, orders, numbers, taken] = await Promise.all([
    tx.execute<StoredDeal & { id: number }>(sql`
      select id, seller_id as "sellerId", offer_id as "offerId", deal_date::text as "dealDate", deal_price::text as "dealPrice",
        max_quantity::text as "maxQuantity", grabbed_quantity::text as "grabbedQuantity"
      from daily_deals where id = any(${ints(dealIds)}) order by id for no key update`),
    tx.execute<{ id: number }>(sql`select id from sellers where id = any(${ints(rows.map((r) => r.companyId))})`),
    tx.execute<{ id: number, seller_id: number }>(sql`
      select id, seller_id from stores where id = any(${ints(rows.map((r) => r.storeId))})`),
    tx.execute<{ seller_id: number, retailer_id: number }>(sql`
      select l.seller_id, l.retailer_id from seller_retailers l
      join (select distinct * from json_to_recordset(${pairs}::json) as p(s int, r int)) p
        on l.seller_id = p.s and l.retailer_id = p.r`),
    tx.execute<{ id: number, name: string }>(sql`
      select id, name from retailers where id = any(${ints(rows.map((r) => r.retailerId))})`),
    tx.execute<{ id: number, retailer_id: number }>(sql`
      select id, retailer_id from shops where id = any(${ints(rows.flatMap((r) => r.shopId === null ? [] : [r.shopId]))})`),
    tx.execute<StoredOffer & { id: number }>(sql`
      select o.id, o.seller_id as "sellerId", o.sku_id as "skuId", k.item_id as "itemId",
        o.final_price_with_tax::text as "finalPriceWithTax"
      from offers o join skus k on k.id = o.sku_id where o.id = any(${ints(lines.map((l) => l.offerId))})`),
    tx.execute<StoredOrderRow>(sql`
      select o.id, o.order_number, o.service_order_number, o.seller_id, o.store_id, o.retailer_id, o.shop_id,
        o.delivery_type, o.currency_code, o.payment_mode, o.order_total::text, o.order_total_final::text,
        o.order_tax_amount::text, o.order_cess_amount::text, o.applied_points::text, o.total_extra_charges::text,
        o.round_off::text, (extract(epoch from o.created_at) * 1000000)::bigint::text as placed_micros,
        (select coalesce(json_agg(json_build_object('id', l.id, 'offerId', l.offer_id, 'quantity', l.quantity::text,
          'dealId', l.deal_id) order by l.id), '[]') from order_items l where l.order_id = o.id) as lines
      from orders o where o.id = any(${ints(rows.map((r) => r.orderId))})`),
    tx.execute<{ id: string, order_number: string }>(sql`
      select id, order_number from orders where order_number = any(${texts(rows.map((r) => r.orderNumber))})`),
    tx.execute<{ id: string, order_id: string }>(sql`
      select id, order_id from order_items where id = any(${ints(lines.map((l) => l.id))})`)
  ])
  return {
    sellers: new Set(sellers.map((s) => s.id)),
    stores: new Map(stores.map((s) => [s.id, s.seller_id])),
    links: new Set(links.map((l) => `${l.seller_id}:${l.retailer_id}`)),
    retailerNames: new Map(retailers.map((r) => [r.id, r.name])),
    shops: new Map(shops.map((s) => [s.id, s.retailer_id])),
    offers: new Map(offers.map(({ id, ...o }) => [id, o])),
    deals: new Map(deals.map(({ id, ...d }) => [id, d])),
    orders: new Map(orders.map((o) => [Number(o.id), storedOrder(o)])),
    numbers: new Map(numbers.map((n) => [n.order_number, Number(n.id)])),
    lines: new Map(taken.map((l) => [Number(l.id), Number(l.order_id)]))
  }
}
