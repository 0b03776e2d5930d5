import t from 'tap'
import type postgres from 'postgres'
import { openClient } from '../../src/db/client.js'
import { REFERENCES_SYNC_PATH } from '../../src/routes/rest-contract.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { createCatalogue } from '../helpers/order-fixtures.js'
import { serverDatabase, waitingBackend } from '../helpers/server-database.js'
import { eventually } from '../helpers/eventually.js'
import { ready } from '../helpers/server-process.js'

/*
 * The server process SIGKILLed in the middle of a large references sync (20,000 items and 20,000 offers),
 * made deterministic as in platform/orders-faults.test.ts: a trigger on offers (written after items) waits on an
 * advisory lock the test holds, so the request's transaction is caught after the items are written and
 * before it commits. Nothing may be stored; restarted, the re-send applies everything once.
 */

const HOLD = 7_700_023
const N = 20_000

/** Makes every UPDATE statement on `table` wait, after its writes, on HOLD while a test's connection holds it. */
async function holdAfterUpdateOf (sql: postgres.Sql, table: 'items' | 'offers'): Promise<void> {
  await sql.unsafe(`create function oxs_test_hold() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${HOLD}); return null; end $$;
    create trigger oxs_test_hold after update on ${table} for each statement execute function oxs_test_hold()`)
}

/** How many of the seller's items and offers carry a sync ID of the test's (`tag`). */
async function mapped (sql: postgres.Sql, sellerId: number, tag: string): Promise<{ items: number, offers: number }> {
  const [row] = await sql<Array<{ items: number, offers: number }>>`select
    (select count(*)::int from items where seller_id = ${sellerId} and item_sync_id like ${`ITEM-${tag}-%`}) as items,
    (select count(*)::int from offers where seller_id = ${sellerId} and offer_sync_id like ${`VAR-${tag}-%`}) as offers`
  return row
}

t.test('the server SIGKILLed inside a 40,000-row references sync: nothing stored; restarted, the re-send applies all', async (t) => {
  const { url, database, start: startServer } = await serverDatabase(t)
  const { sql } = database
  const seller = await createSeller(database)
  const line = await createCatalogue(database, seller, 'F')
  await sql`insert into items (seller_id, item_name) select ${seller.sellerId}, 'Item ' || g from generate_series(1, ${N}) g`
  await sql`insert into offers (seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    select ${seller.sellerId}, ${line.skuId}, 1, 2, 2 from generate_series(1, ${N}) g`
  const itemIds = (await sql`select id from items where seller_id = ${seller.sellerId} and item_sync_id is null order by id`).map((r) => r.id as number)
  const offerIds = (await sql`select id from offers where seller_id = ${seller.sellerId} and offer_sync_id is null order by id`).map((r) => r.id as number)
  t.equal(itemIds.length, N)
  const rows = [
    ...itemIds.map((id, i) => ({ type: 'ITEM', id, syncId: `ITEM-K-${i}` })),
    ...offerIds.map((id, i) => ({ type: 'OFFER', id, syncId: `VAR-K-${i}` }))
  ]
  const key = await credential(database, seller.sellerId, 'api-key')
  const state = () => mapped(sql, seller.sellerId, 'K')

  await holdAfterUpdateOf(sql, 'offers')
  const holder = openClient(url, { max: 1, application: 'oxs-test-holder' })
  await holder`select pg_advisory_lock(${HOLD})`
  let held = true
  const release = async () => {
    if (!held) return
    held = false
    await holder`select pg_advisory_unlock(${HOLD})`
    await holder.end({ timeout: 5 })
  }
  t.teardown(release)

  const start = async () => {
    const { server, port } = await startServer()
    const send = async () => {
      const res = await fetch(`http://127.0.0.1:${port}${REFERENCES_SYNC_PATH}`, {
        method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(rows)
      })
      return { status: res.status, json: await res.json() as { data?: Record<string, number> } }
    }
    return { server, send }
  }

  const first = await start()
  const answer = first.send().then(() => 'answered', (err: Error) => err.message)
  const { pid, written } = await waitingBackend(t, sql, 'the sync', 60_000)
  t.ok(written.includes('items') && written.includes('offers'), `caught after its writes: ${written.join(', ')}`)
  first.server.child.kill('SIGKILL')
  await first.server.exited
  t.equal(await answer, 'fetch failed', 'the client lost its connection')
  // The dead process's transaction lives until its backend notices: let it go on, it can never commit.
  await release()
  await eventually(t, 'the orphaned backend gone', async () =>
    (await sql`select count(*)::int as n from pg_stat_activity where pid = ${pid}`)[0].n === 0, { timeoutMs: 30_000 })
  t.same(await state(), { items: 0, offers: 0 }, 'all or nothing: the items written before the kill were rolled back')

  const second = await start()
  const resent = await second.send()
  t.same([resent.status, resent.json.data?.inserted, resent.json.data?.failed], [200, 2 * N, 0], 'the re-send applies every row')
  t.same(await state(), { items: N, offers: N })
  const again = await second.send()
  t.same([again.status, again.json.data?.unchanged], [200, 2 * N], 'and again: unchanged')
})

t.test('a backend terminated while the item writes wait and the offer writes are queued behind them: 503, nothing stored; ' +
  'the same call applies; SIGTERM there finishes the sync within the grace', async (t) => {
  // The sync sends a type's writes while it decides the next (sync-references.ts): held inside the items'
  // UPDATE, the offers' UPDATE is already on the wire behind it. Terminating the backend fails both promises.
  const { url, database, start } = await serverDatabase(t)
  const { sql } = database
  const seller = await createSeller(database)
  const line = await createCatalogue(database, seller, 'T')
  const n = 2_000
  await sql`insert into items (seller_id, item_name) select ${seller.sellerId}, 'Item ' || g from generate_series(1, ${n}) g`
  await sql`insert into offers (seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax)
    select ${seller.sellerId}, ${line.skuId}, 1, 2, 2 from generate_series(1, ${n}) g`
  const ids = async (table: string, column: string) => (await sql.unsafe(`select id from ${table}
    where seller_id = ${seller.sellerId} and ${column} is null order by id`)).map((r) => r.id as number)
  const rows = [
    ...(await ids('items', 'item_sync_id')).map((id, i) => ({ type: 'ITEM', id, syncId: `ITEM-T-${i}` })),
    ...(await ids('offers', 'offer_sync_id')).map((id, i) => ({ type: 'OFFER', id, syncId: `VAR-T-${i}` }))
  ]
  const key = await credential(database, seller.sellerId, 'api-key')
  const state = () => mapped(sql, seller.sellerId, 'T')
  await holdAfterUpdateOf(sql, 'items')
  const holder = openClient(url, { max: 1, application: 'oxs-test-holder' })
  t.teardown(() => holder.end({ timeout: 5 }))
  const send = async (port: number) => {
    const res = await fetch(`http://127.0.0.1:${port}${REFERENCES_SYNC_PATH}`, {
      method: 'PUT', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(rows)
    })
    return { status: res.status, json: await res.json() as { data?: Record<string, number>, code?: string } }
  }

  const first = await start()
  await holder`select pg_advisory_lock(${HOLD})`
  const answer = send(first.port)
  const { pid } = await waitingBackend(t, sql, 'the sync', 30_000)
  await sql`select pg_terminate_backend(${pid})`
  await holder`select pg_advisory_unlock(${HOLD})`
  const cut = await answer
  t.same([cut.status, cut.json.code], [503, 'SERVICE_UNAVAILABLE'], 'the REST 503 of a database that went away')
  t.same(await state(), { items: 0, offers: 0 }, 'nothing stored of either type')
  await eventually(t, 'ready again', () => ready(first.port), { timeoutMs: 10_000 })
  const again = await send(first.port)
  t.same([again.status, again.json.data?.inserted, again.json.data?.failed], [200, 2 * n, 0], 'the same call applies every row')
  t.same(await state(), { items: n, offers: n })
  t.equal(first.server.child.exitCode, null, 'the process lived through it')
  t.notMatch(first.server.stderr(), /uncaught|unhandled|TypeError|\n\s+at /i, 'no stack trace, no unhandled rejection')
  first.server.child.kill('SIGTERM')
  t.equal(await first.server.exited, 0)

  // SIGTERM while the sync waits there: the process lets it finish, answers, then exits 0.
  await sql`update items set item_sync_id = null where seller_id = ${seller.sellerId}`
  await sql`update offers set offer_sync_id = null where seller_id = ${seller.sellerId}`
  const second = await start({ SHUTDOWN_GRACE_MS: '10000' })
  await holder`select pg_advisory_lock(${HOLD})`
  const finishing = send(second.port)
  await waitingBackend(t, sql, 'the sync', 30_000)
  second.server.child.kill('SIGTERM')
  // Drained to the one thing left: the signal taken, the listener closed, only the sync in flight.
  await eventually(t, 'the server closing', async () => !(await ready(second.port)))
  t.equal(second.server.child.exitCode, null, 'still running while the sync is in flight')
  await holder`select pg_advisory_unlock(${HOLD})`
  const done = await finishing
  t.same([done.status, done.json.data?.inserted], [200, 2 * n], 'the sync finished and answered')
  t.equal(await second.server.exited, 0, 'then the process exited 0')
  t.same(await state(), { items: n, offers: n })
})
