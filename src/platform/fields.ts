import { isStorableText } from '../db/storable-text.js'
import { MAX_ID, TEXT_MAX_LENGTH } from './texts.js'

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
