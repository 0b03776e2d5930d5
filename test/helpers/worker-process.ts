// `order-exchange worker` as a real child process.
import { spawn, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { eventually } from './eventually.js'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/order-exchange.js')

export interface WorkerProcess {
  child: ChildProcess
  /** Parsed pino lines from stdout. */
  lines: Array<Record<string, any>>
  stderr: () => string
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

/**
 * `order-exchange worker` as a real child process; resolves once it logs that it started. Killed in teardown if
 * still alive.
 */
export async function spawnWorker (t: Test, env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    // The child compiles TypeScript with tsx, whose source maps do not line up with tap's: its coverage
    // would be merged onto the wrong lines, so tap's coverage is off in it (the same code is covered in-process).
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info', _TAPJS_PROCESSINFO_COVERAGE_: '0', ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: Array<Record<string, any>> = []
  let err = ''
  let buffered = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8')
    let i
    while ((i = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, i); buffered = buffered.slice(i + 1)
      try { lines.push(JSON.parse(line)) } catch { lines.push({ msg: line }) }
    }
  })
  child.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString('utf8') })
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let gone = false
  exited.then(() => { gone = true }, () => {})
  const output = (): string => `${err}\n${lines.map((l) => JSON.stringify(l)).join('\n')}`
  const outcome = await eventually(t, () => `the worker to start: ${output()}`, () =>
    lines.some((l) => l.msg === 'effects worker started') ? 'started' : gone ? 'exited' : null, { timeoutMs: 60_000 })
  if (outcome === 'exited') throw new Error(`worker did not start: ${output()}`)
  return { child, lines, stderr: () => err, exited }
}
