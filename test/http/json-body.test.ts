import t from 'tap'
import fc from 'fast-check'
import { isExactNumber, MAX_JSON_DEPTH, pathAt, scanJson } from '../../src/http/json-body.js'
import { stringifyJson, stringifyWithoutRecursion } from '../../src/http/stringify-deep.js'
import { JsonArrayScanner } from '../../src/shipments/json-array-reader.js'
import { RequestError } from '../../src/errors.js'

/*
 * The scan every JSON body goes through before it is parsed (http/json-body.ts): the depth bound, exact
 * numbers and the path of a refused one; and the fingerprint's stringify that a deep value cannot break.
 * Timing is not tested here: bench/json-body measures it.
 */

const nested = (levels: number, inner = '1'): string => '['.repeat(levels) + inner + ']'.repeat(levels)

/** Depth of a parsed JSON value, without recursion. */
function depthOf (value: unknown): number {
  let deepest = 0
  const todo: Array<[unknown, number]> = [[value, 0]]
  while (todo.length > 0) {
    const [v, d] = todo.pop()!
    if (v === null || typeof v !== 'object') { deepest = Math.max(deepest, d); continue }
    deepest = Math.max(deepest, d + 1)
    for (const child of Object.values(v)) todo.push([child, d + 1])
  }
  return deepest
}

t.test('depth: 64 levels pass, the 65th bracket is refused where it stands; strings do not count', async (t) => {
  t.equal(MAX_JSON_DEPTH, 64)
  t.same(scanJson(nested(64)), { kind: 'ok' })
  t.same(scanJson(nested(65)), { kind: 'too-deep', at: 64 })
  t.same(scanJson(`{"a":${nested(63)}}`), { kind: 'ok' })
  t.same(scanJson(`{"a":${nested(64)}}`), { kind: 'too-deep', at: 5 + 63 })
  t.same(scanJson(`{"a":"${'['.repeat(1000)}","b":"\\"[[[","c":"\\\\"}`), { kind: 'ok' }, 'brackets and escaped quotes inside strings')
  t.same(scanJson(nested(400_000)), { kind: 'too-deep', at: 64 }, 'a 0.8 MB deep body stops at its 65th bracket')
  t.same(scanJson(`[${'[],'.repeat(100_000)}[]]`), { kind: 'ok' }, 'many siblings are not depth')
  t.same(scanJson(nested(63), { outerDepth: 1 }), { kind: 'ok' })
  t.same(scanJson(nested(64), { outerDepth: 1 }), { kind: 'too-deep', at: 63 })
  t.same(scanJson('"unterminated [[['), { kind: 'ok' }, 'syntax is JSON.parse\'s to judge')
})

t.test('depth agrees with the parsed value\'s depth (fixed seed)', async (t) => {
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 0, max: 90 }), (value, wrap) => {
    const text = '['.repeat(wrap) + JSON.stringify(value) + ']'.repeat(wrap)
    const depth = depthOf(JSON.parse(text))
    return (scanJson(text).kind === 'ok') === (depth <= MAX_JSON_DEPTH)
  }), { seed: 6464, numRuns: 500 })
  t.pass('500 values')
})

t.test('exact numbers: values are compared, not texts', async (t) => {
  for (const exact of ['0', '-0', '0.10', '1.0', '1e2', '1E+2', '-2.50', '0.1', '123456789012345', '9007199254740992',
    '0.30000000000000004', '1.7976931348623157e308', '5e-324', '100e-2', '0.000001000', '1e21', '0e999999999999999999']) {
    t.ok(isExactNumber(exact), exact)
  }
  for (const inexact of ['0.1000000000000000000001', '12345678901234567890', '9007199254740993', '1e400', '-1e400',
    '1e-400', '0.30000000000000001', '99.999999999999999999', '1'.repeat(150)]) {
    t.notOk(isExactNumber(inexact), inexact)
  }
  t.same(scanJson('[1, 2.5, 0.1000000000000000000001, 3]', { exactNumbers: true }),
    { kind: 'inexact', at: 9, number: '0.1000000000000000000001' })
  t.same(scanJson('[0.1000000000000000000001]'), { kind: 'ok' }, 'numbers are not looked at unless asked')
  t.same(scanJson('{"a":"12345678901234567890"}', { exactNumbers: true }), { kind: 'ok' }, 'a numeric string is a string')
})

t.test('every double\'s own text is exact; 18 or more significant digits never are (fixed seed)', async (t) => {
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => isExactNumber(JSON.stringify(d))),
    { seed: 1717, numRuns: 2000 })
  fc.assert(fc.property(fc.stringMatching(/^[1-9]\d{17,30}$/), fc.nat(30), (digits, point) => {
    const text = point > 0 && point < digits.length ? `${digits.slice(0, point)}.${digits.slice(point)}` : digits
    return digits.endsWith('0') || !isExactNumber(text)
  }), { seed: 1818, numRuns: 1000 })
  t.pass('properties hold')
})

t.test('the path of a value names rows, keys and indexes', async (t) => {
  const text = '[{"a":1},{"skus":[{"id":2},{"offers":[{"price":7}]}], "odd key":[3]}]'
  t.equal(pathAt(text, text.indexOf('7')), 'rows[1].skus[1].offers[0].price')
  t.equal(pathAt(text, text.indexOf('3')), 'rows[1]["odd key"][0]')
  t.equal(pathAt('{"amount":5}', 10), 'amount')
  t.equal(pathAt('5', 0), 'the body')
  const long = `{"${'k'.repeat(500)}":1}`
  t.ok(pathAt(long, long.length - 2).length < 80, 'a long key is cut short')
})

t.test('the fingerprint\'s stringify: JSON.stringify\'s text, and a deep value does not throw', async (t) => {
  fc.assert(fc.property(fc.jsonValue(), (value) => stringifyWithoutRecursion(value) === JSON.stringify(value)),
    { seed: 2424, numRuns: 1000 })
  t.equal(stringifyWithoutRecursion({ a: undefined, b: [undefined, () => 1], c: 'x' }), '{"b":[null,null],"c":"x"}')
  let deep: unknown = 1
  for (let i = 0; i < 200_000; i++) deep = i % 2 === 0 ? [deep] : { k: deep }
  t.throws(() => JSON.stringify(deep), RangeError, 'JSON.stringify itself overflows on it')
  const text = stringifyJson(deep)
  t.equal(text.length, 100_000 * 2 + 100_000 * 6 + 1, 'every level written')
  t.ok(text.startsWith('{"k":[{"k":['))
})

t.test('a streamed array: an element may nest 63 levels (the array is the 64th), one more is refused', async (t) => {
  const read = (text: string) => {
    const rows: unknown[] = []
    const scanner = new JsonArrayScanner((row) => rows.push(row), JSON.parse)
    for (let i = 0; i < text.length; i += 7) scanner.push(text.slice(i, i + 7))
    return { body: scanner.end(), rows }
  }
  t.same(read(`[${nested(63)}, 2]`).body, { kind: 'array', count: 2 })
  t.throws(() => read(`[${nested(64)}, 2]`), new RequestError.JsonTooDeep(64))
  t.throws(() => read(`[1, ${nested(400_000)}]`), new RequestError.JsonTooDeep(64))
  t.throws(() => read(`{"a":${nested(400_000)}}`), new RequestError.JsonTooDeep(64), 'a body that is not an array too')
  t.same(read(`{"a":${nested(10)}}`).body, { kind: 'not-array' })
  t.throws(() => read('[1, [2'), new RequestError.InvalidJson(), 'invalid JSON is still that')
})
