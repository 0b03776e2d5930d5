import postgres from 'postgres'
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import * as schema from './schema.js'
import { observeQueries, poolStatsReader, type PoolStats, type QueryObserver } from './driver-internals.js'

/*
 * The one data-access handle of the service: Drizzle over postgres.js. Every service function takes a
 * `Tx` first, the database or a transaction on it, so the caller decides what commits together. The
 * query builder covers plain reads and writes; set-based statements (unnest, json_to_recordset, the
 * one-statement order page) are Drizzle `sql` templates run through the same handle (statements.ts).
 */

export type Db = PostgresJsDatabase<typeof schema>
/** A transaction on the database, as `db.transaction()` hands it to its callback. */
export type Transaction = Parameters<Parameters<Db['transaction']>[0]>[0]
/** The database, or a transaction on it (`tx.transaction()` inside one opens a savepoint). */
export type Tx = Db | Transaction

export interface Database {
  db: Db
  url: string
  close: () => Promise<void>
  /** The pool's connections right now (metrics). */
  poolStats: () => PoolStats
}

export type { PoolStats }

export interface OpenOptions {
  max?: number
  /** Called for every statement sent: tests and benchmarks count statements with it. */
  onQuery?: (query: string) => void
  application?: string
  /** The session's statement, lock and idle-in-transaction timeouts (config.ts); none when absent. */
  timeouts?: SessionTimeouts
  /**
   * False behind a transaction-pooling PgBouncer (before 1.21): every statement goes unnamed, parsed and
   * planned each time, because a named statement lives on one server connection and the next
   * transaction may get another. Default true.
   */
  prepare?: boolean
  /** Told of every statement and transaction (tracing: one span each); none when absent. */
  observer?: QueryObserver
}

export interface SessionTimeouts { statementMs: number, lockMs: number, idleInTransactionMs: number }

/** The timeouts as PostgreSQL settings, sent when a connection starts (so they hold for every statement). */
export function timeoutSettings (timeouts: SessionTimeouts | undefined): Record<string, string> {
  if (!timeouts) return {}
  return {
    statement_timeout: String(timeouts.statementMs),
    lock_timeout: String(timeouts.lockMs),
    idle_in_transaction_session_timeout: String(timeouts.idleInTransactionMs)
  }
}

/**
 * Seconds before a connection is tried again after failures: postgres.js's default grows to 20 s,
 * which would keep answering 503 for that long after the database is back. Capped at 2 s.
 */
export function reconnectBackoff (retries: number): number {
  return Math.min(0.1 * 2 ** retries, 2)
}

/** The postgres.js settings of every pool: numeric stays a string end to end (no float rounding). */
export function openClient (url: string, options: OpenOptions = {}): postgres.Sql {
  const prepare = options.prepare ?? true
  const client = postgres(url, {
    max: options.max ?? 10,
    prepare,
    onnotice: () => {},
    types: { numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => v } },
    connection: {
      application_name: options.application ?? 'order-exchange',
      // A prepared statement always runs its cached generic plan. Under `auto` PostgreSQL planned the
      // unfiltered order page afresh at every execution (its custom plans looked cheaper), 1.7 ms of the
      // 4.3 ms a page of 20 cost; every statement prepared here is shaped for a generic plan (read-orders.ts),
      // and none is slower with it (measured per filter shape: bench/results/2026-11-24-graphql-orders.md).
      // Not sent to a pooler.
      ...(prepare ? { plan_cache_mode: 'force_generic_plan' } : {}),
      ...timeoutSettings(options.timeouts)
    },
    backoff: reconnectBackoff,
    debug: options.onQuery ? (_conn, query) => options.onQuery!(query) : undefined
  })
  if (options.observer) observeQueries(client, options.observer)
  return client
}

export function openDatabase (url: string, options: OpenOptions = {}): Database {
  const client = openClient(url, options)
  const db = drizzle(client, { schema })
  const stats = poolStatsReader(client)
  return { db, url, close: async () => { await client.end({ timeout: 5 }) }, poolStats: () => stats() }
}

/** Replaces the database name of a PostgreSQL URL. */
export function withDatabaseName (url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}
