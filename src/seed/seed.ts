import { getTableName, sql } from 'drizzle-orm'
import type { Database, Tx } from '../db/client.js'
import { insertRows } from '../db/bulk.js'
import {
  dailyDeals, items, offers, orderItems, orders, orderStatusHistory, payoutSchedules, pointsLedger, refunds, retailers,
  sellerRetailers, sellers, sellerShops, sellingUnits, shops, skus, stores,
  type OrderStatus, type PaymentMode, type SellerStatus
} from '../db/schema.js'
import { scheduleAutoRejections } from '../effects/enqueue.js'
import { FIRST_NAMES, LAST_NAMES, LOCALITIES, PRODUCTS, SHOP_WORDS } from './catalogue.js'
import { Random } from './random.js'

/*
 * Deterministic demo data: the same seed, order count and anchor give the same rows on an empty
 * database. Three sellers cover the cases the endpoints care about (plenty of points, too few points,
 * suspended). Rows are the tables' own insert types, written by the set-based bulk insert with ids
 * assigned here, so a million orders load in about two minutes; everything runs in one transaction, so a
 * failed seed leaves nothing.
 */

export interface SeedOptions {
  orders: number
  seed: number
  /** Orders are created in the 90 days up to this instant. Fixed by default so runs are repeatable. */
  anchor: Date
  /**
   * AUTO_REJECT_AFTER_MS: placed orders of auto-reject sellers get their job this long after loading (0 = none).
   * Default 24 h.
   */
  autoRejectAfterMs?: number
  log?: (line: string) => void
}

export interface SellerSummary {
  companyId: number
  name: string
  status: SellerStatus
  pointsBalance: string
  takeRate: string
  storeIds: number[]
  orderCount: number
}

export interface SeedSummary { sellers: SellerSummary[], orders: number, orderItems: number }

export const DEFAULT_ANCHOR = new Date('2026-11-01T00:00:00Z')

interface SellerPlan {
  name: string
  status: SellerStatus
  pointsPaise: number
  takeRate: string
  share: number
  stores: string[]
  autoReject: boolean
}

const SELLER_PLANS: SellerPlan[] = [
  { name: 'Sharma Distributors Pvt Ltd', status: 'active', pointsPaise: 500_000_000_00, takeRate: '0.0200', share: 0.6, stores: ['Mumbai Central Warehouse', 'Pune Depot', 'Nashik Depot'], autoReject: true },
  // Too few points: any of its orders costs more than 2.00 points at a 3 % take rate.
  { name: 'Gupta Traders', status: 'active', pointsPaise: 200, takeRate: '0.0300', share: 0.25, stores: ['Delhi Okhla Godown', 'Gurugram Hub'], autoReject: false },
  { name: 'Mehta Wholesale (suspended)', status: 'suspended', pointsPaise: 5_000_00, takeRate: '0.0200', share: 0.15, stores: ['Ahmedabad Store', 'Surat Store'], autoReject: false }
]

const STATUS_WEIGHTS: Record<OrderStatus, number> = {
  ORDER_PLACED: 25,
  ORDER_ACCEPTED: 25,
  ORDER_REJECTED_BY_SELLER: 10,
  ORDER_COMPLETED_BY_SELLER: 20,
  CANCELLED: 10,
  DELIVERED: 10
}
const PAYMENT_WEIGHTS: Record<PaymentMode, number> = { ONLINE_PAID: 35, PREPAID: 25, CASH_ON_DELIVERY: 40 }
const DAY_MS = 86_400_000
/** Orders (and what hangs off them) are written in chunks of this many, to keep memory flat. */
const ORDER_CHUNK = 20_000

/** Paise (integer) to a decimal string: money never passes through a float. */
export function paise (p: number): string {
  const sign = p < 0 ? '-' : ''
  const a = Math.abs(p)
  return `${sign}${Math.floor(a / 100)}.${String(a % 100).padStart(2, '0')}`
}

const TABLES = {
  sellers,
  stores,
  retailers,
  shops,
  items,
  skus,
  offers,
  sellingUnits,
  dailyDeals,
  orders,
  orderItems,
  orderStatusHistory,
  pointsLedger,
  refunds,
  payoutSchedules
}
type Ids = Record<keyof typeof TABLES, number>

/** The next free id of every table: ids are assigned here, so the rows of one seed can point at each other. */
async function nextIds (tx: Tx): Promise<Ids> {
  const ids = {} as Ids
  for (const [key, table] of Object.entries(TABLES) as Array<[keyof Ids, (typeof TABLES)[keyof Ids]]>) {
    const [row] = await tx.execute<{ next: string }>(sql`select coalesce(max(id), 0)::bigint + 1 as next from ${table}`)
    ids[key] = Number(row.next)
  }
  return ids
}

interface OfferInfo {
  id: number
  skuId: number
  itemId: number
  pricePaise: number
  gst: number
  cess: number
  dealId: number | null
}
interface Buyer { retailerId: number, name: string, shopId: number | null }
interface SellerData {
  sellerId: number
  plan: SellerPlan
  storeIds: number[]
  offers: OfferInfo[]
  buyers: Buyer[]
  orderCount: number
}

/** The catalogue and buyers of every seller, and the rows that store them. */
function planSellers (rnd: Random, ids: Ids, orderTotal: number, dealDate: string) {
  const rows = {
    sellers: [] as Array<typeof sellers.$inferInsert>,
    stores: [] as Array<typeof stores.$inferInsert>,
    ledger: [] as Array<typeof pointsLedger.$inferInsert>,
    retailers: [] as Array<typeof retailers.$inferInsert>,
    shops: [] as Array<typeof shops.$inferInsert>,
    retailerLinks: [] as Array<typeof sellerRetailers.$inferInsert>,
    shopLinks: [] as Array<typeof sellerShops.$inferInsert>,
    items: [] as Array<typeof items.$inferInsert>,
    skus: [] as Array<typeof skus.$inferInsert>,
    offers: [] as Array<typeof offers.$inferInsert>,
    units: [] as Array<typeof sellingUnits.$inferInsert>,
    deals: [] as Array<typeof dailyDeals.$inferInsert>
  }
  const sellerData: SellerData[] = []
  let allotted = 0
  SELLER_PLANS.forEach((plan, s) => {
    const sellerId = ids.sellers + s
    const orderCount = s === SELLER_PLANS.length - 1 ? orderTotal - allotted : Math.floor(orderTotal * plan.share)
    allotted += orderCount
    rows.sellers.push({
      id: sellerId,
      name: plan.name,
      status: plan.status,
      pointsBalance: paise(plan.pointsPaise),
      takeRate: plan.takeRate,
      autoRejectEnabled: plan.autoReject
    })
    // The opening balance is a ledger entry too, so the ledger sums to the balance at all times.
    rows.ledger.push({ id: ids.pointsLedger + s, sellerId, orderId: null, kind: 'TOP_UP', amount: paise(plan.pointsPaise), balanceAfter: paise(plan.pointsPaise) })
    const storeIds = plan.stores.map((name) => {
      const id = ids.stores++
      rows.stores.push({ id, sellerId, name })
      return id
    })

    const offerInfos: OfferInfo[] = []
    PRODUCTS.forEach((p, i) => {
      const itemId = ids.items++; const skuId = ids.skus++; const offerId = ids.offers++
      const code = `${sellerId}-${String(i + 1).padStart(3, '0')}`
      rows.items.push({ id: itemId, sellerId, itemName: p.name, itemSyncId: `PRD-${code}` })
      rows.skus.push({ id: skuId, sellerId, itemId, skuNickName: p.name.split(' ').slice(0, 3).join(' '), images: [`https://cdn.example.in/sku/${code}/front.jpg`, `https://cdn.example.in/sku/${code}/back.jpg`], tags: p.tags })
      const withTax = Math.round(p.pricePaise * (100 + p.gst + p.cess) / 100)
      const priceRange = [
        { minQuantity: 1, maxQuantity: 9, price: withTax / 100 },
        { minQuantity: 10, maxQuantity: 49, price: Math.round(withTax * 0.97) / 100 },
        { minQuantity: 50, maxQuantity: null, price: Math.round(withTax * 0.94) / 100 }
      ]
      rows.offers.push({ id: offerId, sellerId, skuId, offerSyncId: `VAR-${code}`, purchasePrice: paise(Math.round(p.pricePaise * 0.85)), mrpPriceAmount: paise(Math.round(withTax * 1.12)), finalPriceWithTax: paise(withTax), currency: 'INR', priceRange })
      rows.units.push({ id: ids.sellingUnits++, skuId, name: 'Piece', multiplier: '1', isBaseUnit: true })
      rows.units.push({ id: ids.sellingUnits++, skuId, name: 'Case', multiplier: String(rnd.pick([6, 12, 24])), isBaseUnit: false })
      let dealId: number | null = null
      if (i % 6 === 0) {
        dealId = ids.dailyDeals++
        rows.deals.push({ id: dealId, sellerId, offerId, dealDate, dealPrice: paise(Math.round(withTax * 0.9)), maxQuantity: '100000', grabbedQuantity: '0' })
      }
      offerInfos.push({ id: offerId, skuId, itemId, pricePaise: p.pricePaise, gst: p.gst, cess: p.cess, dealId })
    })

    const retailerCount = Math.min(5000, Math.max(6, Math.ceil(orderCount / 8)))
    const buyers: Buyer[] = []
    for (let r = 0; r < retailerCount; r++) {
      const retailerId = ids.retailers++
      const first = rnd.pick(FIRST_NAMES); const last = rnd.pick(LAST_NAMES)
      const phone = `+91${rnd.int(70000, 99999)}${String(rnd.int(0, 99999)).padStart(5, '0')}`
      const shopName = `${last} ${rnd.pick(SHOP_WORDS)}, ${rnd.pick(LOCALITIES)}`
      const syncId = r % 10 < 7 ? `RET-${sellerId}-${String(r + 1).padStart(5, '0')}` : null
      rows.retailers.push({ id: retailerId, name: `${first} ${last}`, firstName: first, lastName: last, phone, whatsapp: rnd.chance(0.6) ? phone : null })
      rows.retailerLinks.push({ sellerId, retailerId, syncId })
      let shopId: number | null = null
      if (r % 5 !== 4) {
        shopId = ids.shops++
        rows.shops.push({ id: shopId, retailerId, shopName })
        rows.shopLinks.push({ sellerId, shopId, syncId: `SHOP-${sellerId}-${String(r + 1).padStart(5, '0')}` })
      }
      buyers.push({ retailerId, name: `${first} ${last}`, shopId })
    }
    sellerData.push({ sellerId, plan, storeIds, offers: offerInfos, buyers, orderCount })
  })
  return { rows, sellerData }
}

/** One order's rows: the order, its lines, its history, refund and payout. */
interface OrderRows {
  orders: Array<typeof orders.$inferInsert>
  lines: Array<typeof orderItems.$inferInsert>
  history: Array<typeof orderStatusHistory.$inferInsert>
  refunds: Array<typeof refunds.$inferInsert>
  payouts: Array<typeof payoutSchedules.$inferInsert>
}

/** Generates one order of a seller into `out`; counts the daily-deal quantity it grabbed. */
function generateOrder (rnd: Random, ids: Ids, sd: SellerData, anchorMs: number, grabbed: Map<number, number>,
  out: OrderRows): void {
  const orderId = ids.orders++
  const buyer = rnd.pick(sd.buyers)
  const shopId = buyer.shopId !== null && rnd.chance(0.85) ? buyer.shopId : null
  const status = rnd.weighted(STATUS_WEIGHTS)
  const payment = rnd.weighted(PAYMENT_WEIGHTS)
  const createdMs = anchorMs - rnd.int(0, 90 * DAY_MS / 1000) * 1000
  const lineCount = rnd.int(1, 5)
  let subtotal = 0; let tax = 0; let cess = 0
  for (let l = 0; l < lineCount; l++) {
    const offer = rnd.pick(sd.offers)
    const qty = rnd.int(5, 60)
    const amount = offer.pricePaise * qty
    subtotal += amount
    tax += Math.round(amount * offer.gst / 100)
    cess += Math.round(amount * offer.cess / 100)
    const dealId = offer.dealId !== null && rnd.chance(0.5) ? offer.dealId : null
    if (dealId !== null && status !== 'ORDER_REJECTED_BY_SELLER' && status !== 'CANCELLED') grabbed.set(dealId, (grabbed.get(dealId) ?? 0) + qty)
    out.lines.push({
      id: ids.orderItems++,
      orderId,
      itemId: offer.itemId,
      skuId: offer.skuId,
      offerId: offer.id,
      dealId,
      quantity: String(qty),
      unitPrice: paise(offer.pricePaise)
    })
  }
  const extra = rnd.chance(0.2) ? rnd.pick([2000, 5000, 10000]) : 0
  const appliedPoints = payment === 'ONLINE_PAID' && rnd.chance(0.2) ? rnd.int(10, 50) * 100 : 0
  const total = subtotal + tax + cess
  const rounded = Math.round(total / 100) * 100
  const final = rounded + extra - appliedPoints
  const deleted = rnd.chance(0.01)
  const moved = status !== 'ORDER_PLACED'
  const updatedMs = moved ? createdMs + rnd.int(600, 3 * 86400) * 1000 : createdMs
  out.orders.push({
    id: orderId,
    sellerId: sd.sellerId,
    storeId: rnd.pick(sd.storeIds),
    retailerId: buyer.retailerId,
    shopId,
    orderNumber: `ORD-${100000000 + orderId}`,
    serviceOrderNumber: `OX${orderId.toString(36).toUpperCase().padStart(6, '0')}`,
    status,
    deliveryType: 'REGULAR',
    retailerName: buyer.name,
    isActionable: status === 'ORDER_PLACED' || status === 'ORDER_ACCEPTED',
    currencyCode: 'INR',
    orderTotal: paise(total),
    orderTotalFinal: paise(final),
    orderTaxAmount: paise(tax),
    orderCessAmount: paise(cess),
    appliedPoints: paise(appliedPoints),
    totalExtraCharges: paise(extra),
    roundOff: paise(rounded - total),
    totalItemsInOrder: lineCount,
    paymentMode: payment,
    isDeleted: deleted,
    deletedAt: deleted ? new Date(updatedMs) : null,
    createdAt: new Date(createdMs),
    updatedAt: new Date(updatedMs)
  })
  if (moved) {
    const reason = status === 'ORDER_REJECTED_BY_SELLER' ? rnd.pick(['Out of stock', 'Delivery area not serviceable', 'Price mismatch']) : null
    const from = status === 'ORDER_COMPLETED_BY_SELLER' || status === 'DELIVERED' ? 'ORDER_ACCEPTED' : 'ORDER_PLACED'
    out.history.push({ id: ids.orderStatusHistory++, orderId, fromStatus: from, toStatus: status, reason, source: 'seed', changedAt: new Date(updatedMs) })
  }
  if (status === 'ORDER_REJECTED_BY_SELLER' && payment === 'ONLINE_PAID') {
    out.refunds.push({ id: ids.refunds++, orderId, sellerId: sd.sellerId, amount: paise(final), status: 'SUCCEEDED', gateway: 'manual' })
  }
  if (payment === 'PREPAID') {
    const payoutStatus = status === 'ORDER_COMPLETED_BY_SELLER' ? 'SCHEDULED' : status === 'ORDER_REJECTED_BY_SELLER' || status === 'CANCELLED' ? 'CANCELLED' : 'ON_HOLD'
    out.payouts.push({ id: ids.payoutSchedules++, orderId, sellerId: sd.sellerId, amount: paise(final), status: payoutStatus, scheduledFor: payoutStatus === 'SCHEDULED' ? new Date(updatedMs + 7 * DAY_MS).toISOString().slice(0, 10) : null })
  }
}

export async function seed (database: Database, options: SeedOptions): Promise<SeedSummary> {
  const log = options.log ?? (() => {})
  const rnd = new Random(options.seed)
  const anchorMs = options.anchor.getTime()
  const dealDate = options.anchor.toISOString().slice(0, 10)

  return database.db.transaction(async (tx) => {
    // One seed at a time: ids are assigned here from max(id).
    await tx.execute(sql`select pg_advisory_xact_lock(7240112032)`)
    const ids = await nextIds(tx)
    const { rows, sellerData } = planSellers(rnd, ids, options.orders, dealDate)
    await insertRows(tx, sellers, rows.sellers)
    await insertRows(tx, stores, rows.stores)
    await insertRows(tx, pointsLedger, rows.ledger)
    await insertRows(tx, retailers, rows.retailers)
    await insertRows(tx, shops, rows.shops)
    await insertRows(tx, sellerRetailers, rows.retailerLinks)
    await insertRows(tx, sellerShops, rows.shopLinks)
    await insertRows(tx, items, rows.items)
    await insertRows(tx, skus, rows.skus)
    await insertRows(tx, offers, rows.offers)
    await insertRows(tx, dailyDeals, rows.deals)
    await insertRows(tx, sellingUnits, rows.units)
    log(`catalogue: ${rows.sellers.length} sellers, ${rows.retailers.length} retailers, ${rows.offers.length} offers`)

    const firstOrderId = ids.orders
    const grabbed = new Map<number, number>()
    let orderItemsTotal = 0
    const out: OrderRows = { orders: [], lines: [], history: [], refunds: [], payouts: [] }
    const flush = async (): Promise<void> => {
      await insertRows(tx, orders, out.orders)
      await insertRows(tx, orderItems, out.lines)
      await insertRows(tx, orderStatusHistory, out.history)
      await insertRows(tx, refunds, out.refunds)
      await insertRows(tx, payoutSchedules, out.payouts)
      orderItemsTotal += out.lines.length
      for (const list of Object.values(out)) list.length = 0
    }
    for (const sd of sellerData) {
      for (let n = 0; n < sd.orderCount; n++) {
        generateOrder(rnd, ids, sd, anchorMs, grabbed, out)
        if (out.orders.length >= ORDER_CHUNK) await flush()
      }
    }
    await flush()

    const dealIds = rows.deals.map((deal) => String(deal.id))
    await tx.execute(sql`update daily_deals d set grabbed_quantity = g.qty::numeric
      from unnest(${sql.param(dealIds)}::text[], ${sql.param(dealIds.map((id) => String(grabbed.get(Number(id)) ?? 0)))}::text[]) as g(id, qty)
      where d.id = g.id::int`)
    const autoRejections = await scheduleAutoRejections(tx, { fromId: firstOrderId }, options.autoRejectAfterMs ?? 24 * 60 * 60 * 1000, 'from-now')
    log(`auto-rejection jobs scheduled: ${autoRejections}`)

    // Ids were assigned here: move every sequence past them.
    for (const table of Object.values(TABLES)) {
      await tx.execute(sql`select setval(pg_get_serial_sequence(${getTableName(table)}, 'id'), greatest((select coalesce(max(id), 0) from ${table}), 1))`)
    }
    log(`orders: ${options.orders}, order items: ${orderItemsTotal}`)
    const summaries: SellerSummary[] = sellerData.map((sd) => ({
      companyId: sd.sellerId,
      name: sd.plan.name,
      status: sd.plan.status,
      pointsBalance: paise(sd.plan.pointsPaise),
      takeRate: sd.plan.takeRate,
      storeIds: sd.storeIds,
      orderCount: sd.orderCount
    }))
    return { sellers: summaries, orders: options.orders, orderItems: orderItemsTotal }
  })
}

/** True when the database holds no seller yet (start-up seeds demo data only then). */
export async function isEmpty (tx: Tx): Promise<boolean> {
  const [row] = await tx.execute<{ empty: boolean }>(sql`select not exists (select 1 from sellers) as empty`)
  return row.empty
}
