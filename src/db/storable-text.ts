/*
 * Text PostgreSQL stores exactly as given. A `text` column cannot hold NUL, and a lone UTF-16 surrogate
 * has no UTF-8 form (the driver would store U+FFFD instead, and PostgreSQL's JSON parser refuses the
 * `\ud800` escape outright). Input carrying either is a client mistake, reported as such, never a
 * storage failure.
 */

// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export function isStorableText (value: string): boolean {
  return !UNSTORABLE.test(value)
}

/** The sentence a field's error carries when its text is not storable. */
export function unstorableTextRule (field: string): string {
  return `${field} must not contain NUL characters or unpaired surrogates`
}
