import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { AbortError, createClient, GraphqlError, MemoryCheckpointStore, type EventCheckpoint, type FullEvent } from '@order-exchange/client'
import { serve, type Served } from '../helpers/client.js'
import { eventually } from '../helpers/eventually.js'

/*
 * client.events.follow against the real service: each event handed out exactly once and in order, across
 * clean restarts of the following process (a file checkpoint), a SIGKILL, a handler that throws, and
 * while it keeps following; read the way the service hands stored orders out as they are (the pass-through).
 */

const FOLLOWER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'follower.mjs')
const run = promisify(execFile)

function workDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-follow-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const lines = (file: string): string[] => existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []

/** One follower process to its end (or its clean stop after `stopAfter` events). */
async function follower (
  served: Served, dir: string, options: { stopAfter?: number, limit?: number } = {}
): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [FOLLOWER, served.baseUrl, served.accessToken, path.join(dir, 'checkpoint.json'),
    path.join(dir, 'out.txt'), String(options.stopAfter ?? 0), '0', String(options.limit ?? 10)], { env: { PATH: process.env.PATH ?? '' } })
  return JSON.parse(stdout.trim())
}

/** Seller 1's event log as the database holds it, one line per event as the follower writes them. */
async function log (served: Served): Promise<string[]> {
  const rows = await served.database.sql`select 'evt_1_' || sequence || ' ' || type || ' ' || order_id as line
    from seller_events where seller_id = 1 order by seller_events.sequence`
  return rows.map((r) => r.line as string)
}

/** Changes some of seller 1's placed orders (the demo seed records no events: these are the log). */
async function change (served: Served, count: number, status: 'ORDER_ACCEPTED' | 'ORDER_REJECTED_BY_SELLER' = 'ORDER_ACCEPTED'): Promise<void> {
  const rows = await served.database.sql`select id::text from orders where seller_id = 1 and status = 'ORDER_PLACED' and not is_deleted
    order by id limit ${count}`
  const client = createClient({ baseUrl: served.baseUrl, apiKey: served.apiKey })
  const results = await client.orders.updateStatuses(rows.map((r) => ({ orderId: r.id as string, status, reason: status === 'ORDER_ACCEPTED' ? undefined : 'No stock' })))
  if (results.length !== count || !results.every((r) => r.outcome === 'changed')) throw new Error(`not all changed: ${JSON.stringify(results)}`)
}

t.test('a follower across restarts of its process with a file checkpoint: every event once, in order', async (t) => {
  const served = await serve(t, { orders: 400 })
  const dir = workDir(t)
  const out = path.join(dir, 'out.txt')
  await change(served, 25)
  t.same(await follower(served, dir, { stopAfter: 12 }), { stopped: 12 }, 'A stops cleanly after 12')
  t.same(JSON.parse(readFileSync(path.join(dir, 'checkpoint.json'), 'utf8')), { after: '12' }, 'the checkpoint is the last sequence handled')
  // Meanwhile more changes; B takes up after 12 and reads to the end.
  await change(served, 10, 'ORDER_REJECTED_BY_SELLER')
  t.same(await follower(served, dir), { handled: 23, after: '35' })
  await change(served, 5)
  t.same(await follower(served, dir, { limit: 2 }), { handled: 5, after: '40' }, 'C: the five new ones, two a page')
  t.same(await follower(served, dir), { handled: 0, after: '40' }, 'D: nothing more')
  t.same(lines(out), await log(served), 'every event of the log once, in sequence order')
  const pass = await served.app.metrics.graphqlPassThrough.get()
  t.ok((pass.values.find((v) => v.labels.outcome === 'answered')?.value ?? 0) >= 4, 'the client\'s document is answered by the pass-through')
})

t.test('a follower killed (SIGKILL) and started again misses nothing; at most the event in hand comes twice', async (t) => {
  const served = await serve(t, { orders: 500 })
  await change(served, 60)
  const dir = workDir(t)
  const out = path.join(dir, 'out.txt')
  const child = spawn(process.execPath, [FOLLOWER, served.baseUrl, served.accessToken, path.join(dir, 'checkpoint.json'), out, '0', '5', '10'],
    { env: { PATH: process.env.PATH ?? '' }, stdio: 'ignore' })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  t.teardown(() => { child.kill('SIGKILL') })
  await eventually(t, () => `twenty events written (${lines(out).length})`, () => lines(out).length >= 20, { intervalMs: 5 })
  child.kill('SIGKILL')
  await exited
  const killed = lines(out)
  t.ok(killed.length >= 20 && killed.length < 60, `killed after ${killed.length} events`)
  await follower(served, dir)
  const all = lines(out)
  const expected = await log(served)
  t.same([...new Set(all)], expected, 'every event, in order')
  const twice = all.filter((line, i) => all.indexOf(line) !== i)
  t.ok(twice.length <= 1, `at most one event twice (${twice.length})`)
  if (twice.length === 1) t.equal(twice[0], killed.at(-1), 'and only the one in hand when the process died')
})

t.test('a handler that throws stops follow(); the next call hands that event over again', async (t) => {
  const served = await serve(t, { orders: 200 })
  await change(served, 15)
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const checkpoint = new MemoryCheckpointStore<EventCheckpoint>()
  const handed: string[] = []
  await t.rejects(client.events.follow({
    checkpoint,
    limit: 4,
    handle: (event) => {
      if (handed.length === 7) throw new Error('ERP unavailable')
      handed.push(event.sequence)
    }
  }), { message: 'ERP unavailable' })
  t.same(await checkpoint.load(), { after: '7' })
  const rest: string[] = []
  t.same(await client.events.follow({ checkpoint, handle: (event) => { rest.push(event.sequence) } }), { handled: 8, after: '15' })
  t.same([...handed, ...rest], Array.from({ length: 15 }, (_, i) => String(i + 1)), 'the eighth first, then the rest, each once')
})

t.test('types; following on with intervalMs until aborted; a cursor older than the events kept is the service\'s error', async (t) => {
  const served = await serve(t, { orders: 200 })
  await change(served, 6)
  await change(served, 3, 'ORDER_REJECTED_BY_SELLER')
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const rejected: FullEvent[] = []
  const checkpoint = new MemoryCheckpointStore<EventCheckpoint>()
  t.same(await client.events.follow({ checkpoint, types: ['order.rejected'], handle: (e) => { rejected.push(e) } }), { handled: 3, after: '9' })
  t.same(rejected.map((e) => [e.type, e.reason, e.order?.orderStatus, e.previousStatus]), Array(3).fill(['order.rejected', 'No stock', 'ORDER_REJECTED_BY_SELLER', 'ORDER_PLACED']))

  // Keeps following: a change made while it waits arrives, then it stops when told to.
  const controller = new AbortController()
  const live: string[] = []
  const following = client.events.follow({
    checkpoint: new MemoryCheckpointStore<EventCheckpoint>(),
    intervalMs: 50,
    signal: controller.signal,
    handle: (e) => {
      live.push(e.sequence)
      if (live.length === 11) controller.abort()
    }
  })
  await eventually(t, 'the nine events there are handed over', () => live.length >= 9, { intervalMs: 10 })
  await change(served, 2)
  await t.rejects(following, AbortError)
  t.same(live, Array.from({ length: 11 }, (_, i) => String(i + 1)))

  // Retention removed events 1 to 5: a checkpoint at 2 is told which sequence is the oldest left.
  await served.database.sql`delete from seller_events where seller_id = 1 and sequence <= 5`
  const stale = new MemoryCheckpointStore<EventCheckpoint>()
  await stale.save({ after: '2' })
  const err = await client.events.follow({ checkpoint: stale, handle: () => {} }).catch((e: unknown) => e)
  t.ok(err instanceof GraphqlError)
  t.match((err as GraphqlError).message, /the oldest available sequence is 6/)
  const bad = new MemoryCheckpointStore<EventCheckpoint>()
  await bad.save({ after: '007' })
  await t.rejects(client.events.follow({ checkpoint: bad, handle: () => {} }), { message: 'the checkpoint\'s after must be an event sequence (a string of digits), got "007"' })
})
