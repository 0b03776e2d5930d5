import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { createClient, MemoryCheckpointStore, type FullOrder, type StatusChange } from '@order-exchange/client'
import { liveOrders, serve, type Served } from '../helpers/client.js'
import { eventually } from '../helpers/eventually.js'

/*
 * client.orders.poll (client rule 8 of docs/api/orders.md) against the real service: each change handed out
 * exactly once, across polls, restarts of the polling process, deletions and updates during a walk.
 */

const POLLER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'poller.mjs')
const run = promisify(execFile)

function workDir (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-poll-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const lines = (file: string): string[] => existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []

/** One poller process to its end (or its clean stop after `stopAfter` changes). */
async function poller (
  served: Served,
  dir: string,
  options: { stopAfter?: number, limit?: number } = {}
): Promise<Record<string, number | string | null>> {
  const { stdout } = await run(process.execPath, [POLLER, served.baseUrl, served.accessToken, path.join(dir, 'checkpoint.json'), path.join(dir, 'out.txt'),
    String(options.stopAfter ?? 0), '0', String(options.limit ?? 25)], { env: { PATH: process.env.PATH ?? '' } })
  return JSON.parse(stdout.trim())
}

async function placedOrders (served: Served): Promise<string[]> {
  const rows = await served.database.sql`select id::text from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED' order by created_at, id`
  return rows.map((r) => r.id as string)
}

async function accept (served: Served, ids: string[]): Promise<void> {
  const client = createClient({ baseUrl: served.baseUrl, apiKey: served.apiKey })
  const results = await client.orders.updateStatuses(ids.map((orderId): StatusChange => ({ orderId, status: 'ORDER_ACCEPTED' })))
  if (!results.every((r) => r.outcome === 'changed')) throw new Error(`not all accepted: ${JSON.stringify(results)}`)
}

async function softDelete (served: Served, ids: string[]): Promise<void> {
  await served.database.sql`update orders set is_deleted = true, deleted_at = now() where id = any(${ids.map(Number)}::bigint[])`
}

const keysOf = async (served: Served): Promise<string[]> => (await liveOrders(served)).map((o) => `${o.id}@${o.updatedAt}`)

t.test('a poll across restarts of its process with a file checkpoint hands nothing twice and misses nothing', async (t) => {
  const served = await serve(t, { orders: 400 })
  const dir = workDir(t)
  const out = path.join(dir, 'out.txt')
  const before = await keysOf(served)
  t.ok(before.length > 100, `${before.length} orders, ${Math.ceil(before.length / 25)} pages of 25`)

  // A stops cleanly in the middle of its walk (on page 3).
  t.same(await poller(served, dir, { stopAfter: 60 }), { stopped: 60 })
  const first = lines(out)
  t.equal(first.length, 60)
  t.ok(JSON.parse(readFileSync(path.join(dir, 'checkpoint.json'), 'utf8')).walk, 'the checkpoint holds the unfinished walk')

  // Meanwhile the seller accepts orders already handed out and orders not yet reached; orders are
  // deleted before and after where A stopped (deleted ones pull later orders back a place).
  const handedIds = new Set(first.map((k) => k.split('@')[0]))
  const placed = await placedOrders(served)
  const changedHanded = placed.filter((id) => handedIds.has(id)).slice(0, 4)
  const changedLater = placed.filter((id) => !handedIds.has(id)).slice(0, 4)
  await accept(served, [...changedHanded, ...changedLater])
  const deletedHanded = [...handedIds].filter((id) => !changedHanded.includes(id)).slice(10, 13)
  const unhanded = (await liveOrders(served))
    .map((o) => o.id)
    .filter((id) => !handedIds.has(id) && !changedLater.includes(id))
  const deletedLater = unhanded.slice(5, 7)
  await softDelete(served, [...deletedHanded, ...deletedLater])

  // B resumes A's walk and finishes it.
  const b = await poller(served, dir)
  const walked = lines(out)
  t.equal(b.handled, walked.length - 60)
  t.equal(new Set(walked).size, walked.length, 'no change handed out twice')
  const versions = new Set([...before, ...await keysOf(served)])
  t.same(walked.filter((k) => !versions.has(k)), [], 'only real versions of orders')
  const count = (id: string, keys: string[]): number => keys.filter((k) => k.startsWith(`${id}@`)).length
  t.same(changedLater.map((id) => count(id, walked)), [1, 1, 1, 1], 'changed before the walk reached it: its latest version, once')
  t.same(deletedLater.filter((id) => count(id, walked) > 0), [], 'deleted before the walk reached it: not handed out')
  t.same(changedHanded.map((id) => count(id, walked)), [1, 1, 1, 1], 'changed behind the walk: its new version waits for the next poll')

  // C: the changes made behind the walk, once each, and nothing else, though it reads a minute back.
  const c = await poller(served, dir)
  const latest = new Map((await liveOrders(served)).map((o) => [o.id, `${o.id}@${o.updatedAt}`]))
  t.same(lines(out).slice(walked.length).sort(), changedHanded.map((id) => latest.get(id)).sort(), 'the next poll hands out the changes made behind the walk')
  t.equal(c.handled, 4)
  t.equal((await poller(served, dir)).handled, 0, 'then nothing: nothing twice across polls')

  // New changes after that: exactly those, once.
  const all = lines(out)
  const next = (await placedOrders(served)).slice(0, 3)
  await accept(served, next)
  const e = await poller(served, dir)
  t.equal(e.handled, 3)
  const newest = new Map((await liveOrders(served)).map((o) => [o.id, `${o.id}@${o.updatedAt}`]))
  t.same(lines(out).slice(all.length).sort(), next.map((id) => newest.get(id)).sort(), 'the three new changes')

  const everything = lines(out)
  t.equal(new Set(everything).size, everything.length, 'over five polls and a restart, no change twice')
  t.same((await keysOf(served)).filter((k) => !everything.includes(k)), [], 'and every live order\'s latest change handed out')
})

t.test('a poller killed mid-walk (SIGKILL) and started again misses nothing; at most the change in hand comes twice', async (t) => {
  const served = await serve(t, { orders: 400 })
  const dir = workDir(t)
  const out = path.join(dir, 'out.txt')
  const args = [POLLER, served.baseUrl, served.accessToken, path.join(dir, 'checkpoint.json'), out, '0', '3', '20']
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '' }, stdio: 'ignore' })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  t.teardown(() => { child.kill('SIGKILL') })
  await eventually(t, () => `seventy changes written (${lines(out).length})`, () => lines(out).length >= 70, { intervalMs: 5 })
  child.kill('SIGKILL')
  await exited
  const killed = lines(out)
  t.ok(killed.length >= 70 && killed.length < (await liveOrders(served)).length, `killed after ${killed.length} changes`)

  const again = await poller(served, dir, { limit: 20 })
  const all = lines(out)
  t.same((await keysOf(served)).filter((k) => !all.includes(k)), [], 'every change handed out')
  const twice = all.filter((k, i) => all.indexOf(k) !== i)
  t.ok(twice.length <= 1, `at most one change twice (${twice.length})`)
  if (twice.length === 1) t.equal(twice[0], killed[killed.length - 1], 'and only the one in hand when the process died')
  t.equal(again.handled, all.length - killed.length)
})

t.test('orders deleted and updated during a walk: none missed, none twice', async (t) => {
  const served = await serve(t, { orders: 300 })
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const checkpoint = new MemoryCheckpointStore()
  const start = await served.database.sql`select to_char(percentile_disc(0.2) within group (order by updated_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at
    from orders where seller_id = 1 and not is_deleted`
  const startAt = start[0]!.at as string
  const inSet = async (): Promise<string[]> => (await liveOrders(served)).filter((o) => o.updatedAt > startAt).map((o) => `${o.id}@${o.updatedAt}`)
  const initial = await inSet()
  const outside = (await liveOrders(served)).filter((o) => o.updatedAt <= startAt).map((o) => o.id)
  t.ok(outside.length > 5, 'some orders are older than the poll\'s start')

  const handed: string[] = []
  let acted = false
  const first = await client.orders.poll<FullOrder>({
    checkpoint,
    startAt,
    limit: 10,
    handle: async (order) => {
      handed.push(`${order.orderId}@${order.updatedAt}`)
      if (handed.length !== 15 || acted) return
      acted = true
      // On page 2: four orders of page 1 are deleted (the rest move four places back, some onto page 1),
      // and an order older than the poll's start is accepted: it joins the set on an early page.
      await softDelete(served, handed.slice(2, 6).map((k) => k.split('@')[0]!))
      const early = outside.find(() => true)!
      await served.database.sql`update orders set status = 'ORDER_ACCEPTED', updated_at = now() where id = ${Number(early)}`
    }
  })
  t.equal(new Set(handed).size, handed.length, 'none twice')
  t.same(initial.filter((k) => !handed.includes(k)), [], 'every order in the set when the walk began was handed out')
  t.equal(first.handled, handed.length)

  const second: string[] = []
  await client.orders.poll<FullOrder>({ checkpoint, limit: 10, handle: (order) => { second.push(`${order.orderId}@${order.updatedAt}`) } })
  const joiner = (await liveOrders(served)).find((o) => o.id === outside[0])!
  const joinerKey = `${joiner.id}@${joiner.updatedAt}`
  t.ok(second.includes(joinerKey), 'the order that joined during the walk, before where the walk was, comes with the next poll')
  t.equal([...handed, ...second].filter((k) => k === joinerKey).length, 1, 'once')
  t.same(second.filter((k) => handed.includes(k)), [], 'nothing of the first poll again')
})

t.test('a handler that throws stops the poll; the next poll hands that change over again', async (t) => {
  const served = await serve(t, { orders: 60 })
  const client = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const checkpoint = new MemoryCheckpointStore()
  const handed: string[] = []
  await t.rejects(client.orders.poll({
    checkpoint,
    handle: (order) => {
      if (handed.length === 7) throw new Error('ERP unavailable')
      handed.push(order.orderId)
    }
  }), { message: 'ERP unavailable' })
  const rest: string[] = []
  await client.orders.poll({ checkpoint, handle: (order) => { rest.push(order.orderId) } })
  t.same([...handed, ...rest], (await liveOrders(served)).map((o) => o.id), 'the eighth order first, then the rest, each once')
})
