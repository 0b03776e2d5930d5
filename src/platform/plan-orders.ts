import type { ItemError } from '../item-error.js'
import type { Placement } from '../status-update/apply-placements.js'
import { INSERTED, refused, UNCHANGED, type CheckedRow, type RowOutcome } from './batch.js'
import { decimalValue } from './fields.js'
import type { OrderRow } from './order-row.js'
import { OrderRowErrors as O } from './order-texts.js'
import { PlatformRowErrors as E } from './texts.js'

/*
 * The decision of an orders batch, in memory, from the rows and what is stored for them (the deals read
 * under their locks): each row is placed, unchanged (the same order again) or refused, and the placements
 * that make it so. Rows are decided in request order, so a later row sees an earlier one's grab of a deal.
 * Pure.
 */

export type StoredOffer = { sellerId: number, skuId: number, itemId: number, finalPriceWithTax: string }
export type StoredDeal = {
  sellerId: number
  offerId: number
  dealDate: string
  dealPrice: string
  maxQuantity: string
  grabbedQuantity: string
}
/** An order already stored, in the row's terms (canonical decimals), to compare a re-send with. */
export type StoredOrder = Omit<OrderRow, 'placedAt' | 'placedOn'>

export interface OrdersState {
  /** Sellers by companyId. */
  sellers: Set<number>
  /** A store's seller, by store id. */
  stores: Map<number, number>
  /** `${sellerId}:${retailerId}` of the links that exist. */
  links: Set<string>
  retailerNames: Map<number, string>
  /** A shop's retailer, by shop id. */
  shops: Map<number, number>
  offers: Map<number, StoredOffer>
  deals: Map<number, StoredDeal>
  orders: Map<number, StoredOrder>
  /** The stored order of each of the batch's order numbers that is taken. */
  numbers: Map<string, number>
  /** The stored order of each of the batch's line ids that is taken. */
  lines: Map<number, number>
}

export interface OrdersPlan {
  outcomes: Map<number, RowOutcome>
  placements: Placement[]
}

/** Thousandths, exactly: deal quantities are numeric(14,3). */
const milli = (text: string): bigint => {
  const [whole, fraction = ''] = decimalValue(text, 3)!.replace('-', '').split('.')
  const value = BigInt(whole) * 1000n + BigInt(fraction.padEnd(3, '0'))
  return text.trim().startsWith('-') ? -value : value
}
const fromMilli = (m: bigint): string => decimalValue(`${m / 1000n}.${String(m % 1000n).padStart(3, '0')}`, 3)!

/** The fields of a re-sent order that differ from the stored one (none: the same order). */
export function differences (row: OrderRow, stored: StoredOrder): string[] {
  const fields: string[] = []
  for (const key of Object.keys(stored) as Array<keyof StoredOrder>) {
    if (key === 'orderItems') continue
    if (row[key] !== stored[key]) fields.push(key)
  }
  const lines = (r: { orderItems: OrderRow['orderItems'] }) =>
    JSON.stringify([...r.orderItems].sort((a, b) => a.id - b.id))
  if (lines(row) !== lines(stored)) fields.push('orderItems')
  return fields
}

function refusal (row: OrderRow, state: OrdersState, grabbed: Map<number, bigint>): ItemError | Placement {
  if (!state.sellers.has(row.companyId)) return E.sellerNotFound(row.companyId)
  if (state.stores.get(row.storeId) !== row.companyId) return O.storeNotFound(row.storeId)
  if (!state.links.has(`${row.companyId}:${row.retailerId}`)) return O.retailerNotLinked(row.retailerId)
  if (row.shopId !== null && state.shops.get(row.shopId) !== row.retailerId) {
    return O.shopNotFound(row.shopId, row.retailerId)
  }
  const taken = state.numbers.get(row.orderNumber)
  if (taken !== undefined && taken !== row.orderId) return O.orderNumberTaken(row.orderNumber)
  const lines: Placement['lines'] = []
  const grabs = new Map<number, bigint>()
  for (const [i, line] of row.orderItems.entries()) {
    const owner = state.lines.get(line.id)
    if (owner !== undefined && owner !== row.orderId) return O.lineIdTaken(i, line.id)
    const offer = state.offers.get(line.offerId)
    if (!offer || offer.sellerId !== row.companyId) return O.offerNotFound(i, line.offerId)
    let unitPrice = offer.finalPriceWithTax
    if (line.dealId !== null) {
      const deal = state.deals.get(line.dealId)
      const ours = deal !== undefined && deal.sellerId === row.companyId && deal.offerId === line.offerId
      if (!ours) return O.dealNotFound(i, line.dealId, line.offerId)
      if (deal.dealDate !== row.placedOn) return O.dealNotThatDay(i, line.dealId, deal.dealDate, row.placedOn)
      // Grabbed by the stored orders, the earlier rows of this batch and the earlier lines of this order.
      const before = (grabbed.get(line.dealId) ?? milli(deal.grabbedQuantity)) + (grabs.get(line.dealId) ?? 0n)
      if (before + milli(line.quantity) > milli(deal.maxQuantity)) {
        return O.dealSoldOut(i, line.dealId, fromMilli(milli(deal.maxQuantity) - before))
      }
      grabs.set(line.dealId, (grabs.get(line.dealId) ?? 0n) + milli(line.quantity))
      unitPrice = deal.dealPrice
    }
    lines.push({ ...line, itemId: offer.itemId, skuId: offer.skuId, unitPrice })
  }
  for (const [dealId, quantity] of grabs) {
    const stored = milli(state.deals.get(dealId)!.grabbedQuantity)
    grabbed.set(dealId, (grabbed.get(dealId) ?? stored) + quantity)
  }
  return { row, retailerName: state.retailerNames.get(row.retailerId)!, lines }
}

export function planOrders (rows: CheckedRow<OrderRow>[], state: OrdersState): OrdersPlan {
  const plan: OrdersPlan = { outcomes: new Map(), placements: [] }
  /** Each deal's grabbed quantity after the placements decided so far (thousandths). */
  const grabbed = new Map<number, bigint>()
  for (const { index, row } of rows) {
    const id = String(row.orderId)
    const stored = state.orders.get(row.orderId)
    if (stored) {
      const fields = differences(row, stored)
      plan.outcomes.set(index, fields.length === 0 ? UNCHANGED : refused(id, O.conflict(row.orderId, fields.join(', '))))
      continue
    }
    const decided = refusal(row, state, grabbed)
    if ('row' in decided) {
      plan.placements.push(decided)
      plan.outcomes.set(index, INSERTED)
    } else {
      plan.outcomes.set(index, refused(id, decided))
    }
  }
  return plan
}
