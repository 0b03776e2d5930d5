import { nextTurn } from '../event-loop-turn.js'

/*
 * A large array parameter as PostgreSQL's array literal text, written with turns of the event loop in
 * between. postgres.js serializes an array parameter when the statement is bound, inside its socket's data
 * handler and in one go: the 50,000 sync IDs of a references sync held the event loop 15–25 ms there, and
 * every orders read of the process waited behind it (bench/results/2026-11-27-references-sync.md, fourth round). A
 * string parameter is sent as it is (postgres.js passes a non-array through its array serializer), so the
 * text built here is what PostgreSQL reads for `$n::int[]` or `$n::text[]`.
 */

/** Elements written between two turns (about a millisecond). */
const ELEMENTS_PER_TURN = 8192

/** `{1,2,3}` for integers (ids): no quoting needed, JavaScript writes them as PostgreSQL reads them. */
export async function intArrayLiteral (values: readonly number[]): Promise<string> {
  return literal(values, (value) => {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${String(value)}`)
    return String(value)
  })
}

/**
 * `{"a","b \"c\""}` for texts: every element quoted, backslash and quote escaped (array_in's rules, the
 * ones postgres.js follows), so commas, braces, spaces and the word NULL stay texts. A null is NULL.
 */
export async function textArrayLiteral (values: ReadonlyArray<string | null>): Promise<string> {
  return literal(values, (value) =>
    value === null ? 'NULL' : `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
}

async function literal<T> (values: readonly T[], element: (value: T) => string): Promise<string> {
  const parts: string[] = []
  for (let start = 0; start < values.length; start += ELEMENTS_PER_TURN) {
    if (start > 0) await nextTurn()
    parts.push(values.slice(start, start + ELEMENTS_PER_TURN).map(element).join(','))
  }
  return `{${parts.join(',')}}`
}
