import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { runningServer, stopByPid } from '../../src/db/embedded.js'
import { createTestDatabaseUrl } from '../helpers/test-server.js'
import { eventually } from '../helpers/eventually.js'
import { freePort, ready, ROOT, startServer } from '../helpers/server-process.js'

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
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 60_000 })
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
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 90_000 })
  await eventually(t, 'banner', () => first.stdout().includes('Try:'), { timeoutMs: 60_000 })
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
  await eventually(t, 'readiness again', () => ready(port), { timeoutMs: 90_000 })
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
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 90_000 })
  t.notMatch(s.stdout(), /oxs_|demo data/)
  s.child.kill('SIGTERM')
  t.equal(await s.exited, 0)
})

/** The live pids among `pids`. */
const alive = (pids: number[]): number[] => pids.filter((pid) => {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
})

/** Whether something accepts connections on 127.0.0.1:port. */
const listening = (port: number): Promise<boolean> => new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve(true) })
  socket.once('error', () => resolve(false))
})

/** The descendants of `root` by /proc (pid, command line). */
function descendants (root: number): Array<{ pid: number, args: string }> {
  const parents = new Map<number, number>()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {}
  }
  const found: Array<{ pid: number, args: string }> = []
  const walk = (pid: number): void => {
    for (const [child, parent] of parents) {
      if (parent !== pid) continue
      let args = ''
      try { args = fs.readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim() } catch {}
      found.push({ pid: child, args })
      walk(child)
    }
  }
  walk(root)
  return found
}

t.test('SIGTERM to `npm start` stops the server and its embedded PostgreSQL with it, and frees both ports', {
  skip: process.platform !== 'linux' ? 'reads /proc' : false
}, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-npm-start-'))
  fs.chmodSync(dataDir, 0o755)
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const pgPort = await freePort()
  // The launcher chain a user runs: npm, the `sh -c` it runs the script through (which `exec`s node:
  // dash does not forward SIGTERM to a child, so a node under sh was left running with its PostgreSQL), postgres.
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      _TAPJS_PROCESSINFO_COVERAGE_: '0',
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_PG_PORT: String(pgPort),
      LOG_LEVEL: 'warn',
      WORKER_ENABLED: 'false'
    },
    stdio: 'ignore'
  })
  const npmExited = new Promise<void>((resolve) => npm.once('exit', () => resolve()))
  let pids: number[] = []
  t.teardown(async () => {
    // Whatever the test left behind (it failed): the server first, which stops its PostgreSQL.
    for (const pid of alive(pids)) { try { process.kill(pid, 'SIGKILL') } catch {} }
    const pg = runningServer(path.join(dataDir, 'pg'))
    if (pg) await stopByPid(pg.pid)
  })
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 90_000 })
  const pg = runningServer(path.join(dataDir, 'pg'))
  t.ok(pg, 'the embedded PostgreSQL runs under DATA_DIR')
  const tree = descendants(npm.pid!)
  const server = tree.find((p) => p.args.includes('src/server.ts') && /(^|\/)node /.test(p.args))
  t.ok(server, 'the node process of src/server.ts runs under npm')
  pids = [...tree.map((p) => p.pid), pg!.pid]
  t.ok(tree.some((p) => p.pid === pg!.pid), 'PostgreSQL is a child of the server, under npm')

  npm.kill('SIGTERM')
  await npmExited
  await eventually(t, 'the server and PostgreSQL to exit', () => alive([server!.pid, pg!.pid]).length === 0, { timeoutMs: 30_000 })
    .catch(() => {})
  t.same(alive([server!.pid, pg!.pid]), [], 'node and postgres are gone with npm')
  t.same(alive(pids), [], 'nothing of the launcher chain is left')
  t.equal(runningServer(path.join(dataDir, 'pg')), null, 'no live postmaster.pid under DATA_DIR')
  t.equal(await listening(port), false, 'the API port is free')
  t.equal(await listening(pgPort), false, 'the PostgreSQL port is free')
})
