import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import postgres from 'postgres'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { benchDatabase, machineLine } from '../lib/database.js'
import { topUpReferenceRecords, type ReferenceRecord } from '../lib/reference-records.js'
import { numberKnob } from '../lib/knobs.js'
import { issueCredential } from '../../src/credentials/service.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'

/*
 * References sync benchmark (`npm run bench:references`): BENCH_REFERENCE_ROWS (100,000) sync IDs in one
 * PUT /v2/references/sync-data, over real HTTP, against a seller of a database holding
 * BENCH_BACKGROUND_ORDERS (1,700,000) orders written by the demo seed: seller 1 gets 59.5 % of them, so it is
 * the issue's "seller with 1,000,000 orders".
 *
 *   1. a fresh database (embedded PostgreSQL, or BENCH_DATABASE_URL's server), the demo seed, VACUUM ANALYZE;
 *      seller 1 gets extra items and offers (by SQL) so that it has as many records as rows are sent: every
 *      retailer, shop, item and offer it has is in the request;
 *   2. the real server (`npm start`'s command, in a child process: its RSS is its own);
 *   3. the orders page (GraphQL `orders`, limit 20, pages spread over the seller's orders) read in a loop
 *      from one connection for BENCH_BASELINE_S (10) seconds: p50/p99 without a sync;
 *   4. the sync, three times: first mapping (inserted), a rotation of every sync ID (updated: the
 *      clear-then-set path, every row a "swap"), the same again (unchanged); rows/s, the server's peak RSS,
 *      and the orders page read in the same loop meanwhile;
 *   5. sustained: rotations back to back for BENCH_BASELINE_S seconds, the orders page read meanwhile (a p99
 *      of as many reads as the baseline's);
 *   6. the limit: the rotation's writes as bare SQL on the bench's connection, the orders page read meanwhile
 *      (what the database's share of a sync costs the reads);
 *   7. with BENCH_NICE_PAIRS=N: N pairs of the limit's writes with their backend at nice 0 and nice 19, and
 *      what the server's backends were doing meanwhile (sampled from pg_stat_activity); then the same writes
 *      on another seller's rows (none of which the reads join); then as long a CPU burnt at nice 19 by a
 *      process that touches no table;
 *   8. with BENCH_COMPARE_ROOT=<another checkout>: that checkout's server started on the same database too,
 *      and BENCH_COMPARE_CYCLES (3) cycles of [alone, sustained] on this checkout's server, then on that one:
 *      before and after in one process, on one seed, interleaved so that the machine's drift falls on both;
 *   9. with BENCH_INLINE_CYCLES=N: two more servers of this checkout, one as it runs and one whose syncs run
 *      the same work on the service's thread, no worker (inline-work.ts, preloaded), and N cycles of [the
 *      orders page alone on each, rotations back to back on the thread's server, on the inline server, the
 *      bare writes back to back], the three loaded arms in a different order each cycle: does the
 *      references thread earn its keep?
 *
 * Quick run: BENCH_BACKGROUND_ORDERS=100000 npm run bench:references
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BACKGROUND = numberKnob('BENCH_BACKGROUND_ORDERS', 1_700_000, { min: 1, integer: true })
const ROWS = numberKnob('BENCH_REFERENCE_ROWS', 100_000, { min: 1, integer: true })
const BASELINE_S = numberKnob('BENCH_BASELINE_S', 10, { above: 0 })
const COMPARE_ROOT = process.env.BENCH_COMPARE_ROOT
const COMPARE_CYCLES = numberKnob('BENCH_COMPARE_CYCLES', 3, { min: 1, integer: true })
const NICE_PAIRS = numberKnob('BENCH_NICE_PAIRS', 0, { min: 0, integer: true })
const INLINE_CYCLES = numberKnob('BENCH_INLINE_CYCLES', 0, { min: 0, integer: true })
if (INLINE_CYCLES > 0 && COMPARE_ROOT) {
  // Each moves every sync ID from the state it expects the one before to have left.
  throw new Error('BENCH_INLINE_CYCLES and BENCH_COMPARE_ROOT run one at a time')
}
if (NICE_PAIRS > 0 && process.env.BENCH_DATABASE_URL) {
  // Another server's backends belong to its own user: this process may not change their priority.
  throw new Error('BENCH_NICE_PAIRS needs the embedded PostgreSQL (unset BENCH_DATABASE_URL)')
}
const SELLER = 1
/** Another seller of the demo seed, whose rows the orders reads (seller 1's) never join. */
const OTHER_SELLER = 2

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`)
const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)) })
  })
}

function memory (pid: number): { rssMb: number, peakMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }
}
function resetPeak (pid: number): void {
  try { fs.writeFileSync(`/proc/${pid}/clear_refs`, '5') } catch { /* not resettable: the peak is since start */ }
}

async function startServer (
  databaseUrl: string, root = ROOT, preload?: string
): Promise<{ child: ChildProcess, base: string, command: string }> {
  const port = await freePort()
  const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start as string
  // `exec node …` since 48b3a36 (npm's shell then hands signals to node): the command is the same node's.
  const [command, ...args] = start.replace(/^exec\s+/, '').split(/\s+/)
  if (command !== 'node') throw new Error(`expected the start script to run node, got: ${start}`)
  // BENCH_CPU_PROF=DIR: the server writes a V8 CPU profile there when it exits (where its time went).
  if (process.env.BENCH_CPU_PROF) args.unshift('--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`)
  // After the start script's own --import (tsx), before its entry file.
  if (preload !== undefined) args.splice(args.length - 1, 0, '--import', pathToFileURL(preload).href)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ORDER_EXCHANGE_ENV: 'testing',
      RATE_LIMIT_ENABLED: 'false',
      WORKER_ENABLED: 'false',
      SEED_DEMO: 'false',
      SHED_EVENT_LOOP_DELAY_MS: '0'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`)
    try {
      if ((await fetch(`${base}/health/ready`)).ok) return { child, base, command: start }
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error('server did not become ready in 60 s')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const SYNC_ID_COLUMNS: Record<string, [string, string, string]> = {
  RETAILER: ['seller_retailers', 'retailer_id', 'sync_id'],
  SHOP: ['seller_shops', 'shop_id', 'sync_id'],
  ITEM: ['items', 'id', 'item_sync_id'],
  OFFER: ['offers', 'id', 'offer_sync_id']
}

/**
 * The rotation's writes as bare SQL (no HTTP, parsing, reads, decision or idempotency): every one of
 * `records`' sync IDs moved by `shift` within its type, one UPDATE per type, the unique checks deferred,
 * one transaction on `client`.
 */
function bareRotation (seller: number, records: ReferenceRecord[]):
(client: postgres.Sql, shift: number) => Promise<unknown> {
  const byType = new Map<string, number[]>()
  for (const r of records) byType.set(r.type, [...(byType.get(r.type) ?? []), r.id])
  return (client, shift) => client.begin(async (tx) => {
    await tx`set constraints all deferred`
    for (const [type, ids] of byType) {
      const [table, id, syncId] = SYNC_ID_COLUMNS[type]
      const syncIds = ids.map((_, p) => `${type}-${(p + shift) % ids.length}`)
      await tx.unsafe(`update ${table} x set ${syncId} = v.s from unnest($1::int[], $2::text[]) as v(id, s)
        where x.seller_id = ${seller} and x.${id} = v.id`, [ids, syncIds])
    }
  })
}

/**
 * Samples what this database's other client backends (the server's, not `writer`) are doing until `until`
 * resolves: active and on the CPU, or waiting and on what; counts of samples.
 */
async function sampleWaits (sql: postgres.Sql, writer: number, until: Promise<unknown>): Promise<Map<string, number>> {
  const state = { done: false }
  until.finally(() => { state.done = true }).catch(() => {})
  const counts = new Map<string, number>()
  while (!state.done) {
    const rows = await sql<Array<{ what: string }>>`
      select case when wait_event is null then 'active, on the CPU' else wait_event_type || ': ' || wait_event end as what
      from pg_stat_activity
      where datname = current_database() and backend_type = 'client backend' and state = 'active'
        and pid not in (${writer}, pg_backend_pid())`
    for (const { what } of rows) counts.set(what, (counts.get(what) ?? 0) + 1)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return counts
}

/** Reads orders pages in a loop until `until` resolves; the latency of each read. */
async function readLoop (base: string, token: string, pages: number, until: Promise<unknown>): Promise<number[]> {
  const state = { done: false }
  until.finally(() => { state.done = true }).catch(() => {})
  const each: number[] = []
  let page = 1
  while (!state.done) {
    page = (page * 7919) % pages + 1
    const t0 = performance.now()
    const res = await fetch(`${base}/v2/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{ orders(input: {page: ${page}, limit: 20}) { pageInfo { total } nodes { orderId retailer { syncId } shop { syncId retailerSyncId }
          orderItems { item { itemSyncId } offer { offerSyncId } } } } }`
      })
    })
    const text = await res.text()
    if (res.status !== 200 || text.includes('"errors"')) throw new Error(`orders read answered ${res.status}: ${text.slice(0, 300)}`)
    each.push(performance.now() - t0)
  }
  return each.sort((a, b) => a - b)
}

async function main (): Promise<void> {
  const bench = await benchDatabase('references')
  const { database } = bench
  const { sql } = database
  let child: ChildProcess | undefined
  let other: ChildProcess | undefined
  const inlineChildren: ChildProcess[] = []
  try {
    const [pgVersion] = await sql`select current_setting('server_version') as v`
    let t0 = performance.now()
    await seed(database, { orders: BACKGROUND, seed: 1, anchor: DEFAULT_ANCHOR })
    log(`background: ${fmt(BACKGROUND)} orders seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

    // Seller 1's records, topped up with items and offers until there are ROWS of them.
    const records = await topUpReferenceRecords(sql, SELLER, ROWS)
    // BENCH_NICE_PAIRS' last arm writes as many rows of another seller, none of which the reads join.
    const otherRecords = NICE_PAIRS > 0 ? await topUpReferenceRecords(sql, OTHER_SELLER, ROWS) : []
    const [orders] = await sql`select count(*)::int as n from orders where seller_id = ${SELLER} and not is_deleted`
    await sql`vacuum analyze`
    await sql`checkpoint`
    log(`seller ${SELLER}: ${fmt(orders.n)} orders, ${fmt(records.length)} records to map`)

    const key = (await issueCredential(database.db, { sellerId: SELLER, kind: 'api-key', environment: 'testing' })).secret
    const token = (await issueCredential(database.db, { sellerId: SELLER, kind: 'access-token', environment: 'testing' })).secret
    const server = await startServer(bench.url)
    child = server.child
    const pid = child.pid!
    const pages = Math.max(1, Math.floor(orders.n / 20))

    // Warm-up, then the orders page alone.
    await readLoop(server.base, token, pages, new Promise((resolve) => setTimeout(resolve, 2000)))
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const alone = await readLoop(server.base, token, pages, sleep(BASELINE_S * 1000))
    log(`orders page alone: ${alone.length} reads, p50 ${percentile(alone, 0.5).toFixed(1)} ms, p99 ${percentile(alone, 0.99).toFixed(1)} ms`)

    // Round 1: every record its own sync ID; round 2: each one its neighbour's within its type (a rotation:
    // every row takes a sync ID another record holds now); round 3: the same again.
    const size = new Map<string, number>()
    const position = records.map((r) => { const p = size.get(r.type) ?? 0; size.set(r.type, p + 1); return p })
    const body = (round: number) => Buffer.from(JSON.stringify(records.map((r, i) => ({
      type: r.type,
      id: r.id,
      syncId: `${r.type}-${round === 1 ? position[i] : (position[i] + 1) % size.get(r.type)!}`
    }))))
    type Result = {
      name: string, ms: number, rowsPerS: number, peakMb: number, reads: number[], data: Record<string, unknown>
    }
    const results: Result[] = []
    type Answer = { status: number, json: { data: Record<string, unknown> } }
    const putReferences = async (payload: Buffer, base = server.base): Promise<Answer> => {
      const res = await fetch(`${base}${REFERENCES_SYNC_PATH}`, {
        method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: payload
      })
      return { status: res.status, json: await res.json() as { data: Record<string, unknown> } }
    }
    const rounds = [[1, 'first mapping (inserted)'], [2, 'rotation of every sync ID (updated)'], [3, 'the same again (unchanged)']] as const
    for (const [round, name] of rounds) {
      const payload = body(round)
      resetPeak(pid)
      t0 = performance.now()
      const sync = putReferences(payload)
      const [answer, reads] = await Promise.all([sync, readLoop(server.base, token, pages, sync)])
      const ms = performance.now() - t0
      if (answer.status !== 200 || answer.json.data.failed !== 0) {
        throw new Error(`sync answered ${answer.status}: ${JSON.stringify(answer.json).slice(0, 400)}`)
      }
      const { peakMb } = memory(pid)
      const { errors: _errors, ...data } = answer.json.data
      results.push({ name, ms, rowsPerS: records.length / (ms / 1000), peakMb, reads, data })
      log(`${name}: ${(ms / 1000).toFixed(2)} s, ${fmt(records.length / (ms / 1000))} rows/s, peak RSS ${peakMb.toFixed(0)} MB, ` +
        `${reads.length} orders reads meanwhile p99 ${percentile(reads, 0.99).toFixed(1)} ms; ${JSON.stringify(data)}`)
    }

    // Sustained: rotations back to back for BENCH_BASELINE_S seconds, the orders page read meanwhile as
    // long as the baseline was: a p99 of as many reads as the baseline's, where a single sync holds only
    // the 7–30 reads it overlaps (their p99 is their slowest). Two bodies, written beforehand (the bench's
    // own event loop is not busy with them meanwhile), sent in turn: from either one's state the other
    // moves every sync ID.
    const rotated = (shift: number) => Buffer.from(JSON.stringify(records.map((r, i) => ({
      type: r.type, id: r.id, syncId: `${r.type}-${(position[i] + shift) % size.get(r.type)!}`
    }))))
    const sustain = async (base: string, payloads: Buffer[]) => {
      let syncs = 0
      const started = performance.now()
      const work = (async () => {
        while (performance.now() - started < BASELINE_S * 1000) {
          const { status, json } = await putReferences(payloads[syncs % payloads.length], base)
          if (status !== 200 || json.data.updated !== records.length) {
            throw new Error(`sustained sync answered ${status}: ${JSON.stringify(json).slice(0, 400)}`)
          }
          syncs++
        }
      })()
      const [, reads] = await Promise.all([work, readLoop(base, token, pages, work)])
      return { syncs, ms: performance.now() - started, reads }
    }
    const sustained = await sustain(server.base, [rotated(2), rotated(3)])
    const { syncs: sustainedSyncs, ms: sustainedMs, reads: sustainedReads } = sustained
    const sustainedRows = sustainedSyncs * records.length
    log(`sustained: ${sustainedSyncs} rotations in ${(sustainedMs / 1000).toFixed(1)} s, ${fmt(sustainedRows / (sustainedMs / 1000))} rows/s, ` +
      `${sustainedReads.length} orders reads meanwhile p50 ${percentile(sustainedReads, 0.5).toFixed(1)} ms, p99 ${percentile(sustainedReads, 0.99).toFixed(1)} ms`)
    const lastShift = sustainedSyncs % 2 === 1 ? 2 : 3

    // The limit: the rotation's writes alone, as bare SQL on the bench's own connection (no HTTP, no
    // parsing, no reads, no decision, no idempotency): one UPDATE per type, the unique checks deferred, one
    // transaction. What the service's rotation would take if everything but PostgreSQL's writes were free.
    const rotateSeller = bareRotation(SELLER, records)
    t0 = performance.now()
    const bare = rotateSeller(sql, lastShift + 1)
    // The orders page read meanwhile: what the database's share of a sync costs the reads, with no work
    // of the server's beside them.
    const [, limitReads] = await Promise.all([bare, readLoop(server.base, token, pages, bare)])
    const limitMs = performance.now() - t0
    log(`limit, the rotation's writes as bare SQL: ${(limitMs / 1000).toFixed(2)} s, ${fmt(records.length / (limitMs / 1000))} rows/s, ` +
      `${limitReads.length} orders reads meanwhile p99 ${percentile(limitReads, 0.99).toFixed(1)} ms`)

    // BENCH_INLINE_CYCLES=N: the references thread against the same work inline, in one process and on one
    // database. Two fresh servers of this checkout, started and warmed alike (the phases' server above has a
    // history of its own): one as the service runs, one whose syncs run on the service's thread
    // (inline-work.ts). Each cycle reads the orders page alone from each, then runs three loaded arms for
    // BASELINE_S each, in an order that turns from cycle to cycle (the machine's drift falls on all three):
    // rotations back to back on the thread's server and on the inline server, the orders page read from the
    // same server meanwhile, and the bare writes back to back, read from either server in turn. Pooled.
    type Arm = { rotations: number, ms: number, reads: number[] }
    const armed = new Map<string, Arm>()
    const inlinePeaks = new Map<string, number>()
    if (INLINE_CYCLES > 0) {
      const threaded = await startServer(bench.url)
      inlineChildren.push(threaded.child)
      const inlined = await startServer(bench.url, ROOT, path.join(ROOT, 'bench/references/inline-work.ts'))
      inlineChildren.push(inlined.child)
      const servers = { thread: threaded, inline: inlined }
      // Two bodies, written beforehand, taken in turn: from either one's state the other moves every sync ID.
      const shifts = [lastShift + 2, lastShift + 3]
      const bodies = new Map(shifts.map((shift) => [shift, rotated(shift)]))
      let at = lastShift + 1
      const next = () => { at = at === shifts[0] ? shifts[1] : shifts[0]; return at }
      const syncOn = (base: string) => async (shift: number) => {
        const { status, json } = await putReferences(bodies.get(shift)!, base)
        if (status !== 200 || json.data.updated !== records.length) {
          throw new Error(`sync answered ${status}: ${JSON.stringify(json).slice(0, 400)}`)
        }
      }
      const backToBack = async (readBase: string, once: (shift: number) => Promise<unknown>): Promise<Arm> => {
        let rotations = 0
        const begun = performance.now()
        const work = (async () => {
          while (performance.now() - begun < BASELINE_S * 1000) { await once(next()); rotations++ }
        })()
        const [, reads] = await Promise.all([work, readLoop(readBase, token, pages, work)])
        return { rotations, ms: performance.now() - begun, reads }
      }
      // Each server's first reads and sync compile its code (and start the references thread).
      for (const { base } of Object.values(servers)) {
        await readLoop(base, token, pages, sleep(2000))
        await syncOn(base)(next())
      }
      for (const { child } of Object.values(servers)) resetPeak(child.pid!)
      type Loaded = 'thread' | 'inline' | 'bare writes'
      const turns: Loaded[][] = [['thread', 'inline', 'bare writes'], ['inline', 'bare writes', 'thread'],
        ['bare writes', 'thread', 'inline'], ['inline', 'thread', 'bare writes'],
        ['thread', 'bare writes', 'inline'], ['bare writes', 'inline', 'thread']]
      const pool = (name: string) => armed.get(name) ?? armed.set(name, { rotations: 0, ms: 0, reads: [] }).get(name)!
      for (let cycle = 1; cycle <= INLINE_CYCLES; cycle++) {
        const line: string[] = []
        for (const [name, { base }] of Object.entries(servers)) {
          const alone = await readLoop(base, token, pages, sleep(BASELINE_S * 500))
          pool(`alone (${name}'s server)`).reads.push(...alone)
          line.push(`alone on ${name}'s p99 ${percentile(alone, 0.99).toFixed(1)}`)
        }
        for (const name of turns[(cycle - 1) % turns.length]) {
          const readFrom = name === 'bare writes' ? (cycle % 2 === 1 ? 'thread' : 'inline') : name
          const base = servers[readFrom].base
          const run = await backToBack(base, name === 'bare writes' ? (shift) => rotateSeller(sql, shift) : syncOn(base))
          const into = pool(name)
          into.rotations += run.rotations
          into.ms += run.ms
          into.reads.push(...run.reads)
          line.push(`${name}${name === 'bare writes' ? ` (read from ${readFrom}'s)` : ''} ${run.rotations} × ` +
            `${fmt(run.rotations * records.length / (run.ms / 1000))} rows/s p99 ${percentile(run.reads, 0.99).toFixed(1)}`)
        }
        log(`inline cycle ${cycle}: ${line.join(', ')} (ms)`)
      }
      for (const arm of armed.values()) arm.reads.sort((a, b) => a - b)
      for (const [name, { child }] of Object.entries(servers)) inlinePeaks.set(name, memory(child.pid!).peakMb)
    }

    // BENCH_NICE_PAIRS=N: is what the bare writes cost the reads the CPU they take? N pairs of the limit's
    // writes on a connection of their own, its backend at nice 0 and at nice 19 (os.setPriority: the
    // embedded server's backends are this user's processes), in alternating order, each pair after 3 s
    // of the reads alone; every phase's reads pooled. If the reads suffered for the CPU, the niced writes
    // would cost them much less (bench/results/2026-11-27-references-sync.md, sixth round).
    const nicePooled = new Map<string, number[]>()
    const waited = new Map<string, number>()
    const rotateOther = bareRotation(OTHER_SELLER, otherRecords)
    for (let pair = 1, shift = lastShift + 2; pair <= NICE_PAIRS; pair++) {
      const pool = (name: string) => nicePooled.get(name) ?? nicePooled.set(name, []).get(name)!
      const alone = await readLoop(server.base, token, pages, sleep(3000))
      pool('alone').push(...alone)
      for (const nice of pair % 2 === 1 ? [0, 19] : [19, 0]) {
        const client = postgres(bench.url, { max: 1, onnotice: () => {} })
        try {
          const [{ pid: backend }] = await client<Array<{ pid: number }>>`select pg_backend_pid() as pid`
          os.setPriority(backend, nice)
          const started = performance.now()
          const writes = rotateSeller(client, shift++)
          const [, reads, waits] = await Promise.all([writes, readLoop(server.base, token, pages, writes),
            sampleWaits(sql, backend, writes)])
          for (const [what, n] of waits) {
            const name = `${what} (writes at nice ${nice})`
            waited.set(name, (waited.get(name) ?? 0) + n)
          }
          pool(`writes at nice ${nice}`).push(...reads)
          log(`nice pair ${pair}, writes at nice ${nice}: ${(performance.now() - started).toFixed(0)} ms, ` +
            `${reads.length} reads p99 ${percentile(reads, 0.99).toFixed(1)} ms (alone before: ${percentile(alone, 0.99).toFixed(1)} ms)`)
        } finally {
          await client.end()
        }
      }
      // The same writes on another seller's rows, none of which the reads join: what writes cost the reads
      // through the machine (caches, memory, the WAL) rather than through the rows they read.
      {
        const client = postgres(bench.url, { max: 1, onnotice: () => {} })
        try {
          const started = performance.now()
          const writes = rotateOther(client, pair)
          const reads = await readLoop(server.base, token, pages, writes)
          pool('writes at nice 0 on another seller\'s rows').push(...reads)
          log(`nice pair ${pair}, writes on seller ${OTHER_SELLER}'s rows: ${(performance.now() - started).toFixed(0)} ms, ` +
            `${reads.length} reads p99 ${percentile(reads, 0.99).toFixed(1)} ms`)
        } finally {
          await client.end()
        }
      }
      // The same time of one CPU burnt at nice 19 by a process that touches no table: what any busy
      // neighbour costs the reads on this machine.
      const burner = spawn('nice', ['-n', '19', process.execPath, '-e', 'const end = Date.now() + 2800; while (Date.now() < end);'],
        { stdio: 'ignore' })
      const burnt = new Promise((resolve) => burner.once('exit', resolve))
      const reads = await readLoop(server.base, token, pages, burnt)
      pool('a CPU burnt at nice 19, no writes').push(...reads)
      log(`nice pair ${pair}, a CPU burnt at nice 19: ${reads.length} reads p99 ${percentile(reads, 0.99).toFixed(1)} ms`)
    }

    // Before and after: another checkout's server on the same database, the two measured in turn.
    type Pool = { reads: number[], rows: number, ms: number }
    const compared = new Map<string, Pool>()
    if (COMPARE_ROOT) {
      const started = await startServer(bench.url, COMPARE_ROOT)
      other = started.child
      await readLoop(started.base, token, pages, sleep(2000))
      const bodies = [rotated(lastShift + 2), rotated(lastShift + 3)]
      const servers = [['this checkout', server.base], [COMPARE_ROOT, started.base]] as const
      const pool = (name: string) => {
        const found = compared.get(name) ?? { reads: [], rows: 0, ms: 0 }
        compared.set(name, found)
        return found
      }
      for (let cycle = 1; cycle <= COMPARE_CYCLES; cycle++) {
        for (const [label, base] of servers) {
          const alone = await readLoop(base, token, pages, sleep(BASELINE_S * 1000))
          pool(`${label}: alone`).reads.push(...alone)
          const run = await sustain(base, bodies)
          const into = pool(`${label}: sustained`)
          into.reads.push(...run.reads)
          into.rows += run.syncs * records.length
          into.ms += run.ms
          // Each body moves every sync ID from the other's state: an odd number of syncs swaps their order.
          if (run.syncs % 2 === 1) bodies.reverse()
          log(`compare, cycle ${cycle}, ${label}: alone p99 ${percentile(alone.sort((a, b) => a - b), 0.99).toFixed(1)} ms; ` +
            `sustained ${run.syncs} rotations, p99 ${percentile(run.reads.sort((a, b) => a - b), 0.99).toFixed(1)} ms`)
        }
      }
    }

    console.log(`\nMachine: ${machineLine()}; PostgreSQL ${pgVersion.v as string}${process.env.BENCH_DATABASE_URL ? ' (BENCH_DATABASE_URL)' : ' (embedded)'}`)
    console.log(`Server: \`${server.command}\`; ${fmt(BACKGROUND)} background orders (seller ${SELLER}: ${fmt(orders.n)}), ${fmt(records.length)} rows in one request (${(body(1).length / 2 ** 20).toFixed(1)} MiB)\n`)
    console.log('| phase | wall (s) | rows/s | server peak RSS (MB) | orders page reads | p50 (ms) | p99 (ms) | answer |')
    console.log('|---|---|---|---|---|---|---|---|')
    console.log(`| orders page alone (${BASELINE_S} s) | | | | ${alone.length} | ${percentile(alone, 0.5).toFixed(1)} | ${percentile(alone, 0.99).toFixed(1)} | |`)
    for (const r of results) {
      console.log(`| ${r.name} | ${(r.ms / 1000).toFixed(2)} | ${fmt(r.rowsPerS)} | ${r.peakMb.toFixed(0)} | ${r.reads.length} | ` +
        `${percentile(r.reads, 0.5).toFixed(1)} | ${percentile(r.reads, 0.99).toFixed(1)} | ${JSON.stringify(r.data).replace(/"/g, '')} |`)
    }
    console.log(`| sustained: ${sustainedSyncs} rotations back to back (${(sustainedMs / 1000).toFixed(1)} s) | ${(sustainedMs / 1000).toFixed(2)} | ` +
      `${fmt(sustainedRows / (sustainedMs / 1000))} | | ${sustainedReads.length} | ${percentile(sustainedReads, 0.5).toFixed(1)} | ` +
      `${percentile(sustainedReads, 0.99).toFixed(1)} | |`)
    console.log(`| limit: the rotation's writes alone (bare SQL, one UPDATE per type) | ${(limitMs / 1000).toFixed(2)} | ` +
      `${fmt(records.length / (limitMs / 1000))} | | ${limitReads.length} | ${percentile(limitReads, 0.5).toFixed(1)} | ` +
      `${percentile(limitReads, 0.99).toFixed(1)} | |`)
    if (nicePooled.size > 0) {
      console.log(`\nThe limit's writes at normal and low CPU priority (BENCH_NICE_PAIRS=${NICE_PAIRS}), orders reads pooled:\n`)
      console.log('| phase | orders page reads | p50 (ms) | p99 (ms) |')
      console.log('|---|---|---|---|')
      for (const [name, reads] of nicePooled) {
        reads.sort((a, b) => a - b)
        console.log(`| ${name} | ${reads.length} | ${percentile(reads, 0.5).toFixed(1)} | ${percentile(reads, 0.99).toFixed(1)} |`)
      }
      console.log('\nThe other backends of the database sampled meanwhile (every ~2 ms): state / wait event, samples\n')
      for (const [what, n] of [...waited].sort()) console.log(`- ${what}: ${n}`)
    }
    if (armed.size > 0) {
      const p99 = (name: string) => percentile(armed.get(name)!.reads, 0.99)
      const bare = armed.get('bare writes')!
      const bareRate = bare.rotations * records.length / (bare.ms / 1000)
      console.log(`\nThe references thread against the same work inline (BENCH_INLINE_CYCLES=${INLINE_CYCLES}), ` +
        `${BASELINE_S} s an arm a cycle, orders reads pooled:\n`)
      console.log('| arm | rotations | rows/s | rows/s / bare writes\' | orders page reads | p50 (ms) | p99 (ms) | p99 / bare writes\' | server peak RSS (MB) |')
      console.log('|---|---|---|---|---|---|---|---|---|')
      for (const [name, { rotations, ms, reads }] of armed) {
        const rate = rotations * records.length / (ms / 1000)
        const peak = inlinePeaks.get(name)
        console.log(`| ${name} | ${rotations || ''} | ${rotations ? fmt(rate) : ''} | ${rotations ? (rate / bareRate).toFixed(2) : ''} | ` +
          `${reads.length} | ${percentile(reads, 0.5).toFixed(1)} | ${percentile(reads, 0.99).toFixed(1)} | ` +
          `${name.startsWith('alone') ? '' : (p99(name) / p99('bare writes')).toFixed(2)} | ${peak === undefined ? '' : peak.toFixed(0)} |`)
      }
      console.log(`\nInline p99 / thread p99: ${(p99('inline') / p99('thread')).toFixed(2)}`)
    }
    if (compared.size > 0) {
      console.log(`\nBefore and after (BENCH_COMPARE_ROOT), ${COMPARE_CYCLES} cycles of ${BASELINE_S} s alone and ${BASELINE_S} s of rotations back to back per server, pooled:\n`)
      console.log('| server | phase | rows/s | orders page reads | p50 (ms) | p99 (ms) | p99 / alone |')
      console.log('|---|---|---|---|---|---|---|')
      for (const [name, { reads, rows, ms }] of compared) {
        const [label, phase] = name.split(': ')
        reads.sort((a, b) => a - b)
        const alone = [...compared.get(`${label}: alone`)!.reads].sort((a, b) => a - b)
        const ratio = phase === 'sustained' ? `${((percentile(reads, 0.99) / percentile(alone, 0.99) - 1) * 100).toFixed(0)} %` : ''
        console.log(`| ${label} | ${phase} | ${rows > 0 ? fmt(rows / (ms / 1000)) : ''} | ${reads.length} | ` +
          `${percentile(reads, 0.5).toFixed(1)} | ${percentile(reads, 0.99).toFixed(1)} | ${ratio} |`)
      }
    }
  } finally {
    for (const process of [child, other, ...inlineChildren]) {
      if (process && process.exitCode === null) {
        process.kill('SIGTERM')
        await new Promise((resolve) => process.once('exit', resolve))
      }
    }
    await bench.dispose()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
