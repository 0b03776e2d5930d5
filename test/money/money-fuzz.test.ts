import t from 'tap'
import fc from 'fast-check'
import { setupMoney } from '../helpers/money.js'
import { fuzzRuns, fuzzSeed, hostileString, listen, responseProblem, rowRouteStatusProblem, send } from '../helpers/fuzz.js'
import {
  PLATFORM_PAYOUTS_PATH, PLATFORM_PAYOUTS_SETTLE_PATH, PLATFORM_REFUNDS_PATH, PLATFORM_REFUNDS_SETTLE_PATH
} from '../../src/routes/rest-contract.js'
import { encodeCursor } from '../../src/money/cursor.js'
import { SettleRowErrors } from '../../src/money/texts.js'
import { PlatformCode } from '../../src/platform/texts.js'

/*
 * The finance routes fuzzed over real HTTP from fixed seeds: query strings of every wrong spelling, cursors
 * of other lists and made up, settle rows with fields of every wrong type and ids that repeat and exist.
 * Never a 5xx; a list answers 200 with its page (or CSV) or a 400 with a code; a settle answers by the
 * per-row rules; and afterwards no refund or payout left its two states, and every settled one has its
 * reference and time.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const CODES = new Set<string>(Object.values(SettleRowErrors).map((e) => typeof e === 'function' ? (e as unknown as (...a: string[]) => { code: string })('1', '1').code : e.code))
const LIST_CODES = new Set(['UNKNOWN_PARAMETER', 'REPEATED_PARAMETER', 'INVALID_STATUS_FILTER', 'INVALID_COMPANY_ID', 'INVALID_TIME',
  'INVALID_TIME_RANGE', 'INVALID_LIMIT', 'INVALID_CURSOR', 'SELLER_NOT_FOUND', 'BAD_REQUEST', 'NOT_FOUND'])

const wild = (g: G): unknown =>
  g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.integer(), fc.double(), fc.constant(null)))

function queryValue (g: G, name: string): string {
  if (coin(g, 30)) return g(() => hostileString).slice(0, 300)
  switch (name) {
    case 'status': return pick(g, ['MANUAL', 'SUCCEEDED', 'SCHEDULED', 'PAID', 'manual', '', 'ON_HOLD'])
    case 'companyId': return pick(g, ['1', '2', '0', '-1', '99999999999', '1.5', '01'])
    case 'from': case 'to': return pick(g, ['2026-11-01', '2026-02-30', '2026-11-28T10:00:00Z', '2026-11-28T10:00:00', '0000-01-01', '9999-12-31T23:59:59.999999+14:00', '2026-11-28T25:00Z'])
    case 'after': return pick(g, [encodeCursor('refunds', '3'), encodeCursor('payouts', '3'), encodeCursor('ledger', '3'), 'cmVmdW5kczow', 'x', '', '=='])
    default: return pick(g, ['1', '100', '1000', '1001', '0', '-5', 'abc', '1e3'])
  }
}

/** Percent-encoded; a lone surrogate (no UTF-8 form) sent as bytes that are not UTF-8; now and then a bad escape. */
const wellFormed = (text: string): string => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
const enc = (g: G, text: string): string => coin(g, 5)
  ? pick(g, ['%ff', '%zz', '%', '%ED%A0%80']) + encodeURIComponent(wellFormed(text))
  : encodeURIComponent(wellFormed(text)).replaceAll('%EF%BF%BD', '%ED%A0%80')

function queryString (g: G): string {
  const names = ['status', 'companyId', 'from', 'to', 'after', 'limit', 'page', 'status']
  const parts = Array.from({ length: g(fc.nat, 4) }, () => {
    const name = coin(g, 90) ? pick(g, names) : g(() => hostileString).slice(0, 50)
    return `${enc(g, name)}=${enc(g, queryValue(g, name))}`
  })
  return parts.length === 0 ? '' : `?${parts.join('&')}`
}

function settleRow (g: G, ids: string[]): unknown {
  if (coin(g, 5)) return wild(g)
  const row: Record<string, unknown> = {
    id: coin(g, 80) ? pick(g, [...ids, ...ids.map(Number), '999999', 0, '-1', '1.0', 2 ** 31]) : wild(g),
    reference: coin(g, 80) ? pick(g, ['UTR-1', 'UTR-2', '=cmd', '', ' ', 'x'.repeat(201)]) : wild(g),
    settledAt: coin(g, 70) ? undefined : coin(g, 60) ? pick(g, ['2026-11-28T10:00:00Z', '2026-11-28', '2999-01-01T00:00:00Z', null]) : wild(g)
  }
  for (const key of Object.keys(row)) if (coin(g, 4)) delete row[key]
  return row
}

t.test('fuzzed finance queries and settle bodies: never a 5xx, every answer by its rules', async (t) => {
  const { app, database, key, refund, payout, orders } = await setupMoney(t, 30)
  const ids: string[] = []
  for (let i = 0; i < 10; i++) ids.push(await refund(i))
  for (let i = 0; i < 10; i++) ids.push(await payout(i, i % 2 === 0 ? 'SCHEDULED' : 'ON_HOLD'))
  const base = await listen(app)
  const headers = { authorization: `Bearer ${key}` }
  const lists = [PLATFORM_REFUNDS_PATH, PLATFORM_PAYOUTS_PATH, `/v2/platform/sellers/${orders[0].sellerId}/ledger`, '/v2/platform/sellers/999/ledger']
  let settled = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    if (coin(g, 50)) {
      const csv = coin(g, 20)
      const path = `${pick(g, lists)}${queryString(g)}`
      const res = await send(base, { method: 'GET', path, headers: { ...headers, ...(csv ? { accept: 'text/csv' } : {}) } })
      if (res.status >= 500 || res.ms > 3000) throw new Error(`status ${res.status} for ${path}: ${res.text.slice(0, 300)}`)
      if (res.status === 200) {
        if (csv ? !res.text.startsWith('id,') : !Array.isArray(res.json?.data?.nodes)) throw new Error(`200 without a page: ${path}`)
      } else {
        const problem = responseProblem(res)
        if (problem !== null) throw new Error(`${problem} for ${path}`)
        if (!LIST_CODES.has(res.json?.code)) throw new Error(`${res.status} ${res.json?.code} for ${path}`)
      }
      return
    }
    const rows = Array.from({ length: g(fc.integer, { min: 1, max: 8 }) }, () => settleRow(g, ids))
    let body = JSON.stringify(rows)
    if (coin(g, 5)) body = pick(g, ['{}', '[]', 'null', '[', JSON.stringify({ rows }), body.slice(0, -1)])
    const path = coin(g, 50) ? PLATFORM_REFUNDS_SETTLE_PATH : PLATFORM_PAYOUTS_SETTLE_PATH
    const res = await send(base, { method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body })
    const problem = responseProblem(res) ?? rowRouteStatusProblem(res, body, app.initialConfig.bodyLimit ?? 0)
    if (problem !== null) throw new Error(`${problem}\nbody: ${body.slice(0, 500)}`)
    if (res.status === 200) {
      const data = res.json.data
      const counted = data.updated + data.unchanged + data.failed + data.inserted
      if (data.received !== rows.length || counted !== rows.length) {
        throw new Error(`counts do not add up: ${res.text.slice(0, 300)}`)
      }
      for (const e of data.errors) if (!CODES.has(e.code)) throw new Error(`unknown code ${e.code}`)
      settled += data.updated
    } else if (res.status === 400 && res.json?.data !== undefined) {
      throw new Error('a 400 with data')
    } else if (res.status === 400 && ![PlatformCode.notAnArray, PlatformCode.tooManyRows, 'INVALID_JSON', 'JSON_TOO_DEEP', 'INEXACT_NUMBER', 'BAD_REQUEST'].includes(res.json?.code)) {
      throw new Error(`400 ${res.json?.code}`)
    }
  }), { seed: fuzzSeed(4307), numRuns: fuzzRuns(1200), endOnFailure: true })
  const wrong = await database.sql`
    select 'refund' as what, id from refunds where status not in ('MANUAL', 'SUCCEEDED')
      or (status = 'SUCCEEDED') <> (reference is not null and settled_at is not null)
    union all
    select 'payout', id from payout_schedules where status not in ('SCHEDULED', 'PAID', 'ON_HOLD')
      or (status = 'PAID') <> (reference is not null and paid_at is not null)`
  t.same(wrong, [], 'every settled row has its reference and time; no other state reached')
  t.ok(settled > 0, `the fuzz reached the writes (${settled} rows settled)`)
})
