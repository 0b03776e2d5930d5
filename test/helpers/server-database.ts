// A fresh database for real server processes that a fault test kills and restarts, and the backend it catches waiting.
import type postgres from 'postgres'
import type { Test } from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { rawClient, type TestDatabase } from './build.js'
import { eventually } from './eventually.js'
import { freePort, ready, startServer, type ServerProcess } from './server-process.js'
import { createTestDatabaseUrl } from './test-server.js'

/* Kept out of server-process.ts, which bench/topology imports too: this needs build.ts, and with it the app. */

export interface ServerDatabase {
  url: string
  database: TestDatabase
  /** Every server started on the database so far, in order. */
  servers: ServerProcess[]
  /** One more server process on the database, on a free port (`env` added to its own); resolves once it is ready. */
  start: (env?: Record<string, string>) => Promise<{ server: ServerProcess, port: number }>
}

/**
 * A fresh database for real server processes, which a fault test kills and restarts on it. In teardown the
 * servers still alive are SIGKILLed and awaited, so that none outlives the test, before the database is dropped.
 */
export async function serverDatabase (t: Test): Promise<ServerDatabase> {
  const made = await createTestDatabaseUrl()
  // Named apart from the service's (application_name), so a test can single out the service's backends.
  const database: TestDatabase = { ...openDatabase(made.url, { max: 2, application: 'oxs-test' }), sql: rawClient(made.url) }
  const servers: ServerProcess[] = []
  t.teardown(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL')
        await server.exited
      }
    }
    await database.close()
    await database.sql.end({ timeout: 5 })
    await made.drop()
  })
  const start = async (env: Record<string, string> = {}) => {
    const port = await freePort()
    const server = startServer({ DATABASE_URL: made.url, PORT: String(port), LOG_LEVEL: 'warn', WORKER_ENABLED: 'false', ...env })
    servers.push(server)
    await eventually(t, 'readiness', () => ready(port), { timeoutMs: 60_000 })
    return { server, port }
  }
  return { url: made.url, database, servers, start }
}

/**
 * The service's backend waiting on an advisory lock the test holds (a fault test's trigger makes the request's
 * transaction wait there), once it waits; and the tables its open transaction has written.
 */
export async function waitingBackend (
  t: Test, sql: postgres.Sql, what = 'the batch', timeoutMs = 30_000
): Promise<{ pid: number, written: string[] }> {
  let pid = 0
  await eventually(t, `${what} waiting inside its transaction`, async () => {
    const rows = await sql`select pid from pg_stat_activity where datname = current_database()
      and application_name like 'order-exchange%' and wait_event_type = 'Lock' and wait_event = 'advisory'`
    pid = rows[0]?.pid ?? 0
    return rows.length === 1
  }, { timeoutMs })
  const written = await sql`select distinct c.relname from pg_locks l join pg_class c on c.oid = l.relation
    where l.pid = ${pid} and l.mode = 'RowExclusiveLock' and c.relkind = 'r' order by 1`
  return { pid, written: written.map((r) => r.relname) }
}
