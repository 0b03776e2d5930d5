import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig, type Config } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { createTestDatabaseUrl } from './test-server.js'

export interface TestContext { app: FastifyInstance, database: Database, config: Config }

/** A fresh database for this test (cloned from the migrated template), closed and dropped in teardown. */
export async function testDatabase (t: Test, options: { onQuery?: (q: string) => void } = {}): Promise<Database> {
  const { url, drop } = await createTestDatabaseUrl()
  const database = openDatabase(url, { max: 5, onQuery: options.onQuery })
  t.teardown(async () => {
    await database.close()
    await drop()
  })
  return database
}

export function testConfig (database: Database, env: Record<string, string> = {}): Config {
  return loadConfig({ DATABASE_URL: database.url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', ...env })
}

/** The whole app on a fresh database, talking HTTP through app.inject. */
export async function build (t: Test, env: Record<string, string> = {}, options: { onQuery?: (q: string) => void } = {}): Promise<TestContext> {
  const database = await testDatabase(t, options)
  const config = testConfig(database, env)
  const app = await buildApp({ config, database })
  t.teardown(() => app.close())
  await app.ready()
  return { app, database, config }
}
