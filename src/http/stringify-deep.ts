/*
 * JSON.stringify recurses: a value nested some thousands of levels deep throws RangeError (the stack),
 * which turned an Idempotency-Key's fingerprint of a deep body into a 500. This writes the same text
 * without recursion, for values as JSON.parse makes them (objects, arrays, strings, numbers, booleans,
 * null; an own toJSON or undefined is treated as JSON.stringify treats it at the top, not below).
 * JSON.stringify is tried first: its text is the fingerprint every stored key was made with.
 */

type Step = { kind: 'value', value: unknown } | { kind: 'text', text: string }

/** JSON.stringify(value) for JSON data, whatever its depth. */
export function stringifyJson (value: unknown): string {
  try {
    return JSON.stringify(value)
  } catch (err) {
    if (!(err instanceof RangeError)) throw err
    return stringifyWithoutRecursion(value)
  }
}

/** The iterative writer (exported for its test: it must agree with JSON.stringify). */
export function stringifyWithoutRecursion (value: unknown): string {
  const out: string[] = []
  const todo: Step[] = [{ kind: 'value', value }]
  while (todo.length > 0) {
    const step = todo.pop()!
    if (step.kind === 'text') { out.push(step.text); continue }
    const v = step.value
    if (Array.isArray(v)) {
      // Pushed in reverse: popped in order.
      todo.push({ kind: 'text', text: ']' })
      for (let i = v.length - 1; i >= 0; i--) {
        const element = v[i]
        const absent = element === undefined || typeof element === 'function' || typeof element === 'symbol'
        todo.push(absent ? { kind: 'text', text: 'null' } : { kind: 'value', value: element })
        if (i > 0) todo.push({ kind: 'text', text: ',' })
      }
      todo.push({ kind: 'text', text: '[' })
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v).filter(([, e]) => e !== undefined && typeof e !== 'function' && typeof e !== 'symbol')
      todo.push({ kind: 'text', text: '}' })
      for (let i = entries.length - 1; i >= 0; i--) {
        todo.push({ kind: 'value', value: entries[i][1] })
        todo.push({ kind: 'text', text: `${i > 0 ? ',' : ''}${JSON.stringify(entries[i][0])}:` })
      }
      todo.push({ kind: 'text', text: '{' })
    } else {
      out.push(JSON.stringify(v) ?? 'null')
    }
  }
  return out.join('')
}
