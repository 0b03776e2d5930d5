import t from 'tap'
import { RequestError } from '../../src/errors.js'
import { BYTES_PER_TURN, JsonArrayScanner, readJsonArray, type JsonArrayBody } from '../../src/shipments/json-array-reader.js'
import { JsonNumber, jsonValue, parseJsonKeepingNumberText } from '../../src/shipments/json-number-text.js'
import { prepareSyncBatch } from '../../src/shipments/sync-batch.js'
import { checkOutstandingShipmentRow } from '../../src/shipments/sync-row.js'

/** A parsed value with every marked number turned back into a JS number, for comparison with JSON.parse. */
function decoded (value: unknown): unknown {
  const v = jsonValue(value)
  if (v instanceof JsonNumber) return Number(v.text)
  if (Array.isArray(v)) return v.map(decoded)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, decoded(x)]))
  return v
}

type Outcome = { kind: 'invalid' } | { kind: 'not-array' } | { kind: 'array', elements: unknown[] }

function expected (doc: string): Outcome {
  let parsed: unknown
  try { parsed = JSON.parse(doc) } catch { return { kind: 'invalid' } }
  return Array.isArray(parsed) ? { kind: 'array', elements: parsed } : { kind: 'not-array' }
}

function scan (chunks: string[]): Outcome {
  const elements: unknown[] = []
  const scanner = new JsonArrayScanner((value, index) => { elements[index] = decoded(value) })
  for (const c of chunks) scanner.push(c)
  let body: JsonArrayBody
  try { body = scanner.end() } catch (err) {
    if (err instanceof RequestError.InvalidJson) return { kind: 'invalid' }
    throw err
  }
  if (body.kind === 'not-array') return body
  if (body.count !== elements.length) throw new Error('count differs from the elements emitted')
  return { kind: 'array', elements }
}

const corpus = [
  '[]', ' [ ] ', '\n[\n]\n', '[1]', '[1,2,3]', '[ 1 , 2 ]', '[\n1\n,\n2\n]', '[-0.5e+3, 10.500, 0, -0, 1E-7]',
  '[{"a":"]"}]', '[{"a":"\\"]"},{"b":[1,[2,{"c":"}"}]]}]', '["\\\\", "\\\\\\"", "\\\\\\\\"]', '[" , "]', '["[", "{", "}"]',
  '[true,false,null]', '["ü€😀", {"k":"日本"}]', '[{"a":1e5,"b":-0.0,"c":1E-7}]', '[[],{},[[]],{"a":{}}]',
  '[ {"a" : 1 } , { "b" : "2" } ]', '[{"a":"\\u0000x"}]', '["\\u0000", "\\u0000\\u0000", "\\u00001"]', '[{"retailerSyncId":"R","q":12.5}]',
  '[{"a":1,"a":2}]', '["\\ud83d\\ude00", "\\/"]',
  // invalid
  '[', '[1', '[1,', '[1,]', '[,]', '[,1]', '[1 2]', '[{]', '[{"a"}]', '[}]', '[1]]', '[1] [2]', '[1]x', '[01]', '[1.]',
  '[.5]', '[+1]', '[-]', '["a]', '["\\u12"]', '["\\x"]', '[tru]', '[nul]', '["\t"]', '[1,{"a":[}]', '[{"a":1}}', '[]]',
  '{', '', '  ', '{"a":1} x', '[{"a":"b"]', '[1e]', '[1e+]', '[--1]', '[NaN]', '[Infinity]', "['a']",
  // valid, not an array
  '{"a":[1,2]}', '"str"', '42', '-1.5', 'null', 'true', '{}', ' {"a":"[1]"} '
]

t.test('the scanner agrees with JSON.parse, however the body is cut into chunks', async (t) => {
  for (const doc of corpus) {
    const want = expected(doc)
    t.same(scan([doc]), want, `whole: ${JSON.stringify(doc)}`)
    t.same(scan([...doc]), want, `one character at a time: ${JSON.stringify(doc)}`)
    for (let cut = 1; cut < doc.length; cut++) {
      const got = scan([doc.slice(0, cut), doc.slice(cut)])
      if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`cut at ${cut}: ${JSON.stringify(doc)}`, { got, want })
    }
  }
})

t.test('readJsonArray: bytes split inside a multi-byte character, the byte limit, draining after an error', async (t) => {
  const bytes = (text: string, size: number) => {
    const b = Buffer.from(text)
    return (async function * () { for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size) })()
  }
  const doc = '[{"retailerSyncId":"日本😀","q":1.50},"€"]'
  const seen: unknown[] = []
  t.same(await readJsonArray(bytes(doc, 1), 1000, (v) => seen.push(decoded(v))), { kind: 'array', count: 2 })
  t.same(seen, JSON.parse(doc))
  t.same(await readJsonArray((async function * () { yield '[1,'; yield '2]' })(), 100, () => {}), { kind: 'array', count: 2 }, 'string chunks')

  await t.rejects(readJsonArray(bytes('[1,2,3,4,5]', 2), 10, () => {}), new RequestError.PayloadTooLarge(10))
  await t.rejects(readJsonArray(bytes('[1,2,3,4,5]', 20), 10, () => {}), RequestError.PayloadTooLarge)
  t.same(await readJsonArray(bytes('[1,2,3,4]', 2), 9, () => {}), { kind: 'array', count: 4 }, 'exactly at the limit')

  let emitted = 0
  let read = 0
  const counting = (async function * () { for (const c of ['[1,', '}', ',2,3', ']']) { read++; yield Buffer.from(c) } })()
  await t.rejects(readJsonArray(counting, 100, () => { emitted++ }), RequestError.InvalidJson)
  t.equal(read, 4, 'the rest of the body is read after a syntax error')
  t.equal(emitted, 1, 'but not parsed')
})

t.test('readJsonArray: one large chunk is read in slices, other callbacks running in between', async (t) => {
  // 3-byte characters, so that slice boundaries (BYTES_PER_TURN) fall inside characters too.
  const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, syncId: `€${i}€日本` }))
  const body = Buffer.from(JSON.stringify(rows))
  t.ok(body.length > 30 * BYTES_PER_TURN, `${body.length} bytes`)
  let turns = 0
  let counting = true
  const count = (): void => { turns++; if (counting) setImmediate(count) }
  setImmediate(count)
  const seen: unknown[] = []
  const oneChunk = (async function * () { yield body })()
  const result = await readJsonArray(oneChunk, body.length, (v) => seen.push(v), JSON.parse)
  counting = false
  t.same(result, { kind: 'array', count: rows.length })
  t.same(seen, rows, 'every element intact, characters cut between slices included')
  const slices = Math.floor(body.length / BYTES_PER_TURN)
  t.ok(turns >= slices - 1, `other callbacks ran ${turns} times while ${body.length} bytes were read`)
})

t.test('numbers keep their source text; strings stay strings', async (t) => {
  const parsed = parseJsonKeepingNumberText('[1, -0.5e+3, 10.500, 123456789012345678901234567890, "10.5", "\\u0000x", "\\u00001", {"n": 0.1000000000000000000001}]') as unknown[]
  const values = parsed.map(jsonValue)
  t.same(values.slice(0, 4).map((v) => (v as JsonNumber).text), ['1', '-0.5e+3', '10.500', '123456789012345678901234567890'])
  t.ok(values.slice(0, 4).every((v) => v instanceof JsonNumber))
  t.same(values.slice(4, 7), ['10.5', '\u0000x', '\u00001'], 'genuine strings, even one that starts with NUL and a digit')
  t.equal((jsonValue((parsed[7] as Record<string, unknown>).n) as JsonNumber).text, '0.1000000000000000000001')
  t.equal(parseJsonKeepingNumberText('"plain"'), 'plain', 'no numbers: JSON.parse as is')
  t.throws(() => parseJsonKeepingNumberText('[-]'), SyntaxError)
  t.throws(() => parseJsonKeepingNumberText('[01]'), SyntaxError)
})

t.test('rows: plain JS values (no number text) are accepted too', async (t) => {
  t.same(checkOutstandingShipmentRow({ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 0.5 }),
    { row: { retailerSyncId: 'R', shopSyncId: null, offerSyncId: 'O', outstandingQuantity: '0.5' } })
  t.same(checkOutstandingShipmentRow({ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: -2 }), { error: { code: 'INVALID_QUANTITY', text: 'outstandingQuantity must not be negative' } })
  t.same(checkOutstandingShipmentRow({ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: Number.NaN }), { error: { code: 'INVALID_QUANTITY', text: 'outstandingQuantity must be a finite number' } })
  t.same(checkOutstandingShipmentRow({ retailerSyncId: 'R', shopSyncId: undefined, offerSyncId: 'O', outstandingQuantity: '1' }).row?.shopSyncId, null)
})

t.test('batch: one row per key (the last), sorted by key, columns split back exactly', async (t) => {
  const rows = [
    { retailerSyncId: 'B', shopSyncId: 'S', offerSyncId: 'O', outstandingQuantity: 1 },
    { retailerSyncId: 'A', shopSyncId: 'S\u0001', offerSyncId: 'O\u0002', outstandingQuantity: 2 },
    { retailerSyncId: 'A', shopSyncId: null, offerSyncId: 'Z', outstandingQuantity: 3 },
    { retailerSyncId: 'A\u0002', offerSyncId: 'O', outstandingQuantity: 4 },
    { retailerSyncId: 'A', shopSyncId: '\u0001', offerSyncId: 'O', outstandingQuantity: 5 },
    { retailerSyncId: 'B', shopSyncId: 'S', offerSyncId: 'O', outstandingQuantity: 6 },
    { retailerSyncId: 'AB', offerSyncId: 'O', outstandingQuantity: 7 },
    { retailerSyncId: 'A', offerSyncId: 'A', outstandingQuantity: 8 },
    { retailerSyncId: '', offerSyncId: 'A', outstandingQuantity: 9 }
  ]
  const batch = prepareSyncBatch(rows)
  const keys = batch.retailerSyncIds
    .map((r, i) => [r, batch.shopSyncIds[i], batch.offerSyncIds[i], batch.quantities[i]])
  t.same(keys, [
    ['A', null, 'A', '8'],
    ['A', null, 'Z', '3'],
    ['A', '\u0001', 'O', '5'],
    ['A', 'S\u0001', 'O\u0002', '2'],
    ['A\u0002', null, 'O', '4'],
    ['AB', null, 'O', '7'],
    ['B', 'S', 'O', '6']
  ])
  t.equal(batch.received, 9)
  t.equal(batch.duplicates, 1)
  t.same(batch.errors, [{ index: 8, error: 'retailerSyncId must be a non-empty string of at most 200 characters', code: 'INVALID_SYNC_ID' }])
})
