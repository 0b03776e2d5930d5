import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runningServer } from '../src/db/embedded.js'
import { createTestDatabaseUrl } from './helpers/test-server.js'
import { freePort, ready, startServer, waitFor } from './helpers/server-process.js'

t.test('a bad setting stops the process with one line naming the variable', async (t) => {
  const s = startServer({ PORT: 'http' })
  t.equal(await s.exited, 1)
  t.equal(s.stderr().trim(), 'Invalid configuration: PORT="http": Expected integer')
})

t.test('with DATABASE_URL: migrates, serves, prints no secrets, shuts down on SIGTERM', async (t) => {
  const { url, drop } = await createTestDatabaseUrl()
  t.teardown(drop)
  const port = await freePort()
  const s = startServer({ DATABASE_URL: url, PORT: String(port), LOG_LEVEL: 'info', WORKER_ENABLED: 'false' })
  t.teardown(() => { s.child.kill('SIGKILL') })
  await waitFor('readiness', () => ready(port))
  t.notMatch(s.stdout(), /oxs_test_/, 'no secrets printed with DATABASE_URL')
  t.match(s.stdout(), /"msg":"Server listening at http:\/\/127\.0\.0\.1:\d+"/, 'pino JSON logs')
  s.child.kill('SIGTERM')
  t.equal(await s.exited, 0, 'graceful exit')
  t.match(s.stdout(), /shutting down: finishing in-flight requests/)
})

t.test('without DATABASE_URL: embedded PostgreSQL, demo data, demo credentials, stopped on exit', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-start-'))
  fs.chmodSync(dataDir, 0o755)
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const pgPort = await freePort()
  const env = { DATA_DIR: dataDir, PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn', WORKER_ENABLED: 'false' }
  const first = startServer(env)
  t.teardown(() => { first.child.kill('SIGKILL') })
  await waitFor('readiness', () => ready(port), 90_000)
  await waitFor('banner', () => first.stdout().includes('Try:'))
  const out = first.stdout()
  t.match(out, /demo data loaded \(testing environment\)/)
  t.match(out, /access token \(GraphQL\): +oxs_test_at_\S+/)
  t.match(out, /API key \(status update, sync\): oxs_test_ak_\S+/)
  t.ok(runningServer(path.join(dataDir, 'pg')), 'embedded server running under DATA_DIR')
  first.child.kill('SIGINT')
  t.equal(await first.exited, 0)
  t.equal(runningServer(path.join(dataDir, 'pg')), null, 'embedded server stopped with the service')

  // Data is kept across restarts, and demo credentials are printed only on the first start.
  const second = startServer(env)
  t.teardown(() => { second.child.kill('SIGKILL') })
  await waitFor('readiness again', () => ready(port), 90_000)
  t.notMatch(second.stdout(), /oxs_test_/)
  second.child.kill('SIGTERM')
  t.equal(await second.exited, 0)
})

t.test('production never seeds nor prints secrets', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-prod-'))
  fs.chmodSync(dataDir, 0o755)
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const s = startServer({ DATA_DIR: dataDir, PORT: String(port), EMBEDDED_PG_PORT: String(await freePort()), ORDER_EXCHANGE_ENV: 'production', LOG_LEVEL: 'warn', WORKER_ENABLED: 'false' })
  t.teardown(() => { s.child.kill('SIGKILL') })
  await waitFor('readiness', () => ready(port), 90_000)
  t.notMatch(s.stdout(), /oxs_|demo data/)
  s.child.kill('SIGTERM')
  t.equal(await s.exited, 0)
})
