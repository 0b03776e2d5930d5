import { isStorableText } from '../db/storable-text.js'
import { IMAGE_MAX_LENGTH, MAX_ID, TEXT_MAX_LENGTH } from './texts.js'

/*
 * Pure checks of single values shared by the platform's row checks. Each answers the value as it is
 * stored, or undefined when it cannot be; the row check turns undefined into its field's text.
 */

export function idValue (value: unknown): number | undefined {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_ID ? value as number : undefined
}

/** 'bad' for text the database would refuse or change (NUL, a lone surrogate): its own text. */
export function textValue (value: unknown): string | 'bad' | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > TEXT_MAX_LENGTH) return undefined
  return isStorableText(value) ? value : 'bad'
}

/**
 * A name or reference: textValue, and 'blank' for one with nothing but whitespace (" ", "\t\n", U+00A0):
 * it is no name a seller or a retailer could read, nor a reference the marketplace could look up.
 */
export function nameValue (value: unknown): string | 'bad' | 'blank' | undefined {
  const text = textValue(value)
  return text !== undefined && text !== 'bad' && text.trim() === '' ? 'blank' : text
}

const DECIMAL = /^([+-]?)0*(\d*?)(?:\.(\d*?)0*)?$/

/**
 * A JSON number or a numeric string as a canonical decimal text ("-0012.500" → "-12.5", "0.0" → "0"),
 * or undefined when it is not one or has more than `maxDecimals` decimals. A number's shortest text
 * is read (an exponent, 1e21 or 1e-7, is refused: no amount of ours needs one).
 */
export function decimalValue (value: unknown, maxDecimals: number): string | undefined {
  let text: string
  if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : ''
  else if (typeof value === 'string' && value.length <= 40) text = value
  else return undefined
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)$/.test(text)) return undefined
  const m = DECIMAL.exec(text)!
  const whole = m[2] === '' ? '0' : m[2]
  const fraction = m[3] ?? ''
  if (fraction.length > maxDecimals) return undefined
  const zero = whole === '0' && fraction === ''
  return `${m[1] === '-' && !zero ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`
}

/** Whole digits of a canonical decimal: numeric(14,2) holds 12, numeric(14,3) 11. */
function boundedDecimal (value: unknown, decimals: number, wholeDigits: number): string | undefined {
  const text = decimalValue(value, decimals)
  if (text === undefined || text.startsWith('-')) return undefined
  return text.split('.')[0].length <= wholeDigits ? text : undefined
}

/** Money as numeric(14,2) stores it: 0 to 999999999999.99, canonical text. */
export const moneyValue = (value: unknown): string | undefined => boundedDecimal(value, 2, 12)

/** A quantity as numeric(14,3) stores it: 0 to 99999999999.999, canonical text. */
export const quantityValue = (value: unknown): string | undefined => boundedDecimal(value, 3, 11)

export function positiveQuantityValue (value: unknown): string | undefined {
  const text = quantityValue(value)
  return text === undefined || text === '0' ? undefined : text
}

export function currencyValue (value: unknown): string | undefined {
  return typeof value === 'string' && /^[A-Z]{3}$/.test(value) ? value : undefined
}

/** An image URL: any storable text up to IMAGE_MAX_LENGTH ('bad' as textValue). */
export function imageValue (value: unknown): string | 'bad' | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > IMAGE_MAX_LENGTH) return undefined
  return isStorableText(value) ? value : 'bad'
}

/** A calendar date written YYYY-MM-DD that exists (2024-02-30 does not), year 1 to 9999. */
export function dateValue (value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!m) return undefined
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  return year >= 1 && exists ? value : undefined
}
