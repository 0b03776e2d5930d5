import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberList } from '../lib/knobs.js'
import { issueCredential } from '../../src/credentials/service.js'
import { sellers } from '../../src/db/schema.js'
import { prepareSyncBatch, type SyncBatch } from '../../src/shipments/sync-batch.js'
import { writeOutstandingShipments } from '../../src/shipments/write-outstanding.js'
import { SYNC_PATH } from '../../src/routes/rest-contract.js'
import { writeByCopyMerge, type WriteCounts } from './copy-merge.js'
import { copyInto, copyLines, makeRows } from './rows.js'

/*
 * Shipment sync benchmark: PUTs of 1,000 / 10,000 / 100,000 rows over real HTTP to the real server
 * (src/server.ts in a child process, so its peak RSS is its own), each size as fresh inserts, then all
 * updates, then all unchanged; in the same run a COPY of the same rows into the same table as the
 * baseline; and, in process, the write strategy used (unnest) against COPY into a temp table + one merge.
 *
 *   npm run bench:sync                       # 1000,10000,100000
 *   npm run bench:sync -- 1000,10000         # sizes by argv (or SYNC_BENCH_SIZES)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:sync
 *   SYNC_BENCH_SERVER='node --import tsx src/server.ts' npm run bench:sync   # another server command
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
// The sizes as an argument (npm run bench:sync -- 1000,10000) or in SYNC_BENCH_SIZES, checked alike.
const sizes = numberList(process.argv[2] !== undefined ? 'The sizes argument' : 'SYNC_BENCH_SIZES',
  process.argv[2] ?? process.env.SYNC_BENCH_SIZES, [1000, 10_000, 100_000], { min: 1, max: 100_000, integer: true })

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)) })
  })
}

/** Peak RSS since the last reset, in MB; reset with clear_refs (Linux) so each phase gets its own peak. */
function memory (pid: number): { rssMb: number, peakMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }
}
let peakResettable = true
function resetPeak (pid: number): void {
  if (!peakResettable) return
  try { fs.writeFileSync(`/proc/${pid}/clear_refs`, '5') } catch { peakResettable = false }
}

let serverCommand = ''

async function startServer (databaseUrl: string): Promise<{ child: ChildProcess, base: string }> {
  const port = await freePort()
  // Exactly what `npm start` runs (its node flags included), so the RSS measured is the deployed one.
  const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string
  const [command, ...args] = (process.env.SYNC_BENCH_SERVER ?? start).split(/\s+/)
  if (command !== 'node') throw new Error(`expected the start script to run node, got: ${start}`)
  serverCommand = [command, ...args].join(' ')
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    // Throughput and memory are measured here, not limits: rate limits off (bench/load measures them).
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ORDER_EXCHANGE_ENV: 'testing', RATE_LIMIT_ENABLED: 'false' },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return { child, base }
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error('server did not become ready in 60 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

interface SyncData { received: number, inserted: number, updated: number, unchanged: number, failed: number }

async function put (base: string, key: string, body: Buffer): Promise<{ ms: number, data: SyncData }> {
  const start = performance.now()
  const res = await fetch(`${base}${SYNC_PATH}`, { method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body })
  const json = await res.json() as { statusCode: number, message: string, data: SyncData }
  const ms = performance.now() - start
  if (res.status !== 200) throw new Error(`PUT answered ${res.status}: ${json.message}`)
  return { ms, data: json.data }
}

function expectCount (what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`${what}: expected ${want}, got ${got}`)
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

async function main (): Promise<void> {
  const bench = await benchDatabase('shipment_sync')
  const { db, sql } = bench.database
  let child: ChildProcess | undefined
  try {
    const [httpSeller, copySeller, unnestSeller, mergeSeller] = await db.insert(sellers)
      .values(['HTTP sync', 'COPY baseline', 'unnest strategy', 'COPY+merge strategy'].map((name) => ({ name })))
      .returning({ id: sellers.id })
    const key = (await issueCredential(db, { sellerId: httpSeller.id, kind: 'api-key', environment: 'testing' })).secret
    const server = await startServer(bench.url)
    child = server.child
    const pid = child.pid!
    const idle = memory(pid)

    const table: string[] = []
    const results: Array<{ size: number, insertRate: number, copyRate: number, peakMb: number }> = []
    for (const size of sizes) {
      const prefix = `n${size}`
      const fresh = Buffer.from(JSON.stringify(makeRows(size, prefix)))
      const bumped = Buffer.from(JSON.stringify(makeRows(size, prefix, 1)))
      let sizePeak = 0
      const phases: Array<[string, Buffer, keyof SyncData]> = [['fresh inserts', fresh, 'inserted'], ['all updates', bumped, 'updated'], ['all unchanged', bumped, 'unchanged']]
      let insertRate = 0
      for (const [phase, body, counter] of phases) {
        resetPeak(pid)
        const { ms, data } = await put(server.base, key, body)
        expectCount(`${size} ${phase}`, data[counter], size)
        const { peakMb } = memory(pid)
        sizePeak = Math.max(sizePeak, peakMb)
        const rate = size / (ms / 1000)
        if (counter === 'inserted') insertRate = rate
        table.push(`| ${fmt(size)} | PUT, ${phase} | ${(body.length / 2 ** 20).toFixed(1)} MB | ${fmt(ms)} | ${fmt(rate)} | ${peakMb.toFixed(0)} |`)
      }
      const copyText = copyLines(makeRows(size, prefix), copySeller.id)
      const start = performance.now()
      await copyInto(sql`copy outstanding_shipments (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity) from stdin`, copyText)
      const copyMs = performance.now() - start
      const copyRate = size / (copyMs / 1000)
      table.push(`| ${fmt(size)} | COPY baseline, fresh inserts | ${(copyText.length / 2 ** 20).toFixed(1)} MB | ${fmt(copyMs)} | ${fmt(copyRate)} | – |`)
      results.push({ size, insertRate, copyRate, peakMb: sizePeak })
    }

    // Write strategy, in process (no HTTP, no parsing): the same batch through unnest and through COPY + merge.
    const largest = Math.max(...sizes)
    const strategies: string[] = []
    const strategyRuns: Array<[string, (batch: SyncBatch) => Promise<WriteCounts>]> = [
      ['unnest, 5,000-row chunks (used)', (batch) => db.transaction((tx) => writeOutstandingShipments(tx, unnestSeller.id, batch))],
      ['COPY into temp table + one merge', (batch) => sql.begin((tx) => writeByCopyMerge(tx, mergeSeller.id, batch)) as Promise<WriteCounts>]
    ]
    for (const [name, write] of strategyRuns) {
      const cells: string[] = []
      for (const [bump, counter] of [[0, 'inserted'], [1, 'updated'], [1, 'unchanged']] as const) {
        const batch = prepareSyncBatch(makeRows(largest, 'strategy', bump))
        const start = performance.now()
        const counts = await write(batch)
        const ms = performance.now() - start
        const got = counter === 'unchanged' ? largest - counts.inserted - counts.updated : counts[counter]
        expectCount(`${name} ${counter}`, got, largest)
        cells.push(`${fmt(ms)} ms (${fmt(largest / (ms / 1000))} rows/s)`)
      }
      strategies.push(`| ${name} | ${cells.join(' | ')} |`)
    }

    const final = memory(pid)
    const overallPeak = Math.max(...results.map((r) => r.peakMb))
    const [pg] = await sql`select version() as v`
    console.log(`\nShipment sync bench — ${machineLine()}`)
    console.log(`PostgreSQL: ${String(pg.v).split(',')[0]} (${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded, fsync on'})`)
    console.log(`Server: \`${serverCommand}\` in a child process; RSS idle ${idle.rssMb.toFixed(0)} MB, after the run ${final.rssMb.toFixed(0)} MB` +
      (peakResettable ? '; peak RSS reset before each PUT (clear_refs)' : '; peak RSS = VmHWM since start (clear_refs unavailable)'))
    console.log('\n| rows | phase | body | ms | rows/s | server peak RSS (MB) |')
    console.log('|---:|---|---:|---:|---:|---:|')
    for (const line of table) console.log(line)
    console.log(`\nWrite strategy, ${fmt(largest)} rows in one transaction, in process (no HTTP, no JSON parsing):`)
    console.log('\n| strategy | fresh inserts | all updates | all unchanged |')
    console.log('|---|---:|---:|---:|')
    for (const line of strategies) console.log(line)
    console.log('\nTargets (100,000 rows in one call):')
    for (const r of results.filter((x) => x.size === 100_000)) {
      const share = r.insertRate / r.copyRate
      console.log(`- PUT fresh inserts at ${(share * 100).toFixed(0)} % of COPY's rows/s (target ≥ 25 %): ${share >= 0.25 ? 'met' : 'NOT met'}`)
    }
    console.log(`- server peak RSS ${overallPeak.toFixed(0)} MB (target < 300 MB): ${overallPeak < 300 ? 'met' : 'NOT met'}`)
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await bench.dispose()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
