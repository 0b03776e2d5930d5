import { PerformanceObserver } from 'node:perf_hooks'
import { print } from 'graphql'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueCredential } from '../../src/credentials/service.js'
import { openDatabase } from '../../src/db/client.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'

/*
 * Heap allocated per request for a full page of 100 orders, with the pass-through and with standard
 * execution, in one process (started by run.ts with --expose-gc and a 256 MB young generation). Each
 * sample: a full GC, heapUsed, one request through app.inject, heapUsed again, with no GC in between
 * (checked with a gc PerformanceObserver; a sample with a GC is dropped), so the growth is what the
 * request allocated and still held when it ended plus its garbage. app.inject's own allocations (the
 * request and the response body as a string) are in both figures.
 */

const [url, timeZone] = process.argv.slice(2)
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')

const database = openDatabase(url!, { max: 4 })
const env = { DATABASE_URL: url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false', SHED_EVENT_LOOP_DELAY_MS: '0', SHED_HEAP_USED_BYTES: '0', BUSINESS_TIMEZONE: timeZone }
const { secret } = await issueCredential(database.db, { sellerId: 1, kind: 'access-token', environment: 'testing' })

let gcs = 0
new PerformanceObserver((list) => { gcs += list.getEntries().length }).observe({ entryTypes: ['gc'] })

async function sample (app: FastifyInstance, payload: string): Promise<{ bytes: number, body: number } | null> {
  gc!()
  await new Promise((resolve) => setTimeout(resolve, 20)) // let the observer report the forced GC
  const seen = gcs
  const before = process.memoryUsage().heapUsed
  const res = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, payload })
  const after = process.memoryUsage().heapUsed
  await new Promise((resolve) => setTimeout(resolve, 20))
  if (res.statusCode !== 200) throw new Error(`answered ${res.statusCode}`)
  return gcs === seen ? { bytes: after - before, body: res.body.length } : null
}

const rows: string[] = []
const figures: Record<string, number> = {}
for (const passThrough of [false, true]) {
  const app = await buildApp({ config: loadConfig({ ...env, GRAPHQL_PASS_THROUGH: String(passThrough) }), database })
  await app.ready()
  const payload = JSON.stringify({ query: print(OrdersDocument), variables: { input: { page: 1, limit: 100 } } })
  for (let i = 0; i < 20; i++) await sample(app, payload) // warm-up: JIT, prepared statements, caches
  const samples: number[] = []
  let body = 0
  for (let i = 0; i < 40 && samples.length < 25; i++) {
    const s = await sample(app, payload)
    if (s) { samples.push(s.bytes); body = s.body }
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  const label = passThrough ? 'pass-through (service)' : 'standard execution'
  figures[label] = median
  rows.push(`| ${label} | ${(body / 1024).toFixed(0)} KB | ${(median / 1024).toFixed(0)} KB | ${(median / body).toFixed(1)} | ${samples.length} |`)
  await app.close()
}
await database.close()
const [standard, fast] = Object.values(figures) as [number, number]
process.stdout.write([
  'heap allocated per request, full page of 100 orders (median of samples without a GC):',
  '',
  '| execution | response body | heap allocated | per response byte | samples |',
  '|---|---:|---:|---:|---:|',
  ...rows,
  '',
  `pass-through allocates ${(100 * fast / standard).toFixed(0)} % of what standard execution does (${(standard / fast).toFixed(1)}× less).`
].join('\n') + '\n')
process.exit(0)
