/*
 * JSON.parse turns every number into a double: `0.1000000000000000000001` and `12345678901234567890` come
 * out rounded, while the contract says quantities are kept exactly as the client's source holds them.
 * Node 20 has no JSON.parse source-text access, so before the (native, fast, strict) parse one pass over the
 * text wraps every number token into a string that carries its source text behind a NUL mark:
 * `10.50` becomes `"\u000010.50"`. Token structure is unchanged, so invalid JSON stays invalid.
 * A genuine string that itself starts with U+0000 gets a second mark, so the two never mix up.
 */

const MARK = '\u0000'
const MARK_ESCAPED = '\\u0000'
const NUMBER_OPEN = '"' + MARK_ESCAPED
/** The JSON number grammar (RFC 8259), anchored at the scan position. */
const NUMBER_TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** A JSON number as written in the request. */
export class JsonNumber {
  constructor (readonly text: string) {}
}

/** Index just after the string token that starts at `start` (a `"`), or text.length if unterminated. */
function endOfString (text: string, start: number): number {
  let i = start + 1
  for (;;) {
    const quote = text.indexOf('"', i)
    if (quote < 0) return text.length
    let backslashes = 0
    for (let j = quote - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    i = quote + 1
  }
}

/** Parses JSON like JSON.parse, but numbers come back as marked strings: read values with `jsonValue`. */
export function parseJsonKeepingNumberText (text: string): unknown {
  const parts: string[] = []
  let copied = 0
  let i = 0
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      if (text.startsWith(MARK_ESCAPED, i + 1)) {
        parts.push(text.slice(copied, i + 1), MARK_ESCAPED)
        copied = i + 1
      }
      i = endOfString(text, i)
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER_TOKEN.lastIndex = i
      if (!NUMBER_TOKEN.test(text)) throw new SyntaxError(`Invalid number at position ${i}`)
      const end = NUMBER_TOKEN.lastIndex
      parts.push(text.slice(copied, i), NUMBER_OPEN, text.slice(i, end), '"')
      i = end
      copied = i
    } else {
      i++
    }
  }
  if (copied === 0) return JSON.parse(text)
  parts.push(text.slice(copied))
  return JSON.parse(parts.join(''))
}

/**
 * A value as the client wrote it: a JsonNumber for a number, the original string for a string, anything
 * else as parsed. Only the fields that are read need this; nested values of ignored fields stay marked.
 */
export function jsonValue (value: unknown): unknown {
  if (typeof value !== 'string' || value.charCodeAt(0) !== 0) return value
  return value.charCodeAt(1) === 0 ? value.slice(1) : new JsonNumber(value.slice(MARK.length))
}
