import { Random } from '../../src/seed/random.js'

/*
 * The intake bench's data: a marketplace world (sellers with stores, retailers linked to them with shops, a
 * catalogue, today's daily deals) and the orders placed into it, as the marketplace sends them to
 * POST /v2/platform/orders (docs/platform/orders.md). Deterministic. Every id is the marketplace's own, in ranges
 * far above what the demo seed assigns (it counts up from max(id)), so the background orders, the placed
 * ones, the COPY limit's and the second seed's never collide. Alongside the bodies it keeps what the
 * effects must add up to (lines, deal grabs, live orders per store, auto-rejection jobs, payouts), so the
 * bench can check that placement did everything it should, and the rows COPY writes for the limit.
 */

export const ID_BASE = {
  seller: 700_001,
  store: 7_000_001,
  retailer: 8_000_001,
  shop: 9_000_001,
  catalogue: 6_000_001,
  deal: 6_500_001
}

export interface WorldOptions {
  sellers: number
  retailers: number
  offersPerSeller: number
  dealsPerSeller: number
  /** The day every order is placed on (its own +05:30 calendar day) and every deal is of. */
  day: string
}

export interface Offer { id: number, pricePaise: number, gst: number }
export interface Deal { id: number, offer: Offer, pricePaise: number }
export interface Retailer { id: number, name: string, phone: string, shopIds: number[] }
export interface IntakeSeller {
  companyId: number
  autoReject: boolean
  storeIds: number[]
  offers: Offer[]
  deals: Deal[]
  retailers: Retailer[]
}

export interface World {
  day: string
  sellers: IntakeSeller[]
  retailers: Retailer[]
  /** Links seller → retailer (each retailer buys from one or two sellers). */
  links: Array<{ sellerId: number, retailerId: number }>
}

const FIRST = ['Asha', 'Ravi', 'Priya', 'Imran', 'Kavita', 'Suresh', 'Neha', 'Arjun', 'Meena', 'Vikram']
const LAST = ['Rao', 'Kumar', 'Shah', 'Patel', 'Iyer', 'Khan', 'Das', 'Singh', 'Nair', 'Joshi']

export function makeWorld (o: WorldOptions): World {
  const rnd = new Random(42)
  const retailers: Retailer[] = []
  let shopId = ID_BASE.shop
  for (let r = 0; r < o.retailers; r++) {
    const shops = r % 4 === 3 ? 0 : r % 4 === 2 ? 2 : 1
    retailers.push({
      id: ID_BASE.retailer + r,
      name: `${rnd.pick(FIRST)} ${rnd.pick(LAST)}`,
      phone: `+9198${String(r).padStart(8, '0')}`,
      shopIds: Array.from({ length: shops }, () => shopId++)
    })
  }
  const sellers: IntakeSeller[] = []
  let catalogue = ID_BASE.catalogue
  let deal = ID_BASE.deal
  for (let s = 0; s < o.sellers; s++) {
    const companyId = ID_BASE.seller + s
    const offers: Offer[] = Array.from({ length: o.offersPerSeller }, () =>
      ({ id: catalogue++, pricePaise: rnd.int(20, 2000) * 100 + rnd.pick([0, 50]), gst: rnd.pick([0, 5, 12, 18]) }))
    const deals: Deal[] = offers.slice(0, o.dealsPerSeller).map((offer) =>
      ({ id: deal++, offer, pricePaise: Math.round(offer.pricePaise * 0.9) }))
    sellers.push({
      companyId,
      // Half the sellers have auto-rejection on: their orders get a job each.
      autoReject: s % 2 === 0,
      storeIds: [ID_BASE.store + s * 10, ID_BASE.store + s * 10 + 1],
      offers,
      deals,
      retailers: []
    })
  }
  const links: World['links'] = []
  retailers.forEach((retailer, r) => {
    const first = r % o.sellers
    const second = (r * 7 + 3) % o.sellers
    for (const s of first === second || r % 2 === 0 ? [first] : [first, second]) {
      sellers[s].retailers.push(retailer)
      links.push({ sellerId: sellers[s].companyId, retailerId: retailer.id })
    }
  })
  return { day: o.day, sellers, retailers, links }
}

/** PUT /v2/platform/sellers rows for the world's sellers. */
export function sellerRows (world: World): unknown[] {
  return world.sellers.map((s) => ({
    companyId: s.companyId,
    name: `Intake Seller ${s.companyId}`,
    status: 'ACTIVE',
    takeRate: '0.02',
    autoRejectEnabled: s.autoReject,
    stores: s.storeIds.map((id, i) => ({ id, name: `Store ${i + 1}` }))
  }))
}

const paise = (p: number): string => `${p < 0 ? '-' : ''}${Math.floor(Math.abs(p) / 100)}.${String(Math.abs(p) % 100).padStart(2, '0')}`

/** One order's line as the service will store it (item, SKU and price derived from the offer or deal). */
export interface StoredLine { id: number, offerId: number, dealId: number | null, quantity: string, unitPrice: string }
/** One order as placed, in the terms COPY needs. */
export interface GeneratedOrder {
  orderId: number
  orderNumber: string
  serviceOrderNumber: string
  sellerId: number
  storeId: number
  retailerId: number
  retailerName: string
  shopId: number | null
  paymentMode: 'ONLINE_PAID' | 'PREPAID' | 'CASH_ON_DELIVERY'
  amounts: Record<'orderTotal' | 'orderTotalFinal' | 'orderTaxAmount' | 'orderCessAmount' | 'appliedPoints' |
  'totalExtraCharges' | 'roundOff', string>
  placedAt: string
  lines: StoredLine[]
  autoReject: boolean
}

/** What every effect of placing a set of orders must add up to. */
export interface Expected {
  orders: number
  lines: number
  dealLines: number
  /** Thousandths grabbed per deal id. */
  grabbed: Map<number, number>
  /** Live orders per `${sellerId}:${storeId}`. */
  live: Map<string, number>
  autoRejectJobs: number
  prepaid: number
}

export function emptyExpected (): Expected {
  return { orders: 0, lines: 0, dealLines: 0, grabbed: new Map(), live: new Map(), autoRejectJobs: 0, prepaid: 0 }
}

/**
 * Order number `n` (0-based) of the run: 3–5 lines, `dealShare` of the lines (a quarter) on one of the
 * seller's deals, payment modes mixed (40 % COD, 35 % online, 25 % prepaid), most with a shop. `firstId` places
 * the order ids (and line ids: orderId × 10 + k).
 */
export function makeOrder (world: World, rnd: Random, firstId: number, n: number, prefix: string,
  dealShare = 0.25): GeneratedOrder {
  const seller = world.sellers[n % world.sellers.length]
  const retailer = rnd.pick(seller.retailers)
  const orderId = firstId + n
  const lineCount = rnd.int(3, 5)
  const lines: StoredLine[] = []
  let subtotal = 0; let tax = 0
  for (let k = 0; k < lineCount; k++) {
    const onDeal = rnd.chance(dealShare)
    const deal = onDeal ? rnd.pick(seller.deals) : null
    const offer = deal ? deal.offer : rnd.pick(seller.offers)
    const price = deal ? deal.pricePaise : offer.pricePaise
    const whole = rnd.int(1, 24)
    const half = rnd.chance(0.1)
    const quantity = half ? `${whole}.5` : String(whole)
    const amount = Math.round(price * (half ? whole + 0.5 : whole))
    subtotal += amount
    tax += Math.round(amount * offer.gst / (100 + offer.gst))
    lines.push({ id: orderId * 10 + k, offerId: offer.id, dealId: deal?.id ?? null, quantity, unitPrice: paise(price) })
  }
  const r = rnd.next()
  const paymentMode = r < 0.4 ? 'CASH_ON_DELIVERY' : r < 0.75 ? 'ONLINE_PAID' : 'PREPAID'
  const extra = rnd.chance(0.2) ? 5000 : 0
  const rounded = Math.round(subtotal / 100) * 100
  const second = n % 86_400
  const time = `${String(Math.floor(second / 3600)).padStart(2, '0')}:${String(Math.floor(second / 60) % 60).padStart(2, '0')}:${String(second % 60).padStart(2, '0')}`
  return {
    orderId,
    orderNumber: `${prefix}-${orderId}`,
    serviceOrderNumber: `SVC-${prefix}-${orderId}`,
    sellerId: seller.companyId,
    storeId: seller.storeIds[n % 3 === 0 ? 1 : 0],
    retailerId: retailer.id,
    retailerName: retailer.name,
    shopId: retailer.shopIds.length > 0 && rnd.chance(0.85) ? rnd.pick(retailer.shopIds) : null,
    paymentMode,
    amounts: {
      orderTotal: paise(subtotal),
      orderTotalFinal: paise(rounded + extra),
      orderTaxAmount: paise(tax),
      orderCessAmount: '0.00',
      appliedPoints: '0.00',
      totalExtraCharges: paise(extra),
      roundOff: paise(rounded - subtotal)
    },
    placedAt: `${world.day}T${time}.${String(n % 1_000_000).padStart(6, '0')}+05:30`,
    lines,
    autoReject: seller.autoReject
  }
}

/** The request body's row of an order (amounts as strings and numbers, ids as digit strings, as the route allows). */
export function orderRow (o: GeneratedOrder): unknown {
  return {
    orderId: String(o.orderId),
    orderNumber: o.orderNumber,
    serviceOrderNumber: o.serviceOrderNumber,
    companyId: o.sellerId,
    storeId: o.storeId,
    retailerId: o.retailerId,
    shopId: o.shopId,
    deliveryType: 'REGULAR',
    currencyCode: 'INR',
    paymentMode: o.paymentMode,
    ...o.amounts,
    placedAt: o.placedAt,
    orderItems: o.lines.map((l) => l.dealId === null
      ? { id: String(l.id), offerId: l.offerId, quantity: l.quantity }
      : { id: String(l.id), offerId: l.offerId, quantity: l.quantity, dealId: l.dealId })
  }
}

export function expect (e: Expected, o: GeneratedOrder): void {
  e.orders++
  e.lines += o.lines.length
  for (const l of o.lines) {
    if (l.dealId === null) continue
    e.dealLines++
    e.grabbed.set(l.dealId, (e.grabbed.get(l.dealId) ?? 0) + Math.round(Number(l.quantity) * 1000))
  }
  const key = `${o.sellerId}:${o.storeId}`
  e.live.set(key, (e.live.get(key) ?? 0) + 1)
  if (o.autoReject) e.autoRejectJobs++
  if (o.paymentMode === 'PREPAID') e.prepaid++
}

/** COPY text format (the bench's values hold no tab, newline or backslash). */
const field = (v: string | number | null): string => v === null ? '\\N' : String(v)

/** The COPY lines of orders, order_items and order_status_history for a set of orders (the limit). */
export function copyText (list: GeneratedOrder[], credentialId: number):
{ orders: string, lines: string, history: string } {
  const orders: string[] = []; const lines: string[] = []; const history: string[] = []
  for (const o of list) {
    const a = o.amounts
    orders.push([o.orderId, o.sellerId, o.storeId, o.retailerId, o.shopId, o.orderNumber, o.serviceOrderNumber,
      'ORDER_PLACED', 'REGULAR', o.retailerName, 't', 'INR', a.orderTotal, a.orderTotalFinal, a.orderTaxAmount,
      a.orderCessAmount, a.appliedPoints, a.totalExtraCharges, a.roundOff, o.lines.length, o.paymentMode, o.placedAt]
      .map(field).join('\t'))
    for (const l of o.lines) {
      // The world's item, SKU and offer of a product share one id.
      lines.push([l.id, o.orderId, l.offerId, l.offerId, l.offerId, l.dealId, l.quantity, l.unitPrice].map(field).join('\t'))
    }
    history.push([o.orderId, null, 'ORDER_PLACED', credentialId, 'platform'].map(field).join('\t'))
  }
  const text = (rows: string[]) => rows.join('\n') + '\n'
  return { orders: text(orders), lines: text(lines), history: text(history) }
}

export const COPY_COLUMNS = {
  orders: 'orders (id, seller_id, store_id, retailer_id, shop_id, order_number, service_order_number, status, delivery_type, ' +
    'retailer_name, is_actionable, currency_code, order_total, order_total_final, order_tax_amount, order_cess_amount, ' +
    'applied_points, total_extra_charges, round_off, total_items_in_order, payment_mode, created_at)',
  lines: 'order_items (id, order_id, item_id, sku_id, offer_id, deal_id, quantity, unit_price)',
  history: 'order_status_history (order_id, from_status, to_status, credential_id, source)'
}
