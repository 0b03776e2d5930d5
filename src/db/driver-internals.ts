import type { Query } from 'drizzle-orm'
import type postgres from 'postgres'

/*
 * The fence around what Drizzle and postgres.js keep private. Each use below is something neither library
 * offers publicly, and each is checked when it is reached, so an upgrade that moves it fails here with
 * the library's name rather than as an `undefined is not a function` deep in a request.
 * test/db/driver-internals.test.ts runs every one against a real database; run it after any upgrade of
 * drizzle-orm or postgres.
 *
 * Other private uses, outside this file, and why they stay there (see also patches/README.md):
 * - `graphile_worker._private_jobs` (effects/enqueue.ts, effects/crash-recovery.ts): graphile-worker
 *   0.17 has no public way to clear a running job's key or to list the pools holding jobs;
 *   test/db/driver-internals.test.ts checks the columns those statements read.
 * - `graphql/execution/collectFields.js` (graphql/pass-through.ts): graphql 16 does not export
 *   collectFields from its root, and graphql 17 changes it; the test checks its answer's shape.
 */

/**
 * A Drizzle database or transaction (db/client.ts `Tx`). Taken as any object: everything private is read
 * through `_` as unknown and checked, and client.ts depends on this file, not the other way round.
 */
type DrizzleHandle = object

/** Connections in use (a statement or a transaction), idle, opening; statements waiting for one. */
export interface PoolStats { max: number, busy: number, idle: number, connecting: number, waiting: number }

/** Drizzle's session: what a database or transaction runs its statements through (`tx._.session`). */
interface DrizzleSession {
  prepareQuery: (query: Query, fields: undefined, name: string, isResponseInArrayMode: boolean) => {
    execute: () => Promise<unknown>
  }
  client: postgres.Sql
}

function changed (what: string): never {
  throw new Error(`driver-internals: ${what} is not where this service expects it; ` +
    'an upgrade of drizzle-orm or postgres changed it (see src/db/driver-internals.ts)')
}

function sessionOf (tx: DrizzleHandle): DrizzleSession {
  // `_` is typed but undocumented, and its PgSession type has no `client`: read it as unknown and check.
  const session = (tx as unknown as { _?: { session?: Partial<DrizzleSession> } })._?.session
  if (typeof session?.prepareQuery !== 'function') changed("drizzle-orm's tx._.session.prepareQuery")
  return session as DrizzleSession
}

/**
 * Runs `query` as a named (prepared) statement. Drizzle prepares only queries given a name, and names
 * them only through its query builder; any name makes it ask postgres.js to prepare, and postgres.js
 * caches the statement by its text, per connection.
 */
export async function executePrepared<Row> (tx: DrizzleHandle, query: Query): Promise<Row[]> {
  return await sessionOf(tx).prepareQuery(query, undefined, 'prepared', false).execute() as Row[]
}

/**
 * The postgres.js client a database or a transaction runs on (inside a transaction, the transaction's
 * own `sql`), so a statement can skip Drizzle's row mapping and use postgres.js's raw mode.
 */
export function postgresClientOf (tx: DrizzleHandle): postgres.Sql {
  const client = sessionOf(tx).client
  if (typeof client?.unsafe !== 'function') changed("drizzle-orm's tx._.session.client")
  return client
}

/** How a statement ended: its command tag and how many rows came back, or the error it failed with. */
export type StatementOutcome = { command: string | null, rows: number | null } | { error: unknown }

/** Told of each statement a client sends, and runs its transactions (and savepoints) within a scope of its own. */
export interface QueryObserver {
  /**
   * A statement (its text, with $n placeholders; its parameters are never handed over) is about to be
   * sent: returns what to call when it ends, or nothing to leave it alone.
   */
  statement: (text: string) => ((outcome: StatementOutcome) => void) | undefined
  /** Runs a transaction or savepoint, start to COMMIT or ROLLBACK; its statements are sent inside `run`. */
  transaction: <T>(kind: 'transaction' | 'savepoint', run: () => Promise<T>) => Promise<T>
}

/** The private parts of a postgres.js query: settled through these two instance fields (src/connection.js). */
interface PendingQuery { resolve: (result: unknown) => unknown, reject: (err: unknown) => unknown }

type Settle = (outcome: StatementOutcome) => void
type Scoped = (...args: unknown[]) => Promise<unknown>

/**
 * Reports every statement `client` sends through `unsafe` (Drizzle's only way in, and statements.ts's raw
 * mode), in the pool and in its transactions and savepoints, with its end. postgres.js has no hook for
 * this: its `debug` option sees a statement go out but not come back, and makes every query capture a
 * stack and every error carry its parameters. So `unsafe` and `begin` are wrapped on the client, the
 * transaction's and each savepoint's own `sql`, and a query's end is read from its `resolve`/`reject`.
 * Not covered: tagged-template queries (the service sends none through the pool; postgres.js sends COMMIT,
 * ROLLBACK and SAVEPOINT that way, which the transaction's scope spans) and `reserve()` (unused).
 */
export function observeQueries (client: postgres.Sql, observer: QueryObserver): void {
  const settled = (query: PendingQuery, settle: Settle): void => {
    const { resolve, reject } = query
    if (typeof resolve !== 'function' || typeof reject !== 'function') changed('postgres.js Query resolve/reject')
    query.resolve = (result) => {
      const rows = result as { command?: unknown } | null
      settle({ command: typeof rows?.command === 'string' ? rows.command : null, rows: Array.isArray(result) ? result.length : null })
      return resolve(result)
    }
    query.reject = (err) => { settle({ error: err }); return reject(err) }
  }
  const watchStatements = (sql: postgres.Sql): void => {
    const unsafe = sql.unsafe as unknown as (text: string, ...rest: unknown[]) => PendingQuery
    if (typeof unsafe !== 'function') changed('postgres.js sql.unsafe')
    sql.unsafe = function (this: unknown, text: string, ...rest: unknown[]) {
      const query = unsafe.call(this, text, ...rest)
      const settle = observer.statement(text)
      if (settle) settled(query, settle)
      return query
    } as unknown as postgres.Sql['unsafe']
  }
  /** `begin(options?, fn)` / `savepoint(name?, fn)`: the scope's body gets its `sql` watched too. */
  const watchScope = (sql: postgres.Sql, method: 'begin' | 'savepoint', kind: 'transaction' | 'savepoint'): void => {
    const scoped = (sql as unknown as Record<string, Scoped | undefined>)[method]
    if (typeof scoped !== 'function') changed(`postgres.js sql.${method}`)
    ;(sql as unknown as Record<string, Scoped>)[method] = function (this: unknown, ...args: unknown[]) {
      const last = args.length - 1
      const body = args[last]
      if (typeof body === 'function') {
        args[last] = (inner: postgres.Sql) => (body as (inner: postgres.Sql) => unknown)(watchTransaction(inner))
      }
      return observer.transaction(kind, () => scoped.apply(this, args))
    }
  }
  const watchTransaction = (sql: postgres.Sql): postgres.Sql => {
    watchStatements(sql)
    watchScope(sql, 'savepoint', 'savepoint')
    return sql
  }
  watchStatements(client)
  watchScope(client, 'begin', 'transaction')
}

/** The pool's state, from `poolStats`, which patches/postgres+3.4.9.patch adds (postgres.js has none). */
export function poolStatsReader (client: postgres.Sql): () => PoolStats {
  const read = (client as unknown as { poolStats?: () => PoolStats }).poolStats
  if (typeof read !== 'function') changed('postgres.js poolStats (patches/postgres+3.4.9.patch not applied?)')
  return read
}
