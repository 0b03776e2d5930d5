import { formatCents } from '../status-update/points.js'
import { INSERTED, refused, UNCHANGED, type CheckedRow, type RowOutcome } from './batch.js'
import type { PointsRow } from './points-row.js'
import { MAX_BALANCE_CENTS, PlatformRowErrors as E } from './texts.js'

/*
 * The decision of a points batch, in memory, from the sellers' balances and the ledger entries already
 * booked under the batch's references (both read with the sellers locked): rows in request order, each
 * against the balance the rows before it left. Pure.
 */

export interface PointsState {
  /** Balance in hundredths of each seller of the batch that exists. */
  balances: Map<number, bigint>
  /** Amount in hundredths of each entry booked under (companyId, reference): key `${companyId}:${reference}`. */
  booked: Map<string, bigint>
}

export interface LedgerEntry { sellerId: number, cents: bigint, balanceAfterCents: bigint, reference: string }

export interface PointsPlan {
  outcomes: Map<number, RowOutcome>
  entries: LedgerEntry[]
  /** The new balance of each seller with entries. */
  balances: Map<number, bigint>
}

export const bookedKey = (companyId: number, reference: string): string => `${companyId}:${reference}`

export function planPoints (rows: CheckedRow<PointsRow>[], state: PointsState): PointsPlan {
  const plan: PointsPlan = { outcomes: new Map(), entries: [], balances: new Map() }
  const booked = new Map(state.booked)
  for (const { index, row } of rows) {
    const { companyId, cents, reference } = row
    const balance = plan.balances.get(companyId) ?? state.balances.get(companyId)
    if (balance === undefined) {
      plan.outcomes.set(index, refused(reference, E.sellerNotFound(companyId)))
      continue
    }
    const key = bookedKey(companyId, reference)
    const earlier = booked.get(key)
    if (earlier !== undefined) {
      plan.outcomes.set(index, earlier === cents
        ? UNCHANGED
        : refused(reference, E.referenceConflict(reference, companyId, formatCents(earlier))))
      continue
    }
    const after = balance + cents
    if (after < 0n || after > MAX_BALANCE_CENTS) {
      const problem = after < 0n ? E.belowZero : E.tooLarge
      plan.outcomes.set(index, refused(reference, problem(formatCents(cents), formatCents(balance))))
      continue
    }
    booked.set(key, cents)
    plan.balances.set(companyId, after)
    plan.entries.push({ sellerId: companyId, cents, balanceAfterCents: after, reference })
    plan.outcomes.set(index, INSERTED)
  }
  return plan
}
