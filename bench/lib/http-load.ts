import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import { choiceKnob } from './knobs.js'
import { parseProcStat } from './proc-cpu.js'

/*
 * HTTP load for the benchmarks: N keep-alive connections sending one request over and over for a while.
 * wrk (C; Debian's package) when it is on the PATH, autocannon otherwise (BENCH_LOAD=wrk|autocannon
 * chooses). The load generator shares the machine with the server and PostgreSQL, so its own CPU is
 * part of what a target seems to cost: receiving and parsing 300 KB answers, autocannon spent about
 * 0.5 ms of CPU per page of 100 orders and wrk 0.15 ms (measured here). Either way the load's CPU per
 * request is reported, so the tables say how much of the machine it took.
 */

export interface LoadOptions {
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  connections: number
  seconds: number
}

export interface LoadResult {
  requests: number
  perSecond: number
  /** Latency percentiles, ms. */
  p50: number
  p99: number
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number
  /** CPU time of the load generator, ms in all. */
  cpuMs: number
}

function wrkAvailable (): boolean {
  return spawnSync('wrk', ['--version']).error === undefined
}

function chooseTool (): 'wrk' | 'autocannon' {
  const asked = choiceKnob('BENCH_LOAD', ['wrk', 'autocannon'])
  if (asked === 'autocannon') return asked
  if (wrkAvailable()) return 'wrk'
  if (asked === 'wrk') throw new Error('BENCH_LOAD=wrk but wrk is not on the PATH (apt-get install wrk)')
  return 'autocannon'
}

export const LOAD_TOOL = chooseTool()

/** A Lua long string holding `text` (no closing bracket of the same level can occur in it). */
function luaString (text: string): string {
  let level = ''
  while (text.includes(`]${level}]`)) level += '='
  return `[${level}[${text}]${level}]`
}

/** The wrk script: the request, and one JSON line of figures when the run is done. */
function wrkScript (options: LoadOptions): string {
  const headers = Object.entries(options.headers).map(([k, v]) => `wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)
  return [
    `wrk.method = "${options.method}"`,
    ...(options.body === undefined ? [] : [`wrk.body = ${luaString(options.body)}`]),
    ...headers,
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'{"requests":%d,"us":%d,"p50":%.3f,"p99":%.3f,"errors":%d}\\n\', summary.requests, summary.duration,',
    '    latency:percentile(50) / 1000, latency:percentile(99) / 1000, e.status + e.connect + e.read + e.write + e.timeout))',
    'end'
  ].join('\n')
}

async function runWrk (options: LoadOptions): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-wrk-'))
  const script = path.join(dir, 'request.lua')
  fs.writeFileSync(script, wrkScript(options))
  try {
    // wrk's CPU: read from the shell that waited for it (its children's user and system time).
    const args = ['-t1', `-c${options.connections}`, `-d${options.seconds}s`, '--timeout', '30s', '-s', script, options.url]
    const child = spawn('sh', ['-c', 'wrk "$@" | tail -n 1; cat /proc/$$/stat', 'sh', ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    const [figures, stat] = out.trim().split('\n')
    if (code !== 0 || !figures?.startsWith('{') || !stat) throw new Error(`wrk failed (${code}): ${out}`)
    const r = JSON.parse(figures) as { requests: number, us: number, p50: number, p99: number, errors: number }
    const cpuMs = parseProcStat(stat).childrenMs
    return {
      requests: r.requests, perSecond: r.requests / (r.us / 1e6), p50: r.p50, p99: r.p99, errors: r.errors, cpuMs
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function runAutocannon (options: LoadOptions): Promise<LoadResult> {
  const before = process.cpuUsage()
  const r = await autocannon({
    url: options.url,
    method: options.method,
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds
  })
  const used = process.cpuUsage(before)
  return {
    requests: r.requests.total,
    perSecond: r.requests.total / options.seconds,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    cpuMs: (used.user + used.system) / 1000
  }
}

/** Sends the request from `connections` connections for `seconds`, with the bench's load generator. */
export async function httpLoad (options: LoadOptions): Promise<LoadResult> {
  return LOAD_TOOL === 'wrk' ? await runWrk(options) : await runAutocannon(options)
}
