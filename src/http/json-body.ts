/*
 * One pass over a JSON body's raw text before it is parsed, shared by every JSON body the service reads
 * (the application/json parser of app.ts, the GraphQL GET parameters, the streamed arrays of
 * shipments/json-array-reader.ts):
 *
 * - Depth. JSON.parse, the schema validators, JSON.stringify and every walk of a parsed value are
 *   recursive: a body nested 400,000 levels deep (0.8 MB of `[`) costs V8's JSON.parse alone ~200 ms of
 *   event loop and overflows JSON.stringify's stack. No contract value nests more than a few levels
 *   (a catalogue row's offer's price slab is 5), so a body deeper than MAX_JSON_DEPTH is refused (400
 *   JSON_TOO_DEEP) before anything parses it. The scan stops at the first bracket past the bound, so a
 *   deep body costs a few microseconds; a flat one about a millisecond per megabyte (bench/json-body).
 * - Exact numbers (a route that asks for them: the platform routes, whose contract says money and
 *   quantities are stored exactly). A number whose decimal value a double cannot hold (0.1000000000000000000001,
 *   12345678901234567890, 1e400) would be silently rounded by JSON.parse: it is refused instead (400
 *   INEXACT_NUMBER) with the path of the value. `0.10`, `1.0` and `1e2` are exact: values are compared,
 *   not texts.
 */

/** The deepest nesting of arrays and objects a JSON body may have: `[[1]]` is 2 deep, `{"a":[1]}` 2. */
export const MAX_JSON_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39
const COMMA = 0x2c
const COLON = 0x3a
const POINT = 0x2e
const LOWER_E = 0x65
const UPPER_E = 0x45

/** The JSON number grammar (RFC 8259), anchored at the scan position. */
const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** Index just after the string token that starts at `start` (a `"`), or text.length if unterminated. */
export function endOfString (text: string, start: number): number {
  let i = start + 1
  for (;;) {
    const quote = text.indexOf('"', i)
    if (quote < 0) return text.length
    let backslashes = 0
    for (let j = quote - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    i = quote + 1
  }
}

/** A decimal number's value as `digits`e`exponent`, no leading or trailing zeros ("0" for zero). */
function decimalKey (text: string): string {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (m === null) return `?${text}`
  const fraction = m[3] ?? ''
  let digits = (m[2] + fraction).replace(/^0+/, '')
  if (digits === '') return '0'
  const trailing = digits.length - digits.replace(/0+$/, '').length
  digits = digits.slice(0, digits.length - trailing)
  // An exponent too long for a double is no trouble: such a number is not finite or is zero as a double,
  // and is refused before this compares anything.
  const exponent = BigInt(m[4] ?? '0') - BigInt(fraction.length) + BigInt(trailing)
  return `${m[1]}${digits}e${exponent}`
}

/**
 * Whether the decimal value of a JSON number token is exactly what JSON.parse makes of it (the double's
 * shortest text, which is what is stored, has the same value). At most 15 digits always are.
 */
export function isExactNumber (token: string): boolean {
  if (token.length <= 15 && !/[eE]/.test(token)) return true
  const value = Number(token)
  if (!Number.isFinite(value)) return false
  return decimalKey(token) === decimalKey(String(value))
}

export interface JsonScanOptions {
  /** Refuse numbers a double does not hold exactly (isExactNumber). */
  exactNumbers?: boolean
  /** Depth already open around `text` (a streamed array's element is inside the array: 1). */
  outerDepth?: number
}

export type JsonScan =
  | { kind: 'ok' }
  /** Nested deeper than MAX_JSON_DEPTH: `at` is the bracket that opens the first level too many. */
  | { kind: 'too-deep', at: number }
  /** The first number that is not exact (exactNumbers): where its token starts, and its text. */
  | { kind: 'inexact', at: number, number: string }

/**
 * Scans `text` (the raw body, before JSON.parse) for nesting past MAX_JSON_DEPTH and, if asked, numbers
 * that a double does not hold exactly. Linear; stops at the first bracket past the bound. Says nothing
 * about syntax (JSON.parse does): brackets inside strings are skipped, unbalanced ones only counted.
 */
export function scanJson (text: string, options: JsonScanOptions = {}): JsonScan {
  const exact = options.exactNumbers === true
  const n = text.length
  let depth = options.outerDepth ?? 0
  let inexact: JsonScan = { kind: 'ok' }
  let i = 0
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = endOfString(text, i)
      continue
    }
    if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > MAX_JSON_DEPTH) return { kind: 'too-deep', at: i }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--
    } else if (exact && (c === MINUS || (c >= ZERO && c <= NINE))) {
      // Most numbers are short and plain (digits, a point): at most 15 digits are exact, no regex needed.
      let j = i + 1
      for (let d = text.charCodeAt(j); (d >= ZERO && d <= NINE) || d === POINT; d = text.charCodeAt(++j));
      const stop = text.charCodeAt(j)
      if (j - i <= 15 && stop !== LOWER_E && stop !== UPPER_E) {
        i = j
        continue
      }
      NUMBER_TOKEN.lastIndex = i
      if (NUMBER_TOKEN.test(text)) {
        const end = NUMBER_TOKEN.lastIndex
        if (inexact.kind === 'ok') {
          const token = text.slice(i, end)
          if (!isExactNumber(token)) inexact = { kind: 'inexact', at: i, number: token }
        }
        i = end
        continue
      }
    }
    i++
  }
  return inexact
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const MAX_KEY_SHOWN = 60

function keyStep (key: string): string {
  if (IDENTIFIER.test(key) && key.length <= MAX_KEY_SHOWN) return `.${key}`
  const shown = key.length > MAX_KEY_SHOWN ? `${key.slice(0, MAX_KEY_SHOWN)}…` : key
  return `[${JSON.stringify(shown)}]`
}

interface Frame { array: boolean, index: number, key: string | null, expectKey: boolean }

/**
 * The path of the value that starts at `position` in valid JSON text: `rows[3].offers[0].price` when the
 * body is an array (its elements are the rows), `price` or `a.b[2]` inside an object. For a refusal's
 * text only (a second pass over a body already found wrong): the first pass keeps no path.
 */
export function pathAt (text: string, position: number): string {
  const stack: Frame[] = []
  let i = 0
  while (i < position) {
    const c = text.charCodeAt(i)
    const top = stack[stack.length - 1]
    if (c === QUOTE) {
      const end = endOfString(text, i)
      if (top !== undefined && !top.array && top.expectKey) {
        top.key = JSON.parse(text.slice(i, end)) as string
        top.expectKey = false
      }
      i = end
      continue
    }
    if (c === OPEN_BRACKET) stack.push({ array: true, index: 0, key: null, expectKey: false })
    else if (c === OPEN_BRACE) stack.push({ array: false, index: 0, key: null, expectKey: true })
    else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) stack.pop()
    else if (c === COMMA && top !== undefined) {
      if (top.array) top.index++
      else top.expectKey = true
    } else if (c === COLON && top !== undefined) top.expectKey = false
    i++
  }
  let path = ''
  stack.forEach((frame, level) => {
    if (frame.array) path += level === 0 ? `rows[${frame.index}]` : `[${frame.index}]`
    else if (frame.key !== null) {
      const step = keyStep(frame.key)
      path += level === 0 && step.startsWith('.') ? step.slice(1) : step
    }
  })
  return path === '' ? 'the body' : path
}
