import fc from 'fast-check'
import t from 'tap'
import { testDatabase } from '../helpers/build.js'

/*
 * oxs_js_number (migration 0006): a double written by PostgreSQL exactly as JavaScript writes it, the
 * base of answers PostgreSQL builds whole. Checked on the edges of both notations and on random doubles.
 */

const EDGES = [
  0, -0, 1, -1, 0.1, 0.2, 0.1 + 0.2, 100, 15165.64,
  1e14, 1e15, 123456789012345680, 999999999999999900000, 1e21, 1e22, 1.5e21,
  0.0001, 0.00001, 0.000001, 0.0000001, 1.5e-7, 1.234e-6, 5e-324,
  Number.MIN_VALUE, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2, -123.456, 1 / 3, 2 / 3, 1e-300, 1.7976931348623157e308, 47.53, 0.30000000000000004
]

t.test('oxs_js_number writes every double as String(n) does', async (t) => {
  const database = await testDatabase(t)
  const check = async (values: number[]): Promise<string[]> => {
    const rows = await database.sql`select oxs_js_number(v) as text from unnest(${values.map(String)}::float8[]) with ordinality u(v, i) order by i`
    return values.flatMap((v, i) => rows[i]!.text === String(v) ? [] : [`${String(v)} → ${rows[i]!.text}`])
  }
  t.same(await check(EDGES), [], 'the edges')
  const doubles = fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { seed: 20261124, numRuns: 20_000 })
  const scaled = fc.sample(
    fc.tuple(fc.integer({ min: -999_999, max: 999_999 }), fc.integer({ min: -12, max: 24 }))
      .map(([m, e]) => m * 10 ** e),
    { seed: 7, numRuns: 10_000 }
  )
  const mismatches = [...await check(doubles), ...await check(scaled)]
  t.same(mismatches.slice(0, 20), [], '30,000 random doubles, any exponent and money-like ones')
  const [nulls] = await database.sql`select oxs_js_number(null) is null as is_null`
  t.ok(nulls!.is_null, 'strict: null in, null out')
})

t.test('money and quantities (numeric(14,2), numeric(14,3)): trim_scale writes what String(Number(text)) writes', async (t) => {
  const database = await testDatabase(t)
  const decimals = (scale: number) => fc.sample(fc.tuple(
    fc.bigInt({ min: -(10n ** 14n) + 1n, max: 10n ** 14n - 1n }), fc.integer({ min: 0, max: 14 })
  ).map(([n, cut]) => {
    // Any magnitude within the type: 14 digits at most, `scale` of them after the point.
    const digits = (n < 0n ? -n : n).toString().slice(0, 14 - cut) || '0'
    const padded = digits.padStart(scale + 1, '0')
    return `${n < 0n ? '-' : ''}${padded.slice(0, padded.length - scale)}.${padded.slice(padded.length - scale)}`
  }), { seed: 11, numRuns: 10_000 })
  for (const [scale, values] of [[2, [...decimals(2), '0.00', '-0.01', '999999999999.99', '100.00', '0.10']], [3, [...decimals(3), '0.001', '-99999999999.999', '1.500']]] as const) {
    const rows = await database.sql`select trim_scale(${database.sql.unsafe(`v::numeric(14, ${scale})`)})::text as text from unnest(${[...values]}::text[]) with ordinality u(v, i) order by i`
    const mismatches = values.flatMap((v, i) => rows[i]!.text === String(Number(v)) ? [] : [`${v} → ${rows[i]!.text} (JS ${String(Number(v))})`])
    t.same(mismatches.slice(0, 10), [], `numeric(14,${scale}): ${values.length} values`)
  }
})
