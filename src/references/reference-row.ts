import { isStorableText } from '../db/storable-text.js'
import { isPlainObject } from '../plain-object.js'
import { SYNC_ID_MAX_LENGTH } from '../sync-id.js'
import { REFERENCE_TYPES, ReferenceErrors, type ReferenceError, type ReferenceType } from './texts.js'

/*
 * One row of the references sync checked on its own (pure): a bad row becomes a per-row error and never
 * rejects the request. A row with several broken fields gets every sentence, in field order, and the
 * first one's code (as the shipment sync's rows do).
 */

/** A valid row: the seller's sync ID for one record, or null to clear it. */
export interface ReferenceRow {
  type: ReferenceType
  id: number
  syncId: string | null
}

export type RowCheck = { row: ReferenceRow, error?: undefined } | { row?: undefined, error: ReferenceError }

/** Ids are PostgreSQL integers. */
const MAX_ID = 2_147_483_647
/**
 * C0 and C1 control characters and DEL: never part of an identifier, invisible in a listing. Exported for
 * the client's generated rules (scripts/generate-rest.ts), which check the same before sending.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

const TYPES = new Set<string>(REFERENCE_TYPES)

function checkType (value: unknown): ReferenceType | ReferenceError {
  if (value === undefined) return ReferenceErrors.missing('type')
  return typeof value === 'string' && TYPES.has(value) ? value as ReferenceType : ReferenceErrors.type
}

/**
 * A JSON integer written as such (7, also 7.0 or 7e0: the same number); a string is not an id. Rows are
 * parsed by JSON.parse (no source text kept): a number too large for a double is Infinity, one with more
 * digits than a double holds is rounded as Number() would round its text, so the answer is the same.
 */
function checkId (value: unknown): number | ReferenceError {
  if (value === undefined) return ReferenceErrors.missing('id')
  const n = typeof value === 'number' ? value : NaN
  return Number.isInteger(n) && n >= 1 && n <= MAX_ID ? n : ReferenceErrors.id
}

function checkSyncId (value: unknown): string | null | ReferenceError {
  if (value === undefined) return ReferenceErrors.missing('syncId')
  if (value === null) return null
  if (typeof value !== 'string' || value.length === 0 || value.length > SYNC_ID_MAX_LENGTH || CONTROL.test(value)) {
    return ReferenceErrors.syncId
  }
  return isStorableText(value) ? value : ReferenceErrors.unstorable
}

const isError = (v: unknown): v is ReferenceError => typeof v === 'object' && v !== null && 'code' in v

/** Checks one element of the request array (as JSON.parse gives it). Unknown extra fields are ignored. */
export function checkReferenceRow (raw: unknown): RowCheck {
  if (!isPlainObject(raw)) return { error: ReferenceErrors.notAnObject }
  const type = checkType(raw.type)
  const id = checkId(raw.id)
  const syncId = checkSyncId(raw.syncId)
  const problems = [type, id, syncId].filter(isError)
  if (problems.length === 0) {
    return { row: { type: type as ReferenceType, id: id as number, syncId: syncId as string | null } }
  }
  if (problems.length === 1) return { error: problems[0] }
  return { error: { code: problems[0].code, text: problems.map((p) => p.text).join('; ') } }
}
