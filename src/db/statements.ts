import type { Query, SQL } from 'drizzle-orm'
import type postgres from 'postgres'
import { PgDialect } from 'drizzle-orm/pg-core'
import type { Tx } from './client.js'
import { executePrepared, postgresClientOf } from './driver-internals.js'

/*
 * Statements through the one handle. `tx.execute<Row>(sql`…`)` types a statement's rows where it is
 * written but sends it unprepared (Drizzle prepares only named queries); this is the prepared form, for a
 * statement shape run again and again (the order page, each job's reads and writes): postgres.js then
 * parses and plans it once per connection instead of every time.
 */

const dialect = new PgDialect()

export async function prepared<Row extends Record<string, unknown> = Record<string, unknown>> (
  tx: Tx, statement: SQL
): Promise<Row[]> {
  return executePrepared<Row>(tx, dialect.sqlToQuery(statement))
}

/**
 * Statements that return one JSON text (the pass-through's answers), whose text depends on what the
 * caller asked for (the selections): the first 256 distinct texts of the process are prepared, the rest
 * sent unprepared. A caller inventing new shapes can then never grow each connection's set of prepared
 * statements without bound; the shapes real clients send again and again are among the first seen.
 */
const PREPARED_SHAPES = 256

/**
 * What a database handle has learnt: the shapes it prepared, the statement texts built for it. Kept per
 * handle (each app opens its own Database), not per process, so a second app in the same process (a test,
 * a bench target) starts from nothing and one app's shapes never count against another's bound. A
 * transaction's handle gets its own; none of these statements runs in one.
 */
interface HandleCaches { preparedShapes: Set<string>, templates: Map<string, StatementTemplates<never>> }
const handleCaches = new WeakMap<Tx, HandleCaches>()

function cachesOf (tx: Tx): HandleCaches {
  let caches = handleCaches.get(tx)
  if (!caches) {
    caches = { preparedShapes: new Set(), templates: new Map() }
    handleCaches.set(tx, caches)
  }
  return caches
}

/** The statement templates named `name` of this handle (one set per kind of statement). */
export function templatesOf<C> (tx: Tx, name: string): StatementTemplates<C> {
  const { templates } = cachesOf(tx)
  let found = templates.get(name) as StatementTemplates<C> | undefined
  if (!found) {
    found = new StatementTemplates<C>()
    templates.set(name, found as unknown as StatementTemplates<never>)
  }
  return found
}

/** A JSON statement's answer: the text, and the lengths of its lists when the statement counted them. */
export interface JsonAnswer { body: Buffer, lengths: Record<string, number> | null }

/**
 * Runs a statement whose first column is a JSON text (`body`) and whose optional second column is a JSON
 * object of list lengths (`lengths`, what the GraphQL cost bills).
 */
export async function runJsonQuery (tx: Tx, query: Query): Promise<JsonAnswer> {
  const [body, lengths] = await runRawRow(tx, query)
  if (!(body instanceof Buffer)) throw new Error('runJsonQuery: the statement returned no text')
  return { body, lengths: lengths instanceof Buffer ? JSON.parse(lengths.toString('utf8')) : null }
}

/**
 * The first row of a statement of text columns, each as the bytes PostgreSQL sent (null for SQL null),
 * prepared as runJsonQuery's statements are.
 */
export async function runRawRow (tx: Tx, query: Query): Promise<Array<Buffer | null>> {
  const { preparedShapes } = cachesOf(tx)
  const prepare = preparedShapes.has(query.sql) || preparedShapes.size < PREPARED_SHAPES
  if (prepare) preparedShapes.add(query.sql)
  // Straight through postgres.js in raw mode, past Drizzle: the column arrives as the bytes PostgreSQL
  // sent, so a 300 KB page is neither decoded into a string here nor encoded again on the socket
  // (measured: about 1 ms of CPU per page of 100 orders).
  const params = query.params as postgres.ParameterOrJSON<never>[]
  const rows = await postgresClientOf(tx).unsafe(query.sql, params, { prepare }).raw()
  return (rows[0] ?? []) as Array<Buffer | null>
}

/**
 * A value of a statement template: where the request's value comes from. A builder written for real
 * values is run once with slots in their place; the text it makes is kept, and each request only reads
 * its values through the slots. Building a large statement with Drizzle's `sql` costs more CPU than
 * running it through postgres.js (measured: about 1.5 ms per order page of 100), so it is done once per
 * shape, not once per request.
 */
export class Slot<C> {
  constructor (readonly read: (context: C) => unknown) {}
}

/** A slot typed as the value it stands for, for builders that take real values. */
export function slot<C, T> (read: (context: C) => T): T {
  return new Slot(read) as unknown as T
}

interface Template<C> { sql: string, slots: Array<Slot<C>> }

/** Statement texts by shape (the caller's key), most recent last, at most `capacity`. */
export class StatementTemplates<C> {
  private readonly templates = new Map<string, Template<C>>()
  constructor (private readonly capacity = PREPARED_SHAPES) {}

  /** The query of `context`: from the kept template of `key`, or built once by `build` (with slots). */
  query (key: string, build: () => SQL, context: C): Query {
    let template = this.templates.get(key)
    if (template) {
      this.templates.delete(key)
    } else {
      const built = dialect.sqlToQuery(build())
      // Every value must come from a slot: a value computed while building would be baked into the
      // text for every later request of this shape.
      const slots = built.params.map((p, i) => {
        if (!(p instanceof Slot)) throw new Error(`statement template: parameter ${i + 1} is not a slot (${typeof p})`)
        return p as Slot<C>
      })
      template = { sql: built.sql, slots }
      if (this.templates.size >= this.capacity) this.templates.delete(this.templates.keys().next().value!)
    }
    this.templates.set(key, template)
    return { sql: template.sql, params: template.slots.map((s) => s.read(context)) }
  }
}
