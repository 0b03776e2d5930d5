import type { Query } from 'drizzle-orm'
import type postgres from 'postgres'

/*
 * The fence around what Drizzle and postgres.js keep private. Each use below is something neither library
 * offers publicly, and each is checked when it is reached, so an upgrade that moves it fails here with
 * the library's name rather than as an `undefined is not a function` deep in a request.
 * test/driver-internals.test.ts runs every one against a real database; run it after any upgrade of
 * drizzle-orm or postgres.
 *
 * Other private uses, outside this file, and why they stay there (see also patches/README.md):
 * - `graphile_worker._private_jobs` (effects/enqueue.ts, effects/crash-recovery.ts): graphile-worker
 *   0.17 has no public way to clear a running job's key or to list the pools holding jobs;
 *   test/driver-internals.test.ts checks the columns those statements read.
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

/** The pool's state, from `poolStats`, which patches/postgres+3.4.9.patch adds (postgres.js has none). */
export function poolStatsReader (client: postgres.Sql): () => PoolStats {
  const read = (client as unknown as { poolStats?: () => PoolStats }).poolStats
  if (typeof read !== 'function') changed('postgres.js poolStats (patches/postgres+3.4.9.patch not applied?)')
  return read
}
