import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import { intArrayLiteral, textArrayLiteral } from '../../src/db/array-literal.js'
import { testDatabase, type TestDatabase } from '../helpers/build.js'
import { fuzzRuns, fuzzSeed } from '../helpers/fuzz.js'

/*
 * The array literals the references sync sends instead of postgres.js's array parameters: PostgreSQL must
 * read back exactly the values given, whatever the texts hold, and a large array must be written with
 * turns of the event loop in between (the reason they exist).
 */

/** Texts PostgreSQL can store (no NUL; whole code points), with the array syntax's own characters. */
const storableText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).filter((s) => !s.includes('\u0000')) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('', ' ', 'NULL', 'null', '"', '\\', '\\"', '"\\', '{', '}', ',', '{}', '{"a","b"}',
      'a,b', ' lead', 'trail ', '\t\n\r', "it's", '\u2028', '\ud83d\udce6', 'ÄÖÜ', '\\N', 'a"b\\c{d}e,f')
  }
)

/** The array as PostgreSQL holds it, as JSON: postgres.js reads a NULL element of a text[] as "NULL". */
const asJson = async (sql: TestDatabase['sql'], parameter: unknown, type: 'text[]' | 'int[]'): Promise<unknown> => {
  const [row] = await sql.unsafe(`select array_to_json($1::${type})::text as a`, [parameter as string])
  return JSON.parse(row.a as string)
}

t.test('texts and nulls read back exactly, as postgres.js\'s own array parameter would', async (t) => {
  const db = await testDatabase(t)
  const arrays = fc.array(fc.option(storableText, { nil: null, freq: 8 }), { maxLength: 40 })
  await fc.assert(fc.asyncProperty(arrays, async (values) => {
    assert.deepStrictEqual(await asJson(db.sql, await textArrayLiteral(values), 'text[]'), values)
    assert.deepStrictEqual(await asJson(db.sql, db.sql.array(values as string[], 25), 'text[]'), values)
  }), { numRuns: fuzzRuns(600), seed: fuzzSeed(4242) })
  t.pass('every generated array read back as it was')
})

t.test('integers read back exactly; anything else is refused before it is sent', async (t) => {
  const db = await testDatabase(t)
  const arrays = fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 40 })
  await fc.assert(fc.asyncProperty(arrays, async (values) => {
    assert.deepStrictEqual(await asJson(db.sql, await intArrayLiteral(values), 'int[]'), values)
  }), { numRuns: fuzzRuns(300), seed: fuzzSeed(4243) })
  t.pass('every generated array read back as it was')
  for (const bad of [1.5, NaN, Infinity, 2 ** 53, -0.1]) {
    await t.rejects(intArrayLiteral([1, bad]), TypeError, String(bad))
  }
})

t.test('a large array keeps its order and lets other callbacks run while it is written', async (t) => {
  const db = await testDatabase(t)
  const values = Array.from({ length: 50_000 }, (_, i) => `SKU-"${i}"\\${i % 7 === 0 ? ',' : ''}`)
  let turns = 0
  let counting = true
  const count = (): void => { turns++; if (counting) setImmediate(count) }
  setImmediate(count)
  const literal = await textArrayLiteral(values)
  counting = false
  t.ok(turns >= 5, `other callbacks ran ${turns} times while 50,000 texts were written`)
  const [row] = await db.sql`select cardinality(${literal}::text[]) as n, (${literal}::text[])[1] as first,
    (${literal}::text[])[50000] as last, (${literal}::text[])[8193] as across`
  t.same(row, { n: 50_000, first: values[0], last: values[49_999], across: values[8192] })
  t.equal(await textArrayLiteral([]), '{}')
  t.equal(await intArrayLiteral([]), '{}')
})
