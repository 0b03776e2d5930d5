import { sql, type SQL } from 'drizzle-orm'

/*
 * JSON text built by PostgreSQL, byte for byte what JSON.stringify would write for the same values, so a
 * read can hand PostgreSQL's text to the client without parsing it (the GraphQL pass-through). Strings go
 * through to_json (its escapes are JSON.stringify's), numbers through oxs_js_number (migration 0006),
 * objects and lists are concatenated without the spaces json_build_object and json_agg put in.
 *
 * What to write is a plan: the entries of each object, in the order the answer lists them, each a field
 * of the object (with the entries of its own object or list elements) or a __typename.
 */

export interface JsonEntry { key: string, value: JsonValue }
export type JsonValue =
  | { kind: 'typename', name: string }
  | { kind: 'field', name: string, entries?: JsonEntry[] }

/** A response key is a GraphQL name; checked again here because it is written into the SQL text. */
const NAME = /^[_A-Za-z][_0-9A-Za-z]*$/

/** `"key":` as an SQL literal. */
export function keyText (key: string): SQL {
  if (!NAME.test(key)) throw new Error(`not a GraphQL name: ${JSON.stringify(key)}`)
  return sql.raw(`'"${key}":'`)
}

/** A JSON string literal of a known name (a __typename), as an SQL literal. */
export function nameText (name: string): SQL {
  if (!NAME.test(name)) throw new Error(`not a GraphQL name: ${JSON.stringify(name)}`)
  return sql.raw(`'"${name}"'`)
}

export const stringText = (expr: SQL): SQL => sql`coalesce(to_json((${expr})::text)::text, 'null')`
export const numberText = (expr: SQL): SQL => sql`coalesce(oxs_js_number((${expr})::float8), 'null')`
/**
 * A numeric column of any size as the double JavaScript would read it, never an error: `::float8` fails
 * (SQLSTATE 22003) for a value a double cannot hold, so a non-zero value nearer 0 than half the smallest
 * double (2^-1075) is written as 0 and one beyond the largest double as ±1.7976931348623157e308. Between
 * the two bounds the cast rounds to the nearest double, as JSON.parse would (denormals included).
 */
export const numericNumberText = (expr: SQL): SQL => sql`coalesce(oxs_js_number(case
    when abs((${expr})::numeric) < 2.4703282292062328e-324::numeric then 0::float8
    when abs((${expr})::numeric) > 1.7976931348623157e308::numeric
      then sign((${expr})::numeric)::float8 * 1.7976931348623157e308::float8
    else (${expr})::numeric::float8 end), 'null')`
/**
 * A numeric column of at most 15 significant digits (money numeric(14,2), quantity numeric(14,3)):
 * JavaScript writes the double of such a decimal as the decimal itself without trailing zeros (15
 * digits always round-trip, and scale ≤ 3 stays clear of exponents), so no float conversion is needed.
 */
export const decimalText = (expr: SQL): SQL => sql`coalesce(trim_scale(${expr})::text, 'null')`
export const intText = (expr: SQL): SQL => sql`coalesce((${expr})::text, 'null')`
export const boolText = (expr: SQL): SQL => sql`(case when (${expr}) then 'true' when not (${expr}) then 'false' else 'null' end)`
export const stringArrayText = (expr: SQL): SQL => sql`coalesce(array_to_json(${expr})::text, 'null')`
/** A timestamp as ISO-8601 in UTC with microseconds (SQL text, not yet a JSON string). */
export const isoText = (expr: SQL): SQL => sql`to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** concat() takes at most 100 arguments (FUNC_MAX_ARGS): longer lists are concatenated in groups. */
const CONCAT_ARGS = 90

function concatText (parts: SQL[]): SQL {
  if (parts.length <= CONCAT_ARGS) return sql`concat(${sql.join(parts, sql`, `)})`
  const groups: SQL[] = []
  for (let i = 0; i < parts.length; i += CONCAT_ARGS) groups.push(concatText(parts.slice(i, i + CONCAT_ARGS)))
  return concatText(groups)
}

/**
 * Text written before and after an object in the same concat(): the answer's envelope around a root
 * field (`{"data":{"orders":` … `}}`), so the statement returns the response body itself and the server
 * sends PostgreSQL's bytes as they arrived, with no copy into a new buffer (graphql/pass-through.ts).
 */
export interface Surround { before: SQL, after: SQL }

/** The text of a Surround for one request (statement parameters, so one statement text serves every request). */
export interface SurroundText { before: string, after: string }

/** Nothing around: a text parsed on its own (the standard execution's reads). */
export const ALONE: SurroundText = { before: '', after: '' }

/** A Surround of statement parameters. */
export function surroundOf (text: SurroundText): Surround {
  return { before: sql`${text.before}::text`, after: sql`${text.after}::text` }
}

/**
 * `{"k1":v1,"k2":v2}` from each entry's `"key":` and value text. One concat() per object: a chain of
 * `||` copies the growing text at every step (measured slower); every value is already non-null text.
 */
export function objectText (parts: Array<{ key: string, value: SQL }>, surround?: Surround): SQL {
  if (parts.length === 0) return surround ? sql`concat(${surround.before}, '{}', ${surround.after})` : sql.raw('\'{}\'')
  const args: SQL[] = surround ? [surround.before] : []
  parts.forEach((p, i) => {
    if (!NAME.test(p.key)) throw new Error(`not a GraphQL name: ${JSON.stringify(p.key)}`)
    args.push(sql.raw(`'${i === 0 ? '{' : ','}"${p.key}":'`), p.value)
  })
  args.push(sql.raw('\'}\''))
  if (surround) args.push(surround.after)
  return concatText(args)
}

/** `[e1,e2]` from the text of each element, aggregated in `order`. */
export function arrayAggText (element: SQL, order: SQL): SQL {
  return sql`'[' || coalesce(${elementsAggText(element, order)}, '') || ']'`
}

/**
 * `e1,e2` (no brackets; null for no rows): a list's elements grouped apart, bracketed where it is used
 * (`listText`).
 */
export function elementsAggText (element: SQL, order: SQL): SQL {
  return sql`string_agg(${element}, ',' order by ${order})`
}

/** `[…]` around a column of `elementsAggText` (null: no elements). */
export const listText = (elements: SQL): SQL => sql`('[' || coalesce(${elements}, '') || ']')`

/** The scalar fields of one object type: how each is written, from the object's row. */
export type ScalarFields = Record<string, SQL>

/**
 * The text of one object from its plan: scalars from `scalars`, __typename from `typeName`, anything
 * else from `nested` (which throws for a field it does not know).
 */
export function planObject (entries: JsonEntry[], typeName: string, scalars: ScalarFields,
  nested: (name: string, entries: JsonEntry[]) => SQL, surround?: Surround): SQL {
  return objectText(entries.map(({ key, value }) => {
    if (value.kind === 'typename') return { key, value: nameText(value.name) }
    if (value.entries === undefined) {
      const scalar = Object.hasOwn(scalars, value.name) ? scalars[value.name] : undefined
      if (!scalar) throw new PlanNotCovered(`${typeName}.${value.name}`)
      return { key, value: scalar }
    }
    return { key, value: nested(value.name, value.entries) }
  }), surround)
}

/** A selection the pass-through does not write: the standard execution answers it instead. */
export class PlanNotCovered extends Error {
  override name = 'PlanNotCovered'
}
