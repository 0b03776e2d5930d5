import type { PlatformBatchData, PlatformRowErrorData } from './schemas.js'
import type { ItemError } from '../item-error.js'

/*
 * What every platform bulk route answers per row (docs/platform/api.md, "The answer"): each row is
 * inserted, updated, unchanged or refused, and the answer counts them and lists the refusals by index.
 */

export type RowOutcome =
  | { kind: 'inserted' | 'updated' | 'unchanged' }
  | { kind: 'refused', id: number | string | null, error: ItemError }

export const INSERTED: RowOutcome = { kind: 'inserted' }
export const UPDATED: RowOutcome = { kind: 'updated' }
export const UNCHANGED: RowOutcome = { kind: 'unchanged' }

export function refused (id: number | string | null, error: ItemError): RowOutcome {
  return { kind: 'refused', id, error }
}

/** A row that passed its own checks, with its place in the request. */
export interface CheckedRow<R> { index: number, row: R }

/** The answer's data from every row's outcome (one per row of the request, in its order). */
export function batchData (outcomes: RowOutcome[]): PlatformBatchData {
  const data: PlatformBatchData = {
    received: outcomes.length, inserted: 0, updated: 0, unchanged: 0, failed: 0, errors: []
  }
  outcomes.forEach((outcome, index) => {
    if (outcome.kind === 'refused') {
      const error: PlatformRowErrorData = { index, id: outcome.id, error: outcome.error.text, code: outcome.error.code }
      data.errors.push(error)
      data.failed++
    } else {
      data[outcome.kind]++
    }
  })
  return data
}
