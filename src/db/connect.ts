import path from 'node:path'
import { sql } from 'drizzle-orm'
import postgres from 'postgres'
import { sessionDatabaseUrl, sessionTimeouts, type Config } from '../config.js'
import { openDatabase, withDatabaseName, type Database, type OpenOptions } from './client.js'
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded.js'
import type { QueryObserver } from './driver-internals.js'

export const EMBEDDED_DATABASE = 'order_exchange'

export interface Connection {
  /** The primary (DATABASE_URL): every write, and reads when there is no replica. */
  database: Database
  /** The replica pool (READ_DATABASE_URL), when there is one. */
  reads?: Database
  /** Where what needs a session of its own connects: the worker's queue, LISTEN, advisory locks, migrations. */
  sessionUrl: string
  /** Present when this process uses the embedded server. */
  embedded?: EmbeddedServer
  /** Closes the pool, then stops the embedded server when this process started it. */
  close: () => Promise<void>
}

/** The database URL this config points at, starting the embedded server when DATABASE_URL is unset. */
export async function resolveDatabaseUrl (config: Config,
  log: (line: string) => void = () => {}): Promise<{ url: string, embedded?: EmbeddedServer }> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL }
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(config.DATA_DIR, 'pg'),
    port: config.EMBEDDED_PG_PORT,
    log
  })
  try {
    await ensureDatabase(embedded.url, EMBEDDED_DATABASE)
  } catch (err) {
    await embedded.stop()
    throw err
  }
  return { url: withDatabaseName(embedded.url, EMBEDDED_DATABASE), embedded }
}

export interface ConnectOptions extends OpenOptions {
  log?: (line: string) => void
  /**
   * Open the pool on the session-level URL (WORKER_DATABASE_URL) rather than DATABASE_URL: a worker
   * process, which needs a session anyway, then uses one direct connection kind for everything.
   */
  direct?: boolean
  /**
   * The observer of each pool's statements and transactions, given its URL: tracing's spans when it is on
   * (tracing/start.ts hands `Tracing.sqlObserver`); none when absent. A function, not the tracing handle:
   * db/ stays below tracing/, which builds on db/driver-internals.ts.
   */
  sqlObserver?: ((url: string) => QueryObserver) | null
}

export async function connect (config: Config, options: ConnectOptions = {}): Promise<Connection> {
  const { url, embedded } = await resolveDatabaseUrl(config, options.log)
  const sessionUrl = sessionDatabaseUrl(config, url)
  // Behind a transaction pooler: unnamed statements, and no startup parameters it would refuse.
  const pooled = config.DATABASE_POOL_MODE === 'transaction' && !options.direct
  const settings = {
    max: options.max ?? config.DB_POOL_MAX,
    onQuery: options.onQuery,
    prepare: !pooled,
    timeouts: pooled ? undefined : sessionTimeouts(config)
  }
  const primaryUrl = options.direct ? sessionUrl : url
  const database = openDatabase(primaryUrl, { ...settings, observer: options.sqlObserver?.(primaryUrl) })
  const reads = config.READ_DATABASE_URL && !options.direct
    ? openDatabase(config.READ_DATABASE_URL, {
      ...settings, application: 'order-exchange-reads', observer: options.sqlObserver?.(config.READ_DATABASE_URL)
    })
    : undefined
  return {
    database,
    reads,
    sessionUrl,
    embedded,
    close: async () => {
      await Promise.all([database.close(), reads?.close()])
      if (embedded?.owned) await embedded.stop()
    }
  }
}

/**
 * Behind a transaction pooler the session timeouts cannot be sent when a connection starts (PgBouncer
 * refuses the startup parameters), so they must be set on the role or database; the ones left off there.
 */
export async function timeoutsMissingBehindPooler (database: Database): Promise<string[]> {
  const [row] = await database.db.execute<{ statement: string, lock: string, idle: string }>(sql`select
    current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock,
    current_setting('idle_in_transaction_session_timeout') as idle`)
  return [
    row!.statement === '0' ? 'statement_timeout' : null,
    row!.lock === '0' ? 'lock_timeout' : null,
    row!.idle === '0' ? 'idle_in_transaction_session_timeout' : null
  ].filter((name): name is string => name !== null)
}

async function ensureDatabase (serverUrl: string, name: string): Promise<void> {
  const sql = postgres(serverUrl, { max: 1, onnotice: () => {} })
  try {
    const found = await sql`select 1 from pg_database where datname = ${name}`
    if (found.length === 0) {
      try {
        await sql.unsafe(`create database "${name}"`)
      } catch (err) {
        if ((err as { code?: string }).code !== '42P04') throw err // created meanwhile by another process
      }
    }
  } finally {
    await sql.end({ timeout: 5 })
  }
}
