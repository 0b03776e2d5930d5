// Shared pieces of the fuzz suites: hostile text, fuzzed HTTP requests, the checks every response must pass.
import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { RequestError } from '../../src/errors.js'

/*
 * Shared pieces of the fuzz suites: hostile text, a fuzzed HTTP request against the app listening on
 * a real port, and the per-response checks every endpoint must pass (never a 5xx, never slow, nothing
 * internal in the body).
 */

/**
 * Runs per property: `base` is a suite's full size, which `npm run test:deep` runs (FUZZ_RUNS_FACTOR=1).
 * `npm test`, and so CI, runs half of it (still a thousand and more requests a suite, from the same fixed
 * seeds): the fuzzers were a fifth of the suite's time, and half their cases found every defect the full size
 * has found so far. FUZZ_RUNS_FACTOR scales every suite (10: ten times the full size).
 */
export const DEFAULT_FUZZ_RUNS_FACTOR = 0.5
/** `atLeast`: a suite whose checks of what the fuzz reached need that many runs never runs fewer. */
export function fuzzRuns (base: number, atLeast = 1): number {
  const factor = Number(process.env.FUZZ_RUNS_FACTOR ?? DEFAULT_FUZZ_RUNS_FACTOR)
  return Math.max(atLeast, Math.round(base * factor))
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

/** A route a deep body is sent to: `template` is its body with DEEP_SLOT where the nested value goes. */
export interface DeepRoute {
  method: FuzzRequest['method']
  path: string
  headers: Record<string, string>
  template: string
  /** GET: the template is the query string, the nested value URL-encoded. */
  query?: boolean
  /** The deepest body sent (a query string is bounded by the header limit, 16 KiB). */
  maxDepth?: number
  /** A GraphQL route: a refusal is `{data: null, errors: [{extensions: {code}}]}`, not the REST envelope. */
  graphql?: boolean
}

export const DEEP_SLOT = '__DEEP__'
/** The contract's bound (docs/api/limits.md), written out: a body may nest 64 levels of arrays and objects. */
export const JSON_DEPTH_BOUND = 64

/** Levels of arrays and objects open at `slot` (DEEP_SLOT by default) in a template. */
export function levelsAround (template: string, slot = DEEP_SLOT): number {
  let depth = 0
  for (const c of template.slice(0, template.indexOf(slot))) {
    if (c === '[' || c === '{') depth++
    else if (c === ']' || c === '}') depth--
  }
  return depth
}

/**
 * Deep bodies, 10 to 400,000 levels (both sides of the bound, and far past it), sent to each route with and
 * without an Idempotency-Key, nested as arrays or objects, closed or cut off: past the bound every answer is
 * a 400 JSON_TOO_DEEP, within it never that, and never a 5xx, a slow answer or anything internal.
 * Answers the count of each outcome (`too-deep`, `read`, each with `+key` when a key was sent).
 */
export async function assertDeepBodies (base: string, routes: readonly DeepRoute[], seed: number, runsPerRoute = 10):
Promise<Map<string, number>> {
  const seen = new Map<string, number>()
  let key = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const route = routes[g(fc.nat, routes.length - 1)]
    const max = route.maxDepth ?? 400_000
    const edges = fc.constantFrom(10, JSON_DEPTH_BOUND - 1, JSON_DEPTH_BOUND, JSON_DEPTH_BOUND + 1, max)
    const total = g(() => fc.oneof(edges, fc.integer({ min: 10, max })))
    // Objects cost 6 bytes a level: kept under the 1 MiB body limit.
    const style = total <= 150_000 && g(fc.boolean) ? 'object' : 'array'
    const closed = g(fc.nat, 9) > 1
    const levels = Math.max(1, total - levelsAround(route.template))
    const open = style === 'array' ? '['.repeat(levels) : '{"a":'.repeat(levels)
    const deep = open + (style === 'array' ? '' : '1') + (closed ? (style === 'array' ? ']' : '}').repeat(levels) : '')
    const withKey = g(fc.boolean)
    const headers = { ...route.headers, ...(withKey ? { 'idempotency-key': `deep-body-${++key}` } : {}) }
    const filled = route.template.replace(DEEP_SLOT, route.query ? encodeURIComponent(deep) : deep)
    const request: FuzzRequest = route.query
      ? { method: route.method, path: `${route.path}?${filled}`, headers }
      : { method: route.method, path: route.path, headers: { 'content-type': 'application/json', ...headers }, body: filled }
    const res = await send(base, request)
    const code = route.graphql ? res.json?.errors?.[0]?.extensions?.code : res.json?.code
    const depth = levelsAround(route.template) + levels
    const problem = responseProblem(res) ??
      (depth > JSON_DEPTH_BOUND && (res.status !== 400 || code !== 'JSON_TOO_DEEP') ? `${res.status} ${String(code)} past the bound` : null) ??
      (depth <= JSON_DEPTH_BOUND && code === 'JSON_TOO_DEEP' ? 'JSON_TOO_DEEP within the bound' : null)
    if (problem) {
      throw new Error(`${problem}: ${route.method} ${route.path}, ${depth} levels (${style}, ${closed ? 'closed' : 'cut off'}` +
        `${withKey ? ', Idempotency-Key' : ''})\n→ ${res.text.slice(0, 300)}`)
    }
    const outcome = `${code === 'JSON_TOO_DEEP' ? 'too-deep' : 'read'}${withKey ? '+key' : ''}`
    seen.set(outcome, (seen.get(outcome) ?? 0) + 1)
  }), { seed, numRuns: fuzzRuns(routes.length * runsPerRoute), endOnFailure: true })
  return seen
}

/** The outcomes a deep-body fuzz must have reached: both sides of the bound, with and without a key. */
export const DEEP_OUTCOMES = ['too-deep', 'too-deep+key', 'read', 'read+key'] as const
