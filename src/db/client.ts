import postgres from 'postgres'
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import * as schema from './schema.js'

export type Db = PostgresJsDatabase<typeof schema>
/** A transaction handle; service functions take it first so every write of one change rides on it. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
/** Either the database or a transaction: what read-only service functions take. */
export type DbOrTx = Db | Tx

export interface Database {
  db: Db
  /** The postgres.js client, for set-based SQL that Drizzle's builder does not express (unnest, COPY). */
  sql: postgres.Sql
  url: string
  close: () => Promise<void>
}

export interface OpenOptions {
  max?: number
  /** Called for every statement sent: tests count statements with it. */
  onQuery?: (query: string) => void
}

export function openDatabase (url: string, options: OpenOptions = {}): Database {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // numeric stays a string end to end: no float rounding of money or quantities.
    types: { numeric: { to: 1700, from: [1700], serialize: (v: unknown) => String(v), parse: (v: string) => v } },
    connection: { application_name: 'order-exchange' },
    debug: options.onQuery ? (_conn, query) => options.onQuery!(query) : undefined
  })
  const db = drizzle(sql, { schema })
  return { db, sql, url, close: async () => { await sql.end({ timeout: 5 }) } }
}

/** Replaces the database name of a PostgreSQL URL. */
export function withDatabaseName (url: string, name: string): string {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}
