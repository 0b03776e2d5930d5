// The real server (src/server.ts) as a child process, for tests of start-up, shutdown and faults.
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export function freePort (): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}

export interface ServerProcess {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  /** Parsed pino lines of stdout so far (other lines as { msg }). */
  lines: () => Array<Record<string, any>>
  exited: Promise<number | null>
}

export function startServer (env: Record<string, string>): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    // No coverage from this child: tsx maps functions differently from tap's TypeScript loader, and once
    // merged its records mark functions as uncovered that the tests do run (functions fell below 80 %).
    cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', _TAPJS_PROCESSINFO_COVERAGE_: '0', ...env }
  })
  let out = ''; let err = ''
  child.stdout!.on('data', (d) => { out += d })
  child.stderr!.on('data', (d) => { err += d })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const lines = () => out.split('\n').filter((l) => l.trim() !== '').map((l) => {
    try { return JSON.parse(l) as Record<string, any> } catch { return { msg: l } }
  })
  return { child, stdout: () => out, stderr: () => err, lines, exited }
}

export async function ready (port: number): Promise<boolean> {
  try { return (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200 } catch { return false }
}
