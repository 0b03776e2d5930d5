/*
 * The benches' knobs: settings read from environment variables (BENCH_ROUNDS=10 npm run bench:traces).
 * Unset or empty, a knob takes its default; set, it must be what the bench can use, else the bench stops at
 * once with an error naming the variable, the value and what is expected. (Number('abc') is NaN: a
 * mistyped count used to run zero rounds, or loop oddly, without a word.)
 */

export interface NumberRule {
  /** Lowest value allowed (inclusive); 0 unless `above` is given. */
  min?: number
  /** A value must be greater than this (exclusive): `above: 0` for a duration or a rate. */
  above?: number
  /** Highest value allowed (inclusive). */
  max?: number
  /** Whole numbers only (counts, sizes). */
  integer?: boolean
}

/** "an integer ≥ 1", "a number > 0", "a number ≥ 0 and ≤ 1"; `plural` for a list's items. */
function describe (rule: NumberRule, plural = false): string {
  const kind = rule.integer ? (plural ? 'integers' : 'an integer') : (plural ? 'numbers' : 'a number')
  const bounds = [
    ...(rule.above !== undefined ? [`> ${rule.above}`] : []),
    ...(rule.min !== undefined || rule.above === undefined ? [`≥ ${rule.min ?? 0}`] : []),
    ...(rule.max !== undefined ? [`≤ ${rule.max}`] : [])
  ]
  return `${kind} ${bounds.join(' and ')}`
}

/** `text` as a number that keeps `rule`, or undefined. Blank text is no number (Number('  ') is 0). */
function parse (text: string, rule: NumberRule): number | undefined {
  const trimmed = text.trim()
  if (trimmed === '') return undefined
  const n = Number(trimmed)
  if (!Number.isFinite(n)) return undefined
  if (rule.integer && !Number.isInteger(n)) return undefined
  if (rule.above !== undefined && !(n > rule.above)) return undefined
  if ((rule.min !== undefined || rule.above === undefined) && n < (rule.min ?? 0)) return undefined
  if (rule.max !== undefined && n > rule.max) return undefined
  return n
}

/**
 * The number in process.env[name]; unset or empty: `fallback` (which may be computed, or undefined for
 * "not given": `numberKnob('BENCH_RATE', undefined, …) ?? measured`). Throws on anything else that is not a
 * finite number keeping `rule` (by default any number ≥ 0).
 */
export function numberKnob<F extends number | undefined> (
  name: string, fallback: F, rule: NumberRule = {}
): number | F {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = parse(raw, rule)
  if (n === undefined) throw new Error(`${name} must be ${describe(rule)}, got ${JSON.stringify(raw)}`)
  return n
}

/** A comma-separated list of numbers ("1000,10000"), each keeping `rule`; unset or empty: `fallback`. */
export function numberListKnob (name: string, fallback: number[], rule: NumberRule = {}): number[] {
  return numberList(name, process.env[name], fallback, rule)
}

/** `raw` (from `name`: a variable, or a command-line argument) read as numberListKnob reads a variable. */
export function numberList (
  name: string, raw: string | undefined, fallback: number[], rule: NumberRule = {}
): number[] {
  if (raw === undefined || raw === '') return fallback
  const numbers = raw.split(',').map((item) => parse(item, rule))
  if (numbers.some((n) => n === undefined)) {
    throw new Error(`${name} must be a comma-separated list of ${describe(rule, true)}, got ${JSON.stringify(raw)}`)
  }
  return numbers as number[]
}

/** Whitespace-separated words (node flags: "--max-semi-space-size=64 --no-opt"); unset or empty: none. */
export function listKnob (name: string): string[] {
  return (process.env[name] ?? '').split(/\s+/).filter(Boolean)
}

/** One of `choices`, exactly; unset or empty: undefined (the bench's own default). */
export function choiceKnob<C extends string> (name: string, choices: readonly C[]): C | undefined {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return undefined
  if (!(choices as readonly string[]).includes(raw)) {
    throw new Error(`${name} must be one of ${choices.join(', ')}, got ${JSON.stringify(raw)}`)
  }
  return raw as C
}
