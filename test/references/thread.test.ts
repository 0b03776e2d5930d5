import { once } from 'node:events'
import t from 'tap'
import type postgres from 'postgres'
import { openClient } from '../../src/db/client.js'
import { KeySpace, LOCK_BUCKETS } from '../../src/platform/batch-sql.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { build } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { listen } from '../helpers/fuzz.js'
import { eventually } from '../helpers/eventually.js'

/*
 * The references thread (src/references/reference-engine.ts) as a part that fails: stopped while a body
 * streams into it, stopped while the sync waits for the seller's lock (between the body and the decision),
 * closed with the app; and two sellers' syncs sharing it at once. A sync whose thread dies answers 500 and
 * stores nothing; the next sync gets a new thread and applies.
 */

async function sellerWithItems (database: Parameters<typeof createSeller>[0], n: number) {
  const seller = await createSeller(database)
  await database.sql`insert into items (seller_id, item_name) select ${seller.sellerId}, 'Item ' || g from generate_series(1, ${n}) g`
  const ids = (await database.sql`select id from items where seller_id = ${seller.sellerId} order by id`).map((r) => r.id as number)
  const key = await credential(database, seller.sellerId, 'api-key')
  return { sellerId: seller.sellerId, ids, key }
}

async function mapped (sql: postgres.Sql, sellerId: number, tag: string): Promise<number> {
  const [row] = await sql`select count(*)::int as n from items where seller_id = ${sellerId} and item_sync_id like ${`${tag}-%`}`
  return row.n as number
}

const rowsFor = (ids: number[], tag: string) => ids.map((id, i) => ({ type: 'ITEM', id, syncId: `${tag}-${i}` }))

t.test('the thread stopped while the body streams in: 500, nothing stored; the next sync gets a new thread', async (t) => {
  const { app, database } = await build(t)
  const base = await listen(app)
  const { sellerId, ids, key } = await sellerWithItems(database, 2000)
  const body = Buffer.from(JSON.stringify(rowsFor(ids, 'S')))
  const half = Math.floor(body.length / 2)

  let sendRest!: () => void
  const rest = new Promise<void>((resolve) => { sendRest = resolve })
  const stream = new ReadableStream<Uint8Array>({
    async start (controller) {
      controller.enqueue(body.subarray(0, half))
      await rest
      controller.enqueue(body.subarray(half))
      controller.close()
    }
  })
  const answer = fetch(`${base}${REFERENCES_SYNC_PATH}`, {
    method: 'PUT',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half'
  } as RequestInit)
  await eventually(t, 'the thread started', () => app.referenceEngine.worker !== undefined, { timeoutMs: 10_000 })
  const first = app.referenceEngine.worker!
  await first.terminate()
  sendRest()
  const res = await answer
  const json = await res.json() as { status: number, message: string }
  t.equal(res.status, 500)
  t.equal(json.message, 'Internal server error', 'the thread\'s fault is not told')
  t.equal(await mapped(database.sql, sellerId, 'S'), 0, 'nothing stored')

  const again = await fetch(`${base}${REFERENCES_SYNC_PATH}`, {
    method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body
  })
  t.equal(again.status, 200)
  t.match(await again.json(), { data: { received: ids.length, inserted: ids.length, failed: 0 } })
  t.equal(await mapped(database.sql, sellerId, 'S'), ids.length, 'the re-send applied')
  t.not(app.referenceEngine.worker, first, 'a new thread')
})

t.test('the thread stopped while the sync waits for the seller\'s lock: 500, the transaction rolled back', async (t) => {
  const { app, database } = await build(t)
  const base = await listen(app)
  const { sellerId, ids, key } = await sellerWithItems(database, 500)
  const holder = openClient(database.url, { max: 1, application: 'oxs-test-holder' })
  t.teardown(() => holder.end({ timeout: 5 }))
  const lock = [KeySpace.sellerReferences, sellerId % LOCK_BUCKETS] as const
  await holder`select pg_advisory_lock(${lock[0]}, ${lock[1]})`

  const answer = fetch(`${base}${REFERENCES_SYNC_PATH}`, {
    method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(rowsFor(ids, 'L'))
  })
  // This database's waiter only: pg_locks is the whole server's, and a test file running beside this one can
  // wait on the same key in its own database (it did in CI; the thread was then not started yet).
  await eventually(t, 'the sync waits for the lock', async () => (await database.sql`select 1 from pg_locks
    where locktype = 'advisory' and not granted and classid = ${lock[0]} and objid = ${lock[1]}
      and database = (select oid from pg_database where datname = current_database())`).length > 0, { timeoutMs: 10_000 })
  await app.referenceEngine.worker!.terminate()
  await holder`select pg_advisory_unlock(${lock[0]}, ${lock[1]})`
  const res = await answer
  t.equal(res.status, 500)
  t.equal(await mapped(database.sql, sellerId, 'L'), 0, 'nothing stored')

  const again = await fetch(`${base}${REFERENCES_SYNC_PATH}`, {
    method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(rowsFor(ids, 'L'))
  })
  t.equal(again.status, 200)
  t.equal(await mapped(database.sql, sellerId, 'L'), ids.length)
})

t.test('two sellers\' syncs share the thread at once, each answered on its own rows', async (t) => {
  const { app, database } = await build(t)
  const base = await listen(app)
  const a = await sellerWithItems(database, 6000)
  const b = await sellerWithItems(database, 6000)
  // b sends a's ids too: refused as not found, never applied to a's items.
  const put = (key: string, rows: unknown[]) => fetch(`${base}${REFERENCES_SYNC_PATH}`, {
    method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(rows)
  }).then(async (res) => ({ status: res.status, json: await res.json() as { data: Record<string, number> } }))
  const [ra, rb] = await Promise.all([
    put(a.key, rowsFor(a.ids, 'A')),
    put(b.key, [...rowsFor(b.ids, 'B'), ...rowsFor(a.ids.slice(0, 10), 'X')])
  ])
  t.equal(ra.status, 200)
  t.equal(rb.status, 200)
  t.match(ra.json.data, { received: 6000, inserted: 6000, failed: 0 })
  t.match(rb.json.data, { received: 6010, inserted: 6000, failed: 10 })
  t.equal(await mapped(database.sql, a.sellerId, 'A'), 6000)
  t.equal(await mapped(database.sql, b.sellerId, 'B'), 6000)
  t.equal(await mapped(database.sql, a.sellerId, 'X'), 0, 'no leak across sellers')
})

t.test('closing the app stops its thread', async (t) => {
  const { app, database } = await build(t)
  const { ids, key } = await sellerWithItems(database, 3)
  const res = await app.inject({
    method: 'PUT',
    url: REFERENCES_SYNC_PATH,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: JSON.stringify(rowsFor(ids, 'C'))
  })
  t.equal(res.statusCode, 200)
  const worker = app.referenceEngine.worker
  t.ok(worker, 'a thread ran the sync')
  const exited = once(worker!, 'exit')
  await app.close()
  await exited
  t.equal(app.referenceEngine.worker, undefined)
})
