import type postgres from 'postgres'
import type { Database } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import { Random } from './random.js'
import { columnTypes, insertRows, type BulkValue } from '../db/bulk.js'
import { FIRST_NAMES, LAST_NAMES, LOCALITIES, PRODUCTS, SHOP_WORDS } from './catalogue.js'
import { scheduleLoadedAutoRejections } from '../effects/auto-rejection.js'

/*
 * Deterministic demo data: the same seed, order count and anchor give the same rows on an empty
 * database. Three sellers cover the cases the endpoints care about (plenty of points, too few points,
 * suspended). Volumes go through set-based bulk inserts with ids assigned here, so a million orders load in well under
 * the three minutes the issue allows; everything runs in one transaction, so a failed seed leaves nothing.
 */

export interface SeedOptions {
  orders: number
  seed: number
  /** Orders are created in the 90 days up to this instant. Fixed by default so runs are repeatable. */
  anchor: Date
  /** AUTO_REJECT_AFTER_MS: placed orders of auto-reject sellers get their job this long after loading (0 = none). Default 24 h. */
  autoRejectAfterMs?: number
  log?: (line: string) => void
}

export interface SellerSummary {
  companyId: number
  name: string
  status: 'active' | 'suspended'
  pointsBalance: string
  takeRate: string
  storeIds: number[]
  orderCount: number
}

export interface SeedSummary { sellers: SellerSummary[], orders: number, orderItems: number }

export const DEFAULT_ANCHOR = new Date('2026-11-01T00:00:00Z')

interface SellerPlan { name: string, status: 'active' | 'suspended', pointsPaise: number, takeRate: string, share: number, stores: string[], autoReject: boolean }

const SELLER_PLANS: SellerPlan[] = [
  { name: 'Sharma Distributors Pvt Ltd', status: 'active', pointsPaise: 500_000_000_00, takeRate: '0.0200', share: 0.6, stores: ['Mumbai Central Warehouse', 'Pune Depot', 'Nashik Depot'], autoReject: true },
  // Too few points: any of its orders costs more than 2.00 points at a 3 % take rate.
  { name: 'Gupta Traders', status: 'active', pointsPaise: 200, takeRate: '0.0300', share: 0.25, stores: ['Delhi Okhla Godown', 'Gurugram Hub'], autoReject: false },
  { name: 'Mehta Wholesale (suspended)', status: 'suspended', pointsPaise: 5_000_00, takeRate: '0.0200', share: 0.15, stores: ['Ahmedabad Store', 'Surat Store'], autoReject: false }
]

const STATUS_WEIGHTS: Record<OrderStatus, number> = {
  ORDER_PLACED: 25, ORDER_ACCEPTED: 25, ORDER_REJECTED_BY_SELLER: 10, ORDER_COMPLETED_BY_SELLER: 20, CANCELLED: 10, DELIVERED: 10
}
const PAYMENT_WEIGHTS = { ONLINE_PAID: 35, PREPAID: 25, CASH_ON_DELIVERY: 40 } as const
const DAY_MS = 86_400_000
const ITEMS_PER_SELLER = PRODUCTS.length

/** Paise (integer) to a decimal string: money never passes through a float. */
export function paise (p: number): string {
  const sign = p < 0 ? '-' : ''
  const a = Math.abs(p)
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`
}

async function nextIds (tx: postgres.TransactionSql, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const t of tables) {
    const [row] = await tx.unsafe(`select coalesce(max(id), 0)::bigint + 1 as next from ${t}`)
    out[t] = Number(row.next)
  }
  return out
}

export async function seed (database: Database, options: SeedOptions): Promise<SeedSummary> {
  const log = options.log ?? (() => {})
  const rnd = new Random(options.seed)
  const anchorMs = options.anchor.getTime()
  const dealDate = options.anchor.toISOString().slice(0, 10)

  return database.sql.begin(async (tx) => {
    // One seed at a time: ids are assigned here from max(id).
    await tx`select pg_advisory_xact_lock(7240112032)`
    const typeCache = new Map<string, Map<string, string>>()
    const insert = async (table: string, columns: string[], rows: BulkValue[][]): Promise<number> => {
      if (!typeCache.has(table)) typeCache.set(table, await columnTypes(tx, table))
      return insertRows(tx, table, columns, rows, { types: typeCache.get(table) })
    }
    const ids = await nextIds(tx, ['sellers', 'stores', 'retailers', 'shops', 'items', 'skus', 'offers', 'selling_units', 'daily_deals', 'orders', 'order_items', 'order_status_history', 'points_ledger', 'refunds', 'payout_schedules'])
    const summaries: SellerSummary[] = []
    let orderItemsTotal = 0
    const sellerRows: BulkValue[][] = []; const storeRows: BulkValue[][] = []; const ledgerRows: BulkValue[][] = []
    const retailerRows: BulkValue[][] = []; const shopRows: BulkValue[][] = []
    const itemRows: BulkValue[][] = []; const skuRows: BulkValue[][] = []; const offerRows: BulkValue[][] = []
    const unitRows: BulkValue[][] = []; const dealRows: BulkValue[][] = []

    interface OfferInfo { id: number, skuId: number, itemId: number, pricePaise: number, gst: number, cess: number, dealId: number | null }
    interface Buyer { retailerId: number, name: string, shopId: number | null }
    const sellerData: Array<{ sellerId: number, plan: SellerPlan, storeIds: number[], offers: OfferInfo[], buyers: Buyer[], orderCount: number }> = []

    let allotted = 0
    SELLER_PLANS.forEach((plan, s) => {
      const sellerId = ids.sellers + s
      const orderCount = s === SELLER_PLANS.length - 1 ? options.orders - allotted : Math.floor(options.orders * plan.share)
      allotted += orderCount
      sellerRows.push([sellerId, plan.name, plan.status, paise(plan.pointsPaise), plan.takeRate, plan.autoReject])
      ledgerRows.push([ids.points_ledger + s, sellerId, null, 'TOP_UP', paise(plan.pointsPaise), paise(plan.pointsPaise)])
      const storeIds = plan.stores.map((name) => { const id = ids.stores++; storeRows.push([id, sellerId, name]); return id })

      const offers: OfferInfo[] = []
      PRODUCTS.forEach((p, i) => {
        const itemId = ids.items++; const skuId = ids.skus++; const offerId = ids.offers++
        const code = `${sellerId}-${String(i + 1).padStart(3, '0')}`
        itemRows.push([itemId, sellerId, p.name, `PRD-${code}`])
        skuRows.push([skuId, sellerId, itemId, p.name.split(' ').slice(0, 3).join(' '), [`https://cdn.example.in/sku/${code}/front.jpg`, `https://cdn.example.in/sku/${code}/back.jpg`], p.tags])
        const withTax = Math.round(p.pricePaise * (100 + p.gst + p.cess) / 100)
        const slabs = [
          { minQuantity: 1, maxQuantity: 9, price: withTax / 100 },
          { minQuantity: 10, maxQuantity: 49, price: Math.round(withTax * 0.97) / 100 },
          { minQuantity: 50, maxQuantity: null, price: Math.round(withTax * 0.94) / 100 }
        ]
        offerRows.push([offerId, sellerId, skuId, `VAR-${code}`, paise(Math.round(p.pricePaise * 0.85)), paise(Math.round(withTax * 1.12)), paise(withTax), 'INR', slabs])
        unitRows.push([ids.selling_units++, skuId, 'Piece', '1', true])
        unitRows.push([ids.selling_units++, skuId, 'Case', String(rnd.pick([6, 12, 24])), false])
        let dealId: number | null = null
        if (i % 6 === 0) {
          dealId = ids.daily_deals++
          dealRows.push([dealId, sellerId, offerId, dealDate, paise(Math.round(withTax * 0.9)), '100000', '0'])
        }
        offers.push({ id: offerId, skuId, itemId, pricePaise: p.pricePaise, gst: p.gst, cess: p.cess, dealId })
      })

      const retailerCount = Math.min(5000, Math.max(6, Math.ceil(orderCount / 8)))
      const buyers: Buyer[] = []
      for (let r = 0; r < retailerCount; r++) {
        const retailerId = ids.retailers++
        const first = rnd.pick(FIRST_NAMES); const last = rnd.pick(LAST_NAMES)
        const phone = `+91${rnd.int(70000, 99999)}${String(rnd.int(0, 99999)).padStart(5, '0')}`
        const shopName = `${last} ${rnd.pick(SHOP_WORDS)}, ${rnd.pick(LOCALITIES)}`
        const syncId = r % 10 < 7 ? `RET-${sellerId}-${String(r + 1).padStart(5, '0')}` : null
        retailerRows.push([retailerId, sellerId, `${first} ${last}`, first, last, phone, rnd.chance(0.6) ? phone : null, syncId])
        let shopId: number | null = null
        if (r % 5 !== 4) {
          shopId = ids.shops++
          shopRows.push([shopId, sellerId, retailerId, `SHOP-${sellerId}-${String(r + 1).padStart(5, '0')}`, shopName])
        }
        buyers.push({ retailerId, name: `${first} ${last}`, shopId })
      }
      sellerData.push({ sellerId, plan, storeIds, offers, buyers, orderCount })
      summaries.push({ companyId: sellerId, name: plan.name, status: plan.status, pointsBalance: paise(plan.pointsPaise), takeRate: plan.takeRate, storeIds, orderCount })
    })

    await insert('sellers', ['id', 'name', 'status', 'points_balance', 'take_rate', 'auto_reject_enabled'], sellerRows)
    await insert('stores', ['id', 'seller_id', 'name'], storeRows)
    await insert('points_ledger', ['id', 'seller_id', 'order_id', 'kind', 'amount', 'balance_after'], ledgerRows)
    await insert('retailers', ['id', 'seller_id', 'name', 'first_name', 'last_name', 'phone', 'whatsapp', 'sync_id'], retailerRows)
    await insert('shops', ['id', 'seller_id', 'retailer_id', 'sync_id', 'shop_name'], shopRows)
    await insert('items', ['id', 'seller_id', 'item_name', 'item_sync_id'], itemRows)
    await insert('skus', ['id', 'seller_id', 'item_id', 'sku_nick_name', 'images', 'tags'], skuRows)
    await insert('offers', ['id', 'seller_id', 'sku_id', 'offer_sync_id', 'purchase_price', 'mrp_price_amount', 'final_price_with_tax', 'currency', 'price_range'], offerRows)
    await insert('daily_deals', ['id', 'seller_id', 'offer_id', 'deal_date', 'deal_price', 'max_quantity', 'grabbed_quantity'], dealRows)
    await insert('selling_units', ['id', 'sku_id', 'name', 'multiplier', 'is_base_unit'], unitRows)
    log(`catalogue: ${sellerRows.length} sellers, ${retailerRows.length} retailers, ${offerRows.length} offers`)

    // Orders and everything hanging off them are generated in one pass and written in chunks by five bulk inserts.
    // The per-order arrays below are small; the big ones are flushed every 20,000 orders.
    const orderRows: BulkValue[][] = []; const lineRows: BulkValue[][] = []; const historyRows: BulkValue[][] = []
    const refundRows: BulkValue[][] = []; const payoutRows: BulkValue[][] = []
    const grabbed = new Map<number, number>()
    const firstOrderId = ids.orders
    const flush = async (): Promise<void> => {
      await insert('orders', ['id', 'seller_id', 'store_id', 'retailer_id', 'shop_id', 'order_number', 'service_order_number', 'status', 'delivery_type', 'retailer_name', 'is_actionable', 'currency_code', 'order_total', 'order_total_final', 'order_tax_amount', 'order_cess_amount', 'applied_points', 'total_extra_charges', 'round_off', 'total_items_in_order', 'payment_mode', 'is_deleted', 'deleted_at', 'created_at', 'updated_at'], orderRows)
      await insert('order_items', ['id', 'order_id', 'item_id', 'sku_id', 'offer_id', 'deal_id', 'quantity', 'unit_price'], lineRows)
      await insert('order_status_history', ['id', 'order_id', 'from_status', 'to_status', 'reason', 'source', 'changed_at'], historyRows)
      await insert('refunds', ['id', 'order_id', 'seller_id', 'amount', 'status', 'gateway'], refundRows)
      await insert('payout_schedules', ['id', 'order_id', 'seller_id', 'amount', 'status', 'scheduled_for'], payoutRows)
      orderItemsTotal += lineRows.length
      orderRows.length = 0; lineRows.length = 0; historyRows.length = 0; refundRows.length = 0; payoutRows.length = 0
    }

    for (const sd of sellerData) {
      for (let n = 0; n < sd.orderCount; n++) {
        const orderId = ids.orders++
        const buyer = rnd.pick(sd.buyers)
        const shopId = buyer.shopId !== null && rnd.chance(0.85) ? buyer.shopId : null
        const status = rnd.weighted(STATUS_WEIGHTS)
        const payment = rnd.weighted(PAYMENT_WEIGHTS)
        const createdMs = anchorMs - rnd.int(0, 90 * DAY_MS / 1000) * 1000
        const lines = rnd.int(1, 5)
        let subtotal = 0; let tax = 0; let cess = 0
        for (let l = 0; l < lines; l++) {
          const offer = rnd.pick(sd.offers)
          const qty = rnd.int(5, 60)
          const amount = offer.pricePaise * qty
          subtotal += amount
          tax += Math.round(amount * offer.gst / 100)
          cess += Math.round(amount * offer.cess / 100)
          const dealId = offer.dealId !== null && rnd.chance(0.5) ? offer.dealId : null
          if (dealId !== null && status !== 'ORDER_REJECTED_BY_SELLER' && status !== 'CANCELLED') grabbed.set(dealId, (grabbed.get(dealId) ?? 0) + qty)
          lineRows.push([ids.order_items++, orderId, offer.itemId, offer.skuId, offer.id, dealId, String(qty), paise(offer.pricePaise)])
        }
        const extra = rnd.chance(0.2) ? rnd.pick([2000, 5000, 10000]) : 0
        const appliedPoints = payment === 'ONLINE_PAID' && rnd.chance(0.2) ? rnd.int(10, 50) * 100 : 0
        const total = subtotal + tax + cess
        const rounded = Math.round(total / 100) * 100
        const final = rounded + extra - appliedPoints
        const deleted = rnd.chance(0.01)
        const moved = status !== 'ORDER_PLACED'
        const updatedMs = moved ? createdMs + rnd.int(600, 3 * 86400) * 1000 : createdMs
        orderRows.push([orderId, sd.sellerId, rnd.pick(sd.storeIds), buyer.retailerId, shopId, `ORD-${100000000 + orderId}`,
          `OX${orderId.toString(36).toUpperCase().padStart(6, '0')}`, status, 'REGULAR', buyer.name, status === 'ORDER_PLACED' || status === 'ORDER_ACCEPTED',
          'INR', paise(total), paise(final), paise(tax), paise(cess), paise(appliedPoints), paise(extra), paise(rounded - total), lines, payment,
          deleted, deleted ? new Date(updatedMs) : null, new Date(createdMs), new Date(updatedMs)])
        if (moved) {
          const reason = status === 'ORDER_REJECTED_BY_SELLER' ? rnd.pick(['Out of stock', 'Delivery area not serviceable', 'Price mismatch']) : null
          const from = status === 'ORDER_COMPLETED_BY_SELLER' || status === 'DELIVERED' ? 'ORDER_ACCEPTED' : 'ORDER_PLACED'
          historyRows.push([ids.order_status_history++, orderId, from, status, reason, 'seed', new Date(updatedMs)])
        }
        if (status === 'ORDER_REJECTED_BY_SELLER' && payment === 'ONLINE_PAID') {
          refundRows.push([ids.refunds++, orderId, sd.sellerId, paise(final), 'SUCCEEDED', 'manual'])
        }
        if (payment === 'PREPAID') {
          const payoutStatus = status === 'ORDER_COMPLETED_BY_SELLER' ? 'SCHEDULED' : status === 'ORDER_REJECTED_BY_SELLER' || status === 'CANCELLED' ? 'CANCELLED' : 'ON_HOLD'
          payoutRows.push([ids.payout_schedules++, orderId, sd.sellerId, paise(final), payoutStatus,
            payoutStatus === 'SCHEDULED' ? new Date(updatedMs + 7 * DAY_MS).toISOString().slice(0, 10) : null])
        }
        if (orderRows.length >= 20_000) await flush()
      }
    }
    await flush()
    const dealIds = dealRows.map((row) => String(row[0]))
    await tx`update daily_deals d set grabbed_quantity = g.qty::numeric
      from unnest(${dealIds}::text[], ${dealIds.map((id) => String(grabbed.get(Number(id)) ?? 0))}::text[]) as g(id, qty)
      where d.id = g.id::int`

    const autoRejections = await scheduleLoadedAutoRejections(tx, firstOrderId, options.autoRejectAfterMs ?? 24 * 60 * 60 * 1000)
    log(`auto-rejection jobs scheduled: ${autoRejections}`)

    // Ids were assigned here: move every sequence past them.
    for (const t of Object.keys(ids)) {
      await tx.unsafe(`select setval(pg_get_serial_sequence('${t}', 'id'), greatest((select coalesce(max(id), 0) from ${t}), 1))`)
    }
    log(`orders: ${options.orders}, order items: ${orderItemsTotal}`)
    return { sellers: summaries, orders: options.orders, orderItems: orderItemsTotal }
  })
}

/** True when the database holds no seller yet (start-up seeds demo data only then). */
export async function isEmpty (database: Database): Promise<boolean> {
  const [row] = await database.sql`select not exists (select 1 from sellers) as empty`
  return row.empty as boolean
}
