import { INSERTED, refused, UNCHANGED, UPDATED, type CheckedRow, type RowOutcome } from './batch.js'
import type { DealRow } from './deal-row.js'
import { decimalValue } from './fields.js'
import { PlatformRowErrors as E } from './texts.js'

/*
 * The decision of a deals batch, in memory, from the rows and what is stored (the deals read under their
 * locks): each row's outcome, and the writes that make it so. A deal equal to what is stored writes
 * nothing, not even updated_at. The grabbed quantity is the orders': a deal never gets a maxQuantity below
 * it, and a deal that orders have grabbed keeps its offer (their lines name the deal and the offer). Pure.
 */

export interface StoredDeal {
  sellerId: number
  offerId: number
  dealDate: string
  dealPrice: string
  maxQuantity: string
  grabbedQuantity: string
  /** An order line names the deal (read only for deals whose offer a row would change). */
  onOrders: boolean
}

export interface DealsState {
  /** The companyIds of the batch that are sellers. */
  sellers: Set<number>
  /** The seller of each offerId of the batch that exists. */
  offerSellers: Map<number, number>
  deals: Map<number, StoredDeal>
}

export interface DealsPlan {
  outcomes: Map<number, RowOutcome>
  insert: DealRow[]
  update: DealRow[]
}

/** A decimal text of at most 3 decimals as an exact integer of thousandths, to compare two quantities. */
function thousandths (text: string): bigint {
  const [whole, fraction = ''] = decimalValue(text, 3)!.split('.')
  const sign = whole.startsWith('-') ? -1n : 1n
  return sign * (BigInt(whole.replace('-', '')) * 1000n + BigInt(fraction.padEnd(3, '0')))
}

const sameDeal = (row: DealRow, stored: StoredDeal) => row.offerId === stored.offerId &&
  row.dealDate === stored.dealDate && row.dealPrice === decimalValue(stored.dealPrice, 2) &&
  row.maxQuantity === decimalValue(stored.maxQuantity, 3)

export function planDeals (rows: CheckedRow<DealRow>[], state: DealsState): DealsPlan {
  const plan: DealsPlan = { outcomes: new Map(), insert: [], update: [] }
  for (const { index, row } of rows) {
    const stored = state.deals.get(row.id)
    const refuse = (error: Parameters<typeof refused>[1]) => plan.outcomes.set(index, refused(row.id, error))
    if (!state.sellers.has(row.companyId)) refuse(E.sellerNotFound(row.companyId))
    else if (stored !== undefined && stored.sellerId !== row.companyId) refuse(E.dealOfAnotherSeller(row.id))
    else if (state.offerSellers.get(row.offerId) !== row.companyId) refuse(E.offerNotFound(row.offerId, row.companyId))
    else if (stored === undefined) {
      plan.insert.push(row)
      plan.outcomes.set(index, INSERTED)
    } else if (stored.offerId !== row.offerId && stored.onOrders) {
      refuse(E.offerOfGrabbedDeal(stored.offerId, row.offerId))
    } else if (thousandths(row.maxQuantity) < thousandths(stored.grabbedQuantity)) {
      refuse(E.belowGrabbed(row.maxQuantity, decimalValue(stored.grabbedQuantity, 3)!))
    } else if (sameDeal(row, stored)) {
      plan.outcomes.set(index, UNCHANGED)
    } else {
      plan.update.push(row)
      plan.outcomes.set(index, UPDATED)
    }
  }
  return plan
}
