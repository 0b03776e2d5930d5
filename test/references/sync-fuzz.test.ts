import t from 'tap'
import fc from 'fast-check'
import { build, type TestDatabase as Database } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { createCatalogue, createRetailer } from '../helpers/order-fixtures.js'
import {
  assertDeepBodies, codeUnits, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns,
  fuzzSeed, hostileString, listen, responseProblem, send, type FuzzRequest
} from '../helpers/fuzz.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { checkReferenceRow } from '../../src/references/reference-row.js'
import { REFERENCE_TYPES } from '../../src/references/texts.js'

/*
 * PUT /v2/references/sync-data fuzzed over real HTTP from a fixed seed: rows of every shape (each field of
 * the wrong type or hostile text, ids of this seller, of another seller and unknown, a small pool of sync
 * IDs so that conflicts, swaps and duplicates happen), invalid and truncated JSON, other content types.
 * Never a 5xx; every 200 follows the per-row rules: a row the pure check refuses is reported with its code
 * and text; every other row is either applied (the record now holds the sent value) or refused with a
 * conflict or not-found code and its record left as it was; the counts add up against the state before;
 * no two records of a type hold one sync ID.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const POOL = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'ITEM-M1', 'VAR-M1', 'RET-M']

/** type id → sync ID of every record of the seller. */
async function snapshot (database: Database, sellerId: number): Promise<Map<string, string | null>> {
  const rows = await database.sql<Array<{ key: string, sync_id: string | null }>>`
    select 'RETAILER ' || retailer_id as key, sync_id from seller_retailers where seller_id = ${sellerId}
    union all select 'SHOP ' || shop_id, sync_id from seller_shops where seller_id = ${sellerId}
    union all select 'ITEM ' || id, item_sync_id from items where seller_id = ${sellerId}
    union all select 'OFFER ' || id, offer_sync_id from offers where seller_id = ${sellerId}`
  return new Map(rows.map((r) => [r.key, r.sync_id]))
}

t.test('fuzzed references syncs: never a 5xx, every 200 by the per-row rules', async (t) => {
  const { app, database, logs } = await build(t, { SYNC_BODY_LIMIT_BYTES: String(64 * 1024) }, { captureLogs: true })
  const mine = await createSeller(database)
  const other = await createSeller(database)
  for (let i = 0; i < 4; i++) {
    await createCatalogue(database, mine, `M${i}`)
    await createRetailer(database, mine.sellerId, { syncId: i === 0 ? 'RET-M' : null, shopSyncId: null })
  }
  await createCatalogue(database, other, 'O1')
  const foreign = await createRetailer(database, other.sellerId, { syncId: 'S1', shopSyncId: 'S2' })
  const key = await credential(database, mine.sellerId, 'api-key')
  const ids: Record<string, number[]> = {
    RETAILER: (await database.sql`select retailer_id as id from seller_retailers`).map((r) => r.id as number),
    SHOP: (await database.sql`select shop_id as id from seller_shops`).map((r) => r.id as number),
    ITEM: (await database.sql`select id from items`).map((r) => r.id as number),
    OFFER: (await database.sql`select id from offers`).map((r) => r.id as number)
  }
  t.ok(ids.RETAILER.includes(foreign.retailerId), 'the other seller\'s records are among the ids sent')
  const base = await listen(app)

  const row = (g: G): unknown => {
    if (coin(g, 4)) return g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.constant(null)))
    const r: Record<string, unknown> = {}
    const type = coin(g, 92) ? pick(g, REFERENCE_TYPES) : g(() => fc.oneof(fc.constantFrom('item', 'SKU', '', ' ITEM'), hostileString, fc.integer()))
    if (!coin(g, 3)) r.type = type
    if (!coin(g, 3)) {
      r.id = coin(g, 85)
        ? pick(g, ids[typeof type === 'string' && Object.hasOwn(ids, type) ? type : 'ITEM'].concat([999_999]))
        : g(() => fc.oneof(fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, '1', null, true), fc.integer(), hostileString))
    }
    if (!coin(g, 3)) {
      r.syncId = coin(g, 80)
        ? (coin(g, 15) ? null : pick(g, POOL))
        : g(() => fc.oneof(hostileString, codeUnits, fc.constantFrom('', 'x'.repeat(200), 'x'.repeat(201), 'a\tb', 'a\u0085b'), fc.jsonValue({ maxDepth: 1 })))
    }
    if (coin(g, 5)) r[pick(g, ['__proto__', 'constructor', 'extra'])] = 1
    return r
  }

  const seen = new Map<string, number>()
  let applied = 0
  let conflicts = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    const kind = g(fc.nat, 99)
    let rows: unknown[] | undefined
    let body: string
    let contentType = 'application/json'
    if (kind < 80) {
      rows = Array.from({ length: g(fc.integer, { min: 1, max: 30 }) }, () => row(g))
      body = JSON.stringify(rows)
    } else if (kind < 86) {
      body = JSON.stringify(g(() => fc.oneof(fc.jsonValue(), fc.constant([]), fc.record({ rows: fc.jsonValue() }))))
    } else if (kind < 94) {
      const text = JSON.stringify([row(g), row(g)])
      body = text.slice(0, g(fc.nat, text.length)) + pick(g, ['', ',', ']]', '}', ' x'])
    } else if (kind < 97) {
      body = `[${'{"type":"ITEM","id":1,"syncId":"x"},'.repeat(2000)}1]`
    } else {
      body = JSON.stringify([row(g)])
      contentType = pick(g, ['text/plain', 'application/octet-stream', ''])
    }
    const before = rows ? await snapshot(database, mine.sellerId) : undefined
    const request: FuzzRequest = {
      method: 'PUT', path: REFERENCES_SYNC_PATH, headers: { 'x-api-key': key, ...(contentType ? { 'content-type': contentType } : {}) }, body
    }
    const res = await send(base, request)
    const problem = responseProblem(res)
    if (problem) throw new Error(`${problem}\n${body.slice(0, 400)}`)
    seen.set(`${res.status} ${String(res.json?.code ?? res.json?.message)}`, (seen.get(`${res.status} ${String(res.json?.code ?? res.json?.message)}`) ?? 0) + 1)
    if (res.status !== 200) return
    if (!rows || !before) {
      // A body that is JSON but from a branch that was not rows is still an array of rows: check only the counts.
      const d = res.json.data
      if (d.inserted + d.updated + d.unchanged + d.failed !== d.received) throw new Error(`counts ${JSON.stringify(d)}`)
      return
    }
    const after = await snapshot(database, mine.sellerId)
    const d = res.json.data
    const fail = (why: string) => { throw new Error(`${why}\nrows ${JSON.stringify(rows).slice(0, 800)}\n→ ${JSON.stringify(d).slice(0, 800)}`) }
    if (d.received !== rows.length) fail('received')
    if (d.failed !== d.errors.length) fail('failed ≠ errors')
    const errorAt = new Map<number, { code: string, error: string }>(d.errors.map((e: any) => [e.index, e]))
    if (errorAt.size !== d.errors.length) fail('an index twice')
    let inserted = 0; let updated = 0; let unchanged = 0
    const targeted = new Set<string>()
    rows.forEach((raw, index) => {
      const check = checkReferenceRow(JSON.parse(JSON.stringify(raw)))
      const error = errorAt.get(index)
      if (check.error) {
        if (!error || error.code !== check.error.code || error.error !== check.error.text) fail(`row ${index}: expected ${check.error.code}`)
        return
      }
      const recordKey = `${check.row.type} ${check.row.id}`
      if (error) {
        if (!['RECORD_NOT_FOUND', 'DUPLICATE_RECORD', 'DUPLICATE_SYNC_ID', 'SYNC_ID_TAKEN'].includes(error.code)) fail(`row ${index}: ${error.code}`)
        if (error.code === 'RECORD_NOT_FOUND' && before.has(recordKey)) fail(`row ${index}: a record of the seller called unknown`)
        // Duplicates within the request are told from the request alone, whatever the id (no leak either way).
        if (error.code === 'SYNC_ID_TAKEN' && !before.has(recordKey)) fail(`row ${index}: an unknown record got ${error.code}`)
        conflicts++
        return
      }
      if (!before.has(recordKey)) fail(`row ${index}: a record not the seller's was applied`)
      targeted.add(recordKey)
      applied++
      if (after.get(recordKey) !== check.row.syncId) fail(`row ${index}: not applied`)
      const was = before.get(recordKey)
      if (was === check.row.syncId) unchanged++
      else if (was === null) inserted++
      else updated++
    })
    if (d.inserted !== inserted || d.updated !== updated || d.unchanged !== unchanged) fail(`counts ${inserted}/${updated}/${unchanged}`)
    for (const [record, value] of after) if (!targeted.has(record) && before.get(record) !== value) fail(`${record} changed without an applied row`)
    const held = new Set<string>()
    for (const [record, value] of after) {
      if (value === null) continue
      const k = `${record.split(' ')[0]} ${value}`
      if (held.has(k)) fail(`two records hold ${k}`)
      held.add(k)
    }
  }), { seed: fuzzSeed(2323), numRuns: fuzzRuns(2000), endOnFailure: true })
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}; rows applied ${applied}, refused by the store ${conflicts}`)
  for (const answer of ['200 Sync IDs synced successfully', '400 INVALID_JSON', '400 NOT_AN_ARRAY', '413 PAYLOAD_TOO_LARGE', '415 UNSUPPORTED_MEDIA_TYPE']) {
    t.ok([...seen.keys()].some((k) => k === answer), `the fuzz reached ${answer}`)
  }
  t.ok(applied > 1000 && conflicts > 100, 'rows were applied and refused')
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})

t.test('deep references sync bodies, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  const { sellerId } = await createSeller(database)
  const headers = { 'x-api-key': await credential(database, sellerId, 'api-key') }
  const base = await listen(app)
  const seen = await assertDeepBodies(base, [
    { method: 'PUT', path: REFERENCES_SYNC_PATH, headers, template: `[{"type":"retailer","id":1,"syncId":${DEEP_SLOT}}]` },
    { method: 'PUT', path: REFERENCES_SYNC_PATH, headers, template: DEEP_SLOT }
  ], fuzzSeed(6403), 16)
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})
