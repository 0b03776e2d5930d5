import t, { type Test } from 'tap'
import { choiceKnob, listKnob, numberKnob, numberListKnob } from '../../bench/lib/knobs.js'

/*
 * bench/lib/knobs.ts: the benches' settings from environment variables. Unset or empty gives the default;
 * anything else must be a value the bench can use, or it stops at once naming the variable (a mistyped
 * BENCH_ROUNDS=abc used to be NaN: zero rounds, without a word).
 */

const NAME = 'BENCH_KNOBS_TEST'

/** process.env[NAME] = value (undefined: unset) for this test only. */
function env (t: Test, value: string | undefined): void {
  const before = process.env[NAME]
  if (value === undefined) delete process.env[NAME]
  else process.env[NAME] = value
  t.teardown(() => {
    if (before === undefined) delete process.env[NAME]
    else process.env[NAME] = before
  })
}

const COUNT = { min: 1, integer: true }

t.test('numberKnob: unset or empty gives the fallback', async (t) => {
  env(t, undefined)
  t.equal(numberKnob(NAME, 6, COUNT), 6, 'unset')
  t.equal(numberKnob(NAME, undefined, COUNT), undefined, 'unset, no fallback: undefined (the caller computes one)')
  process.env[NAME] = ''
  t.equal(numberKnob(NAME, 6, COUNT), 6, 'empty')
  t.equal(numberKnob(NAME, 17, { above: 0 }), 17, 'empty, a computed fallback')
})

t.test('numberKnob: valid values', async (t) => {
  const cases: Array<[string, Parameters<typeof numberKnob>[2], number]> = [
    ['10', COUNT, 10],
    [' 12 ', COUNT, 12],
    ['1', COUNT, 1],
    ['100000', COUNT, 100_000],
    ['1e3', COUNT, 1000],
    ['0', { min: 0, integer: true }, 0],
    ['0.5', { above: 0 }, 0.5],
    ['2.5', {}, 2.5],
    ['0', {}, 0],
    ['0', { min: 0, max: 1 }, 0],
    ['1', { min: 0, max: 1 }, 1],
    ['0.25', { min: 0, max: 1 }, 0.25]
  ]
  for (const [value, rule, expected] of cases) {
    process.env[NAME] = value
    t.equal(numberKnob(NAME, 99, rule), expected, `${JSON.stringify(value)} with ${JSON.stringify(rule)}`)
  }
  env(t, '7')
  t.equal(numberKnob(NAME, undefined, COUNT), 7, 'set, no fallback')
})

t.test('numberKnob: a bad value throws, naming the variable, the value and what is expected', async (t) => {
  env(t, undefined)
  const cases: Array<[string, Parameters<typeof numberKnob>[2], string]> = [
    ['abc', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "abc"'],
    ['1e400', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "1e400"'],
    ['Infinity', { above: 0 }, 'BENCH_KNOBS_TEST must be a number > 0, got "Infinity"'],
    ['-Infinity', {}, 'BENCH_KNOBS_TEST must be a number ≥ 0, got "-Infinity"'],
    ['NaN', {}, 'BENCH_KNOBS_TEST must be a number ≥ 0, got "NaN"'],
    ['-1', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "-1"'],
    ['0', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "0"'],
    ['2.5', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "2.5"'],
    ['  ', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "  "'],
    ['10s', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "10s"'],
    ['1,000', COUNT, 'BENCH_KNOBS_TEST must be an integer ≥ 1, got "1,000"'],
    ['0', { above: 0 }, 'BENCH_KNOBS_TEST must be a number > 0, got "0"'],
    ['-0.5', {}, 'BENCH_KNOBS_TEST must be a number ≥ 0, got "-0.5"'],
    ['1.5', { min: 0, max: 1 }, 'BENCH_KNOBS_TEST must be a number ≥ 0 and ≤ 1, got "1.5"'],
    ['999', { min: 1000, integer: true }, 'BENCH_KNOBS_TEST must be an integer ≥ 1000, got "999"']
  ]
  for (const [value, rule, message] of cases) {
    process.env[NAME] = value
    t.throws(() => numberKnob(NAME, 6, rule), { message }, JSON.stringify(value))
    t.throws(() => numberKnob(NAME, undefined, rule), { message }, `${JSON.stringify(value)}, no fallback`)
  }
})

t.test('numberListKnob: comma-separated numbers, each checked', async (t) => {
  const rule = { min: 1, max: 100_000, integer: true }
  env(t, undefined)
  t.same(numberListKnob(NAME, [1000, 10_000], rule), [1000, 10_000], 'unset')
  process.env[NAME] = ''
  t.same(numberListKnob(NAME, [1000, 10_000], rule), [1000, 10_000], 'empty')
  process.env[NAME] = '1000,10000'
  t.same(numberListKnob(NAME, [5], rule), [1000, 10_000])
  process.env[NAME] = ' 1, 100 ,1000 '
  t.same(numberListKnob(NAME, [5], rule), [1, 100, 1000], 'spaces around the items')
  process.env[NAME] = '7'
  t.same(numberListKnob(NAME, [5], rule), [7], 'one item')
  process.env[NAME] = '0.5,2'
  t.same(numberListKnob(NAME, [5]), [0.5, 2], 'the default rule: numbers ≥ 0')
  for (const value of ['1000,abc', '1000,,10000', '1000,', '0,10', '1000,200000', '1.5', ' ', '1e400']) {
    process.env[NAME] = value
    t.throws(() => numberListKnob(NAME, [5], rule), {
      message: `BENCH_KNOBS_TEST must be a comma-separated list of integers ≥ 1 and ≤ 100000, got ${JSON.stringify(value)}`
    }, JSON.stringify(value))
  }
  process.env[NAME] = '1,x'
  t.throws(() => numberListKnob(NAME, [5], { above: 0 }), {
    message: 'BENCH_KNOBS_TEST must be a comma-separated list of numbers > 0, got "1,x"'
  })
})

t.test('listKnob: whitespace-separated words', async (t) => {
  env(t, undefined)
  t.same(listKnob(NAME), [], 'unset: none')
  process.env[NAME] = ''
  t.same(listKnob(NAME), [], 'empty: none')
  process.env[NAME] = '   '
  t.same(listKnob(NAME), [], 'blank: none')
  process.env[NAME] = '--max-semi-space-size=64'
  t.same(listKnob(NAME), ['--max-semi-space-size=64'])
  process.env[NAME] = ' --max-semi-space-size=64 \t --no-opt\n'
  t.same(listKnob(NAME), ['--max-semi-space-size=64', '--no-opt'])
})

t.test('choiceKnob: one of the choices, exactly', async (t) => {
  const choices = ['wrk', 'autocannon'] as const
  env(t, undefined)
  t.equal(choiceKnob(NAME, choices), undefined, 'unset: the caller decides')
  process.env[NAME] = ''
  t.equal(choiceKnob(NAME, choices), undefined, 'empty: the caller decides')
  process.env[NAME] = 'wrk'
  t.equal(choiceKnob(NAME, choices), 'wrk')
  process.env[NAME] = 'autocannon'
  t.equal(choiceKnob(NAME, choices), 'autocannon')
  for (const value of ['autocanon', 'WRK', ' wrk', 'wrk,autocannon']) {
    process.env[NAME] = value
    t.throws(() => choiceKnob(NAME, choices), {
      message: `BENCH_KNOBS_TEST must be one of wrk, autocannon, got ${JSON.stringify(value)}`
    }, JSON.stringify(value))
  }
})
