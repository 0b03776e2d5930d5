import path from 'node:path'
import postgres from 'postgres'
import { sessionTimeouts, type Config } from '../config.js'
import { openDatabase, withDatabaseName, type Database, type OpenOptions } from './client.js'
import { startEmbeddedPostgres, type EmbeddedServer } from './embedded.js'

export const EMBEDDED_DATABASE = 'order_exchange'

export interface Connection {
  database: Database
  /** Present when this process uses the embedded server. */
  embedded?: EmbeddedServer
  /** Closes the pool, then stops the embedded server when this process started it. */
  close: () => Promise<void>
}

/** The database URL this config points at, starting the embedded server when DATABASE_URL is unset. */
export async function resolveDatabaseUrl (config: Config, log: (line: string) => void = () => {}): Promise<{ url: string, embedded?: EmbeddedServer }> {
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

export async function connect (config: Config, options: OpenOptions & { log?: (line: string) => void } = {}): Promise<Connection> {
  const { url, embedded } = await resolveDatabaseUrl(config, options.log)
  const database = openDatabase(url, { max: options.max ?? config.DB_POOL_MAX, onQuery: options.onQuery, timeouts: sessionTimeouts(config) })
  return {
    database,
    embedded,
    close: async () => {
      await database.close()
      if (embedded?.owned) await embedded.stop()
    }
  }
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
