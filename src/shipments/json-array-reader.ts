import { StringDecoder } from 'node:string_decoder'
import { RequestError } from '../errors.js'
import { nextTurn } from '../event-loop-turn.js'
import { MAX_JSON_DEPTH, scanJson } from '../http/json-body.js'
import { parseJsonKeepingNumberText } from './json-number-text.js'

/*
 * Reads a request body that should be one JSON array, element by element, as it arrives. A 100,000-row
 * sync never exists in memory as one body string or one parsed tree: each element is cut out of the
 * stream (tracking depth and strings), parsed on its own (numbers keep their source text) and handed on.
 * Syntax is checked by JSON.parse per element plus the separators here, so any invalid JSON is found.
 * Nesting is bounded as for every JSON body (http/json-body.ts): the array is level 1, so an element may
 * nest MAX_JSON_DEPTH - 1 levels; the first bracket past that ends the scan (400 JSON_TOO_DEEP).
 */

export type JsonArrayBody = { kind: 'array', count: number } | { kind: 'not-array' }

const enum Phase { Start, First, Element, End, NotArray, Invalid }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

function isWhitespace (c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/**
 * How one element's text becomes a value. By default numbers keep their source text (json-number-text.ts):
 * the shipment sync's quantities must be kept exactly. A route whose numbers are only ids may use the
 * native JSON.parse, three times faster per element.
 */
export type ElementParser = (text: string) => unknown

/** The synchronous core: feed text with push(), then end(). */
export class JsonArrayScanner {
  private phase = Phase.Start
  private depth = 0
  private inString = false
  private escaped = false
  /** The body nests deeper than MAX_JSON_DEPTH (a refusal of its own, not invalid JSON). */
  private tooDeep = false
  /** Text of the current element (or of a non-array body) from earlier chunks. */
  private pieces: string[] = []
  private count = 0

  constructor (
    private readonly onElement: (value: unknown, index: number) => void,
    private readonly parse: ElementParser = parseJsonKeepingNumberText
  ) {}

  get invalid (): boolean { return this.phase === Phase.Invalid }

  push (text: string): void {
    const n = text.length
    let { phase, depth, inString, escaped } = this
    let i = 0
    /** Where the current element (or a non-array body) starts in this chunk. */
    let start = 0
    while (i < n) {
      const c = text.charCodeAt(i)
      if (phase === Phase.Element) {
        if (inString) {
          if (escaped) escaped = false
          else if (c === BACKSLASH) escaped = true
          else if (c === QUOTE) inString = false
        } else if (c === QUOTE) {
          inString = true
        } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          // The array itself is the first level.
          if (++depth >= MAX_JSON_DEPTH) {
            this.tooDeep = true
            this.fail()
            return
          }
        } else if (c === CLOSE_BRACE || (c === CLOSE_BRACKET && depth > 0)) {
          depth--
        } else if ((c === COMMA || c === CLOSE_BRACKET) && depth === 0) {
          if (!this.emit(this.takeElement(text, start, i))) return
          start = i + 1
          if (c === CLOSE_BRACKET) phase = Phase.End
        }
        i++
        continue
      }
      switch (phase) {
        case Phase.Start:
          if (isWhitespace(c) || (c === 0xfeff && i === 0)) i++
          else if (c === OPEN_BRACKET) { phase = Phase.First; i++ } else { phase = Phase.NotArray; start = i; i = n }
          break
        case Phase.First:
          if (isWhitespace(c)) i++
          else if (c === CLOSE_BRACKET) { phase = Phase.End; i++ } else { phase = Phase.Element; start = i }
          break
        case Phase.End:
          if (!isWhitespace(c)) { this.fail(); return }
          i++
          break
        default: // NotArray: kept whole, parsed at the end
          i = n
      }
    }
    Object.assign(this, { phase, depth, inString, escaped })
    if ((phase === Phase.Element || phase === Phase.NotArray) && start < n) this.pieces.push(text.slice(start))
  }

  private takeElement (text: string, start: number, end: number): string {
    if (this.pieces.length === 0) return text.slice(start, end)
    const whole = this.pieces.join('') + text.slice(start, end)
    this.pieces = []
    return whole
  }

  private emit (elementText: string): boolean {
    let value: unknown
    try {
      value = this.parse(elementText)
    } catch {
      this.fail()
      return false
    }
    this.onElement(value, this.count++)
    return true
  }

  private fail (): void {
    this.phase = Phase.Invalid
    this.pieces = []
  }

  /**
   * After the last chunk: what the body was. Throws InvalidJsonError when it was not valid JSON,
   * JsonTooDeepError when it nested past the bound.
   */
  end (): JsonArrayBody {
    if (this.phase === Phase.End) return { kind: 'array', count: this.count }
    if (this.tooDeep) throw new RequestError.JsonTooDeep(MAX_JSON_DEPTH)
    if (this.phase === Phase.NotArray) {
      const text = this.pieces.join('')
      this.pieces = []
      if (scanJson(text).kind === 'too-deep') throw new RequestError.JsonTooDeep(MAX_JSON_DEPTH)
      try {
        this.parse(text)
      } catch {
        throw new RequestError.InvalidJson()
      }
      return { kind: 'not-array' }
    }
    throw new RequestError.InvalidJson()
  }
}

/**
 * Bytes scanned between two turns of the event loop (about a millisecond of scanning and of what the
 * elements' handler does). A stream's iterator hands over everything buffered at once, without a turn:
 * a body that arrived while the process was busy came out as one chunk of hundreds of kilobytes, and
 * an orders read waited 30–75 ms behind it (bench/results/2026-11-27-references-sync.md, fourth round).
 */
export const BYTES_PER_TURN = 16 * 1024

/** Where the bytes of a body go as they arrive: scanned here (JsonArrayReader) or in another thread. */
export interface JsonArraySink {
  write: (bytes: Buffer) => void | Promise<void>
  /** After the last bytes: what the body was. Rejects with InvalidJsonError when it was not valid JSON. */
  end: () => JsonArrayBody | Promise<JsonArrayBody>
}

/** A JsonArrayScanner fed with bytes, a turn of the event loop every BYTES_PER_TURN. */
export class JsonArrayReader implements JsonArraySink {
  private readonly scanner: JsonArrayScanner
  private readonly decoder = new StringDecoder('utf8')
  private sinceTurn = 0

  constructor (onElement: (value: unknown, index: number) => void, parse?: ElementParser) {
    this.scanner = new JsonArrayScanner(onElement, parse)
  }

  async write (bytes: Buffer): Promise<void> {
    // The decoder keeps a character cut between two slices for the next one.
    for (let start = 0; start < bytes.length && !this.scanner.invalid; start += BYTES_PER_TURN) {
      if (this.sinceTurn >= BYTES_PER_TURN) {
        await nextTurn()
        this.sinceTurn = 0
      }
      const slice = bytes.subarray(start, start + BYTES_PER_TURN)
      this.scanner.push(this.decoder.write(slice))
      this.sinceTurn += slice.length
    }
  }

  end (): JsonArrayBody {
    if (!this.scanner.invalid) this.scanner.push(this.decoder.end())
    return this.scanner.end()
  }
}

/**
 * Reads a byte stream into a sink, enforcing a byte limit (413 above it). After a syntax error the rest of
 * the body is still read, within the limit, so the client gets the 400 rather than a reset connection.
 */
export async function readJsonArrayInto (
  stream: AsyncIterable<Buffer | string>, limit: number, sink: JsonArraySink
): Promise<JsonArrayBody> {
  let received = 0
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    received += bytes.length
    if (received > limit) throw new RequestError.PayloadTooLarge(limit)
    await sink.write(bytes)
  }
  return await sink.end()
}

/** readJsonArrayInto a JsonArrayReader: each element handed to `onElement` in this thread. */
export async function readJsonArray (
  stream: AsyncIterable<Buffer | string>, limit: number, onElement: (value: unknown, index: number) => void,
  parse?: ElementParser
): Promise<JsonArrayBody> {
  return await readJsonArrayInto(stream, limit, new JsonArrayReader(onElement, parse))
}
