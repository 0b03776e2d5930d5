/*
 * The error of one item of a bulk request (an order of a status update, a row of a shipment sync): its
 * code and its exact text, made together where the item fails, so nothing has to find a code from a
 * text afterwards. Each feature writes its errors once, as one table of [code, text] (status-update/texts.ts,
 * shipments/sync-row.ts); a text that names values is a function of them.
 */

export interface ItemError<Code extends string = string> {
  readonly code: Code
  readonly text: string
}

type TextOf = string | ((...args: never[]) => string)
type Entry = readonly [code: string, text: TextOf]

/** The table's entries as errors: a fixed text is an error, a text with values a function making one. */
export type ItemErrors<T extends Record<string, Entry>> = {
  readonly [K in keyof T]: T[K] extends readonly [infer Code extends string, infer Text]
    ? Text extends (...args: infer Args) => string ? (...args: Args) => ItemError<Code> : ItemError<Code>
    : never
}

/** The codes of a table's errors. */
export type CodeOf<E> = {
  [K in keyof E]: E[K] extends ItemError<infer C>
    ? C
    : E[K] extends (...args: never[]) => ItemError<infer C> ? C : never
}[keyof E]

export function itemErrors<const T extends Record<string, Entry>> (table: T): ItemErrors<T> {
  const errors: Record<string, ItemError | ((...args: never[]) => ItemError)> = {}
  for (const [name, [code, text]] of Object.entries(table)) {
    errors[name] = typeof text === 'string'
      ? Object.freeze({ code, text })
      : (...args: never[]) => ({ code, text: text(...args) })
  }
  return errors as ItemErrors<T>
}
