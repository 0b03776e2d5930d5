import { sql, type SQL } from 'drizzle-orm'
import {
  boolText, decimalText, intText, isoText, numberText, numericNumberText, stringArrayText, stringText,
  type JsonEntry, type ScalarFields
} from './json-text.js'

/*
 * A read model, declared once per object: each field is its SQL expression over the object's row and the
 * JSON type it has in the answer. Everything else follows from that one declaration:
 * - the text PostgreSQL writes for a selection (`scalarTexts` feeds json-text.ts's planObject);
 * - the standard execution's reads, which run the same statement for every field (`entriesOf`) and parse it;
 * - the TypeScript type of the parsed JSON (`ViewOf<typeof model>`), which codegen maps GraphQL's object onto.
 * Adding a scalar field to an object is one line in its model (and the field in schema.graphql).
 * Nested objects and lists are declared here with the model they hold; how they are joined is the reader's.
 */

/** An SQL expression over the object's row: a column of it, or a function of the row's alias. */
type Expression = string | ((row: string) => string)

/** A scalar field: how its JSON text is written from the row `row`; `T` is its type once parsed. */
export interface ScalarField<T> {
  readonly kind: 'scalar'
  readonly text: (row: string) => SQL
  /** Never set: carries the parsed type for ViewOf. */
  readonly parsed?: T
}

type Shape = 'one' | 'oneOrNull' | 'many'

/** A nested object or list of another model, joined by the reader that writes it. */
export interface NestedField<M extends Model, S extends Shape> {
  readonly kind: 'nested'
  readonly model: M
  readonly shape: S
}

export interface Model {
  readonly [field: string]: ScalarField<unknown> | NestedField<Model, Shape>
}

type NestedView<F> = F extends NestedField<infer M, infer S>
  ? S extends 'many' ? Array<ViewOf<M>> : S extends 'oneOrNull' ? ViewOf<M> | null : ViewOf<M>
  : never

type ScalarKeys<M> = { [K in keyof M]: M[K] extends ScalarField<unknown> ? K : never }[keyof M]
type NestedKeys<M> = { [K in keyof M]: M[K] extends NestedField<Model, Shape> ? K : never }[keyof M]

/** The parsed JSON of a model's object: every scalar, and each nested part present when it was selected. */
export type ViewOf<M> =
  { [K in ScalarKeys<M>]: M[K] extends ScalarField<infer T> ? T : never } &
  { [K in NestedKeys<M>]?: NestedView<M[K]> }

const expression = (e: Expression, row: string): SQL => sql.raw(typeof e === 'string' ? `${row}.${e}` : e(row))

function scalar<T> (write: (expr: SQL) => SQL): (e: Expression) => ScalarField<T> {
  return (e) => ({ kind: 'scalar', text: (row) => write(expression(e, row)) })
}

/** The field kinds, each with the JSON text it is written as (json-text.ts) and its parsed type. */
export const field = {
  /** A string; `T` narrows it (an enum's values). */
  string: <T extends string = string>(e: Expression): ScalarField<T> => scalar<T>(stringText)(e),
  nullableString: scalar<string | null>(stringText),
  int: scalar<number>(intText),
  nullableInt: scalar<number | null>(intText),
  /** numeric(p ≤ 15): written as its exact decimal, the number JavaScript would write. */
  decimal: scalar<number>(decimalText),
  /** Any other number, through float8 as JavaScript writes it. */
  number: scalar<number>(numberText),
  nullableNumber: scalar<number | null>(numberText),
  /**
   * A numeric column of any precision and size (unconstrained numeric): the nearest double, 0 or ±the
   * largest double for a value beyond a double's range (json-text.ts numericNumberText), never an error.
   */
  numeric: scalar<number>(numericNumberText),
  bool: scalar<boolean>(boolText),
  /** ISO-8601 in UTC with microseconds: exact enough to hand back as updatedSince. */
  timestamp: scalar<string>((expr) => stringText(isoText(expr))),
  stringArray: scalar<string[]>(stringArrayText),
  one: <M extends Model>(model: M): NestedField<M, 'one'> => ({ kind: 'nested', model, shape: 'one' }),
  oneOrNull: <M extends Model>(model: M): NestedField<M, 'oneOrNull'> => ({ kind: 'nested', model, shape: 'oneOrNull' }),
  many: <M extends Model>(model: M): NestedField<M, 'many'> => ({ kind: 'nested', model, shape: 'many' })
}

/** How each scalar of `model` is written from the row `row` (for planObject). */
export function scalarTexts (model: Model, row: string): ScalarFields {
  const texts: ScalarFields = {}
  for (const [name, f] of Object.entries(model)) if (f.kind === 'scalar') texts[name] = f.text(row)
  return texts
}

/**
 * The entries of every scalar of `model` under its own name, and of each nested field `nested` gives
 * entries for (the standard execution reads whole objects; graphql-js picks the selected fields).
 */
export function entriesOf (model: Model,
  nested: (name: string, model: Model) => JsonEntry[] | undefined = () => undefined): JsonEntry[] {
  const entries: JsonEntry[] = []
  for (const [name, f] of Object.entries(model)) {
    if (f.kind === 'scalar') {
      entries.push({ key: name, value: { kind: 'field', name } })
    } else {
      const sub = nested(name, f.model)
      if (sub) entries.push({ key: name, value: { kind: 'field', name, entries: sub } })
    }
  }
  return entries
}

/**
 * The lengths of the lists in `objects` (parsed objects of `model`, themselves the list at `path`): each
 * list's elements across all its parents, by path, as the GraphQL cost bills them. A nested object is
 * looked into but not counted; a part that was not read is not there.
 */
export function listLengths (model: Model, objects: readonly unknown[], path: string,
  into = new Map<string, number>()): Map<string, number> {
  into.set(path, (into.get(path) ?? 0) + objects.length)
  lengthsBelow(model, objects, path, into)
  return into
}

function lengthsBelow (model: Model, objects: readonly unknown[], path: string, into: Map<string, number>): void {
  for (const [name, f] of Object.entries(model)) {
    if (f.kind !== 'nested') continue
    const values = objects.map((o) => (o as Record<string, unknown>)[name]).filter((v) => v !== undefined && v !== null)
    if (values.length === 0) continue
    if (f.shape === 'many') for (const list of values) listLengths(f.model, list as unknown[], `${path}/${name}`, into)
    else lengthsBelow(f.model, values, `${path}/${name}`, into)
  }
}
