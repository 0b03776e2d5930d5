import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { RequestError } from '../../src/errors.js'

/*
 * Shared pieces of the fuzz suites: hostile text, a fuzzed HTTP request against the app listening on
 * a real port, and the per-response checks every endpoint must pass (never a 5xx, never slow, nothing
 * internal in the body).
 */

/** Runs per property; FUZZ_RUNS scales every suite up or down (default: a few thousand in all). */
export function fuzzRuns (base: number): number {
  const factor = Number(process.env.FUZZ_RUNS_FACTOR ?? 1)
  return Math.max(1, Math.round(base * factor))
}

/** Fixed seeds: a failure is reproducible; FUZZ_SEED overrides for exploration. */
export function fuzzSeed (base: number): number {
  return process.env.FUZZ_SEED === undefined ? base : Number(process.env.FUZZ_SEED)
}

/** A response slower than this is a failure: the defects this guards against took 18 s and more. */
export const SLOW_MS = 3000

/** Any UTF-16 code units, lone surrogates and NUL included. */
export const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
  .map((units) => String.fromCharCode(...units))

/** Text meant to break things: quotes and code, NUL, lone surrogates, control characters, size. */
/* eslint-disable no-template-curly-in-string -- template syntax inside strings is the point */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string(), weight: 4 },
  { arbitrary: codeUnits, weight: 4 },
  { arbitrary: fc.integer({ min: 1000, max: 200_000 }).map((n) => 'z'.repeat(n)), weight: 1 },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '', ' ', '\u0000', 'a\u0000b', '\ud800', '\udc00x', '\ud83d\udce6', '"); process.exit(1); ("', '`${process.exit(1)}`',
      'x": (() => { throw new Error("INJECTED-" + (6*7)) })(), "y', '__proto__', 'constructor', '\u2028\u2029', '\\', '\r\n',
      '__MAGIC_DATE__33a9e76d_02e0_4128_8e92_3530ad3da74d(()=>{throw new Error(\'INJECTED-\'+(6*7))})()',
      '%s%s%s', '{{7*7}}', "' or 1=1 --", '${7*7}', '\u202e', 'A'.repeat(300)
    )
  }
)
/* eslint-enable no-template-curly-in-string */

export interface FuzzRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS'
  path: string
  headers: Record<string, string>
  body?: string
}

export interface FuzzResponse { status: number, text: string, json: any, ms: number }

/** Sends one request over real HTTP to an app listening on 127.0.0.1. */
export async function send (base: string, request: FuzzRequest): Promise<FuzzResponse> {
  const started = performance.now()
  const res = await fetch(`${base}${request.path}`, { method: request.method, headers: request.headers, body: request.body })
  const text = await res.text()
  const ms = performance.now() - started
  let json: unknown
  try { json = text === '' ? undefined : JSON.parse(text) } catch { json = undefined }
  return { status: res.status, text, json, ms }
}

export async function listen (app: FastifyInstance): Promise<string> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  return address
}

/** What no response may ever show. */
const INTERNALS = /at [\w.<>]+ \(|\.(ts|js):\d+:\d+|Maximum call stack|TypeError|ReferenceError|Cannot read propert|INJECTED-42|Failed query|params:/

/** The checks of every fuzzed response; returns the first problem found, or null. */
/**
 * For a route that answers a body row by row: 200 or 400, or 413 exactly when the body is over the limit
 * (`hostileString` can make a few rows of it larger than 1 MiB), with the body-limit failure's own message.
 */
export function rowRouteStatusProblem (res: FuzzResponse, body: string, limit: number): string | null {
  const over = Buffer.byteLength(body) > limit
  if (res.status === 413) {
    if (!over) return `413 for ${Buffer.byteLength(body)} bytes, under the limit of ${limit}`
    return res.json?.message === new RequestError.PayloadTooLarge(limit).message ? null : `413 without its message: ${res.text.slice(0, 200)}`
  }
  if (over) return `status ${res.status} for ${Buffer.byteLength(body)} bytes, over the limit of ${limit}`
  return res.status === 200 || res.status === 400 ? null : `status ${res.status}`
}

export function responseProblem (res: FuzzResponse): string | null {
  if (res.status >= 500) return `status ${res.status}: ${res.text.slice(0, 300)}`
  if (res.ms > SLOW_MS) return `slow: ${Math.round(res.ms)} ms`
  if (INTERNALS.test(res.text)) return `internals in the body: ${res.text.slice(0, 300)}`
  if (res.text !== '' && res.json === undefined) return `body is not JSON: ${res.text.slice(0, 200)}`
  return null
}
