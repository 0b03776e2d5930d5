// The test run's PostgreSQL and its migrated template; a fresh database per test file.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { migrate, MIGRATIONS_FOLDER } from '../../src/db/migrate.js'
import { startEmbeddedPostgres, stopByPid } from '../../src/db/embedded.js'
import { withDatabaseName } from '../../src/db/client.js'

/*
 * One PostgreSQL per test run (tap's `before`/`after`), one database per test file cloned from a
 * migrated template, so files run in parallel and never share state. TEST_DATABASE_URL points the run
 * at any server (CI uses the PostgreSQL 15 of the machine); otherwise an embedded server is started.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
// Keyed by the tap runner's pid (the parent of `before`, `after` and every test file), so two test runs
// in one checkout never share, or stop, each other's server.
const STATE_FILE = path.join(ROOT, '.tap', `test-db-${process.ppid}.json`)

export interface TestServerState {
  serverUrl: string
  template: string
  embedded?: { pid: number, dataDir: string }
}

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

/** The template's name changes whenever a migration does, so a stale template is never used. */
function templateName (): string {
  const h = createHash('sha256')
  for (const f of fs.readdirSync(MIGRATIONS_FOLDER).filter((f) => f.endsWith('.sql')).sort()) {
    h.update(f).update(fs.readFileSync(path.join(MIGRATIONS_FOLDER, f)))
  }
  const workerPkg = path.join(ROOT, 'node_modules', 'graphile-worker', 'package.json')
  if (fs.existsSync(workerPkg)) h.update(JSON.parse(fs.readFileSync(workerPkg, 'utf8')).version)
  return `oxs_tpl_${h.digest('hex').slice(0, 16)}`
}

async function ensureTemplate (serverUrl: string, template: string): Promise<void> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  try {
    const [found] = await admin`select 1 as x from pg_database where datname = ${template}`
    if (found) return
    // Build under a temporary name and rename: a run that dies half way never leaves a broken template.
    const building = `${template}_b${process.pid}`
    await admin.unsafe(`drop database if exists "${building}"`)
    await admin.unsafe(`create database "${building}"`)
    await migrate(withDatabaseName(serverUrl, building))
    try {
      await admin.unsafe(`alter database "${building}" rename to "${template}"`)
    } catch (err) {
      await admin.unsafe(`drop database if exists "${building}" with (force)`)
      if ((err as { code?: string }).code !== '42P04') throw err // another run built it first: fine
    }
  } finally {
    await admin.end({ timeout: 5 })
  }
}

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

/** A run that was killed never reached `after`: stop the servers of runs whose tap runner is gone. */
async function reapAbandonedRuns (): Promise<void> {
  const dir = path.dirname(STATE_FILE)
  if (!fs.existsSync(dir)) return
  for (const name of fs.readdirSync(dir)) {
    const m = /^test-db-(\d+)\.json$/.exec(name)
    if (!m || alive(Number(m[1]))) continue
    const file = path.join(dir, name)
    try {
      const state = JSON.parse(fs.readFileSync(file, 'utf8')) as TestServerState
      if (state.embedded) {
        // Only the server of that run: a pid may have been reused since.
        let cmdline = ''
        try { cmdline = fs.readFileSync(`/proc/${state.embedded.pid}/cmdline`, 'utf8').split('\0').join(' ') } catch {}
        if (cmdline.includes(state.embedded.dataDir)) await stopByPid(state.embedded.pid)
        fs.rmSync(state.embedded.dataDir, { recursive: true, force: true })
      }
    } catch {}
    fs.rmSync(file, { force: true })
  }
}

export async function setupTestServer (): Promise<TestServerState> {
  await reapAbandonedRuns()
  let serverUrl = process.env.TEST_DATABASE_URL
  let embedded: TestServerState['embedded']
  if (!serverUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-test-pg-'))
    fs.chmodSync(dataDir, 0o755)
    const server = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), port: await freePort(), fast: true, detached: true })
    serverUrl = server.url
    embedded = { pid: server.pid, dataDir }
  }
  const template = templateName()
  await ensureTemplate(serverUrl, template)
  const state: TestServerState = { serverUrl, template, embedded }
  fs.mkdirSync(path.dirname(STATE_FILE), { recursive: true })
  fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2))
  return state
}

export async function teardownTestServer (): Promise<void> {
  if (!fs.existsSync(STATE_FILE)) return
  const state = JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as TestServerState
  if (state.embedded) {
    await stopByPid(state.embedded.pid)
    fs.rmSync(state.embedded.dataDir, { recursive: true, force: true })
  }
  fs.rmSync(STATE_FILE, { force: true })
}

export function testServerState (): TestServerState {
  if (!fs.existsSync(STATE_FILE)) {
    throw new Error('No test database server: run tests through `npm test` (tap starts one in test/setup/before.ts).')
  }
  return JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as TestServerState
}

/** A fresh database cloned from the migrated template; dropped by the returned function. */
export async function createTestDatabaseUrl (): Promise<{ url: string, drop: () => Promise<void> }> {
  const state = testServerState()
  const name = `oxs_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const admin = postgres(state.serverUrl, { max: 1, onnotice: () => {} })
  try {
    await admin.unsafe(`create database "${name}" template "${state.template}"`)
  } finally {
    await admin.end({ timeout: 5 })
  }
  return {
    url: withDatabaseName(state.serverUrl, name),
    drop: async () => {
      const a = postgres(state.serverUrl, { max: 1, onnotice: () => {} })
      try { await a.unsafe(`drop database if exists "${name}" with (force)`) } finally { await a.end({ timeout: 5 }) }
    }
  }
}
