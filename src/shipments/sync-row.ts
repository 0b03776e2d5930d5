import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { isStorableText, unstorableTextRule } from '../db/storable-text.js'
import { isPlainObject } from '../plain-object.js'
import { itemErrors, type CodeOf, type ItemError } from '../item-error.js'
import { JsonNumber, jsonValue } from './json-number-text.js'
import { SYNC_ID_MAX_LENGTH } from '../sync-id.js'

/*
 * One outstanding shipment record (docs/api/shipments.md) checked on its own: a bad row becomes a per-row error and
 * never rejects the request, so this is a compiled TypeBox checker run row by row rather than the route's
 * body schema. What JSON Schema cannot say (NUL characters, lone surrogates, the sign and size of a
 * numeric text) is checked after it, in code.
 */

/** A quantity's text: digits, an optional fraction and exponent (what PostgreSQL's numeric reads). */
const NUMERIC_TEXT = '^[+-]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][+-]?\\d+)?$'
const NUMERIC = new RegExp(NUMERIC_TEXT)
const QUANTITY_MAX_LENGTH = 100
const QUANTITY_MAX_EXPONENT = 1000

const SyncId = Type.String({ minLength: 1, maxLength: SYNC_ID_MAX_LENGTH })
const Quantity = Type.Union([Type.Number({ minimum: 0 }), Type.String({ pattern: NUMERIC_TEXT })])

export const OutstandingShipmentRecord = Type.Object({
  retailerSyncId: SyncId,
  shopSyncId: Type.Optional(Type.Union([SyncId, Type.Null()])),
  offerSyncId: SyncId,
  outstandingQuantity: Quantity
}, { title: 'SyncRow', description: 'One outstanding shipment record; shopSyncId null or absent when no shop is available' })

const checkRecord = TypeCompiler.Compile(OutstandingShipmentRecord)
const checkSyncId = TypeCompiler.Compile(SyncId)
const checkField: Record<Exclude<Field, 'outstandingQuantity'>, { Check: (v: unknown) => boolean }> = {
  retailerSyncId: checkSyncId,
  shopSyncId: TypeCompiler.Compile(Type.Union([SyncId, Type.Null()])),
  offerSyncId: checkSyncId
}

export type Field = 'retailerSyncId' | 'shopSyncId' | 'offerSyncId' | 'outstandingQuantity'
const FIELDS: Field[] = ['retailerSyncId', 'shopSyncId', 'offerSyncId', 'outstandingQuantity']

/** A valid row, as it is stored: quantity as the exact text the client sent. */
export interface OutstandingShipmentRow {
  retailerSyncId: string
  shopSyncId: string | null
  offerSyncId: string
  outstandingQuantity: string
}

const syncIdRule = `a non-empty string of at most ${SYNC_ID_MAX_LENGTH} characters`

/**
 * A row's errors, one sentence each with its code (additive to the contract: `data.errors[].code`). A row
 * with several broken fields gets every sentence, in field order, and the first one's code. Those a client
 * can find before sending are generated into the client (scripts/generate-rest.ts).
 */
export const RowErrors = itemErrors({
  notAnObject: ['ROW_NOT_OBJECT', 'Row must be a JSON object with retailerSyncId, offerSyncId and outstandingQuantity'],
  notARecord: ['ROW_NOT_OBJECT', 'Row is not a valid outstanding shipment record'],
  missing: ['FIELD_REQUIRED', (field: Field) => `${field} is required`],
  retailerSyncId: ['INVALID_SYNC_ID', `retailerSyncId must be ${syncIdRule}`],
  shopSyncId: ['INVALID_SYNC_ID', `shopSyncId must be ${syncIdRule}, or null`],
  offerSyncId: ['INVALID_SYNC_ID', `offerSyncId must be ${syncIdRule}`],
  quantity: ['INVALID_QUANTITY',
    'outstandingQuantity must be a finite number of at least 0, or a numeric string such as "10.500"'],
  quantityTooLong: ['INVALID_QUANTITY', `outstandingQuantity must be at most ${QUANTITY_MAX_LENGTH} characters long`],
  quantityOutOfRange: ['INVALID_QUANTITY',
    `outstandingQuantity is out of range (exponent beyond ±${QUANTITY_MAX_EXPONENT})`],
  quantityNotFinite: ['INVALID_QUANTITY', 'outstandingQuantity must be a finite number'],
  quantityNegative: ['INVALID_QUANTITY', 'outstandingQuantity must not be negative'],
  quantityTooSmall: ['INVALID_QUANTITY', 'outstandingQuantity is too small: a quantity other than 0 must not ' +
    'round to 0 as a Float (below about 2.5e-324), the number the outstandingShipments read gives back'],
  unstorable: ['UNSTORABLE_TEXT', (field: Field) => unstorableTextRule(field)]
})
export type RowErrorCode = CodeOf<typeof RowErrors>
export type RowError = ItemError<RowErrorCode>

export type RowCheck = { row: OutstandingShipmentRow, error?: undefined } | { row?: undefined, error: RowError }

/** Text the database would refuse or change: NUL (text columns cannot hold it) or a lone surrogate. */
function badText (v: unknown): boolean {
  return typeof v === 'string' && !isStorableText(v)
}

/** Why a numeric text that passed the grammar still cannot be stored as the same value, or null. */
function quantityTextProblem (text: string): RowError | null {
  if (text.length > QUANTITY_MAX_LENGTH) return RowErrors.quantityTooLong
  const e = text.search(/[eE]/)
  if (e >= 0 && Math.abs(Number(text.slice(e + 1))) > QUANTITY_MAX_EXPONENT) return RowErrors.quantityOutOfRange
  if (!Number.isFinite(Number(text))) return RowErrors.quantityNotFinite
  // "-0.000" is zero and fine; "-1e-400" is negative although it reads as -0 in a double.
  const nonZero = /[1-9]/.test(e >= 0 ? text.slice(0, e) : text)
  if (text.charCodeAt(0) === 0x2d && nonZero) return RowErrors.quantityNegative
  // The read gives the quantity back as a Float (a double): one that is not 0 must not read as 0. Number()
  // and PostgreSQL's float8 both round correctly to the nearest double, so they agree on which do.
  if (nonZero && Number(text) === 0) return RowErrors.quantityTooSmall
  return null
}

/** Checks one element of the request array; an absent shopSyncId is read as null (the same key). */
export function checkOutstandingShipmentRow (raw: unknown): RowCheck {
  if (!isPlainObject(raw)) return { error: RowErrors.notAnObject }
  const quantity = jsonValue(raw.outstandingQuantity)
  const candidate: Record<string, unknown> = {
    retailerSyncId: jsonValue(raw.retailerSyncId),
    offerSyncId: jsonValue(raw.offerSyncId),
    // A JSON number is checked as the number it denotes; its source text is what is stored.
    outstandingQuantity: quantity instanceof JsonNumber ? Number(quantity.text) : quantity
  }
  const shop = jsonValue(raw.shopSyncId)
  if (shop !== undefined) candidate.shopSyncId = shop
  // A plain JS number (a caller that did not parse with number text) is stored in its shortest form.
  const quantityText = quantity instanceof JsonNumber ? quantity.text : typeof quantity === 'number' ? String(quantity) : quantity
  if (checkRecord.Check(candidate) && !FIELDS.some((f) => badText(candidate[f])) &&
    quantityTextProblem(quantityText as string) === null) {
    return {
      row: {
        retailerSyncId: candidate.retailerSyncId as string,
        shopSyncId: (shop ?? null) as string | null,
        offerSyncId: candidate.offerSyncId as string,
        outstandingQuantity: quantityText as string
      }
    }
  }
  return explain(candidate, quantityText)
}

/** Every broken field of a row, in field order, one sentence each; the code is the first one's. */
function explain (candidate: Record<string, unknown>, quantityText: unknown): { error: RowError } {
  const problems: RowError[] = []
  for (const field of FIELDS) {
    const value = candidate[field]
    if (value === undefined) {
      if (field !== 'shopSyncId') problems.push(RowErrors.missing(field))
    } else if (field === 'outstandingQuantity') {
      const numeric = typeof value === 'number' || (typeof value === 'string' && NUMERIC.test(value))
      const problem = numeric ? quantityTextProblem(quantityText as string) : RowErrors.quantity
      if (problem) problems.push(problem)
    } else if (!checkField[field].Check(value)) {
      problems.push(RowErrors[field])
    } else if (badText(value)) {
      problems.push(RowErrors.unstorable(field))
    }
  }
  if (problems.length === 0) return { error: RowErrors.notARecord }
  return { error: { code: problems[0]!.code, text: problems.map((p) => p.text).join('; ') } }
}
