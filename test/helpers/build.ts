// The app and a fresh database for a test: build(), testDatabase(), rawClient(), the config and logger a test uses.
import { Writable } from 'node:stream'
import type { Test } from 'tap'
import pino from 'pino'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, sessionTimeouts, type Config } from '../../src/config.js'
import { loggerOptions } from '../../src/logger.js'
import type postgres from 'postgres'
import { drizzle } from 'drizzle-orm/postgres-js'
import { openClient, openDatabase, type Database, type SessionTimeouts } from '../../src/db/client.js'
import { createTestDatabaseUrl } from './test-server.js'

/**
 * A raw postgres.js client for a test's own queries, parsing as the service's client does (Drizzle keeps
 * dates and times as the text PostgreSQL sends).
 */
export function rawClient (url: string, options: { max?: number, application?: string } = {}): postgres.Sql {
  const sql = openClient(url, { max: options.max ?? 2, application: options.application ?? 'oxs-test' })
  drizzle(sql)
  return sql
}

/** The service's database handle, plus a separate raw client for the tests' own assertions. */
export interface TestDatabase extends Database {
  sql: postgres.Sql
}

export interface TestContext {
  app: FastifyInstance
  database: TestDatabase
  config: Config
  /** Everything the app logged so far (pino JSON lines, the production serializers), when asked for. */
  logs: () => string
}

/** A fresh database for this test (cloned from the migrated template), closed and dropped in teardown. */
export async function testDatabase (t: Test,
  options: { onQuery?: (q: string) => void, timeouts?: SessionTimeouts } = {}): Promise<TestDatabase> {
  const { url, drop } = await createTestDatabaseUrl()
  // The production session timeouts (config.ts defaults) unless a test sets its own, as the service does.
  const database = openDatabase(url, {
    max: 5, onQuery: options.onQuery, timeouts: options.timeouts ?? sessionTimeouts(loadConfig({}))
  })
  const sql = rawClient(url)
  t.teardown(async () => {
    await database.close()
    await sql.end({ timeout: 5 })
    await drop()
  })
  return { ...database, sql }
}

export function testConfig (database: Database, env: Record<string, string> = {}): Config {
  // Rate limits and load shedding off unless a test turns them on: a fuzz run sends thousands of
  // requests with one key, and a test process shares two cores with fifty others (its event loop lags).
  return loadConfig({
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    WORKER_ENABLED: 'false',
    RATE_LIMIT_ENABLED: 'false',
    SHED_EVENT_LOOP_DELAY_MS: '0',
    SHED_HEAP_USED_BYTES: '0',
    ...env
  })
}

/** A pino logger as server.ts makes it, writing into memory. */
export function memoryLogger (level = 'info'): { logger: pino.Logger, logs: () => string } {
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  return { logger: pino(loggerOptions({ LOG_LEVEL: level as Config['LOG_LEVEL'] }) as pino.LoggerOptions, sink), logs: () => lines.join('') }
}

/** The whole app on a fresh database, talking HTTP through app.inject. */
export async function build (
  t: Test, env: Record<string, string> = {}, options: { onQuery?: (q: string) => void, captureLogs?: boolean } = {}
): Promise<TestContext> {
  // The pool gets the session timeouts the test's environment asks for, as server.ts would give it.
  const database = await testDatabase(t, { ...options, timeouts: sessionTimeouts(loadConfig(env)) })
  const config = testConfig(database, env)
  const memory = options.captureLogs ? memoryLogger() : null
  const app = await buildApp({ config, database, logger: memory?.logger })
  t.teardown(() => app.close())
  await app.ready()
  return { app, database, config, logs: memory?.logs ?? (() => '') }
}
