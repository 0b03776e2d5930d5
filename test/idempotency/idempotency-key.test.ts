import t from 'tap'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { purgeExpiredIdempotencyKeys } from '../../src/idempotency/idempotency-key.js'
import { TASKS } from '../../src/effects/jobs.js'
import { effectsTasks } from '../../src/worker-tasks.js'
import { build, rawClient, type TestDatabase } from '../helpers/build.js'
import { holdInTransaction } from '../helpers/held-transaction.js'
import { injectAfter } from '../helpers/faults.js'
import { notificationsOf, workerEnv } from '../helpers/effects.js'
import { faultProxy, serve } from '../helpers/client.js'
import { accept, createShop, orderStatus, reject } from '../helpers/status-update.js'

/*
 * Idempotency-Key on the status update and the shipment sync (Stripe's rules): the first answer is
 * stored with the work and replayed byte for byte; another request under the same key is 422; a retry
 * while the first runs waits for it (or gets 409); nothing is stored for work that did not commit.
 */

const STATUS = '/v2/accounting/orders/update-status'
const SYNC = '/v2/shipments/outstanding/sync-data'

function postStatus (app: FastifyInstance, key: string, body: unknown, idempotencyKey?: string) {
  return app.inject({
    method: 'POST',
    url: STATUS,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    payload: JSON.stringify(body)
  })
}

function putSync (app: FastifyInstance, key: string, body: string, idempotencyKey?: string) {
  return app.inject({
    method: 'PUT',
    url: SYNC,
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
    payload: body
  })
}

/** Every effect of a status change counted; notifications as the deliveries its events make (dispatched first). */
async function effects (database: TestDatabase): Promise<Record<string, number>> {
  const notifications = (await notificationsOf(database)).length
  const [row] = await database.sql`select (select count(*) from order_status_history)::int as history,
    (select count(*) from points_ledger where kind = 'ORDER_ACCEPTANCE')::int as ledger,
    (select count(*) from seller_events)::int as events, (select count(*) from graphile_worker._private_jobs)::int as jobs`
  return { ...row, notifications }
}

t.test('a status update retried with its key gets the first answer again, byte for byte, and changes nothing', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b] = await shop.orders(2)
  const body = { order_status: [accept(a), reject(b), accept(999_999)] }
  const first = await postStatus(app, key, body, 'batch-2026-11-23-001')
  t.equal(first.statusCode, 200)
  t.equal(first.headers['idempotent-replayed'], undefined)
  t.same(first.json().data.unchangedOrderIds, [], 'the first attempt changed both')
  const after = await effects(database)
  t.match(after, { history: 2, ledger: 1, events: 2, notifications: 6 }, 'the first attempt: two changes, each notified on three channels')

  const again = await postStatus(app, key, body, 'batch-2026-11-23-001')
  t.equal(again.statusCode, 200)
  t.equal(again.body, first.body, 'the same bytes')
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.same(await effects(database), after, 'no second history row, deduction or notification')

  const noKey = await postStatus(app, key, body)
  t.same(noKey.json().data.unchangedOrderIds, [a, b], 'without a key, a retry is still safe but says "unchanged"')

  const mismatch = await postStatus(app, key, { order_status: [accept(b)] }, 'batch-2026-11-23-001')
  t.equal(mismatch.statusCode, 422)
  t.same(mismatch.json(), {
    error: true,
    status: false,
    statusCode: 422,
    message: 'This Idempotency-Key was already used with a different request: use a new key for a new request',
    code: 'IDEMPOTENCY_KEY_REUSED'
  })

  const other = await createShop(database)
  const theirs = await other.order()
  const otherKey = await postStatus(app, await other.apiKey(), { order_status: [accept(theirs)] }, 'batch-2026-11-23-001')
  t.equal(otherKey.statusCode, 200, 'keys are per credential: another seller may use the same one')
  t.equal(otherKey.json().data.successful, 1)

  const invalidStatus = await postStatus(app, key, { order_status: [{ Order_id: a, Order_Status: 'SHIPPED' }] }, 'batch-400')
  const invalidAgain = await postStatus(app, key, { order_status: [{ Order_id: a, Order_Status: 'SHIPPED' }] }, 'batch-400')
  t.equal(invalidStatus.statusCode, 400)
  t.equal(invalidAgain.statusCode, 400, 'the invalid status\'s 400 is an answer too, replayed as such')
  t.equal(invalidAgain.body, invalidStatus.body)

  for (const bad of ['', ' spaced ', 'x'.repeat(256), 'naïve']) {
    const res = await postStatus(app, key, body, bad || undefined)
    if (bad === '') continue
    t.equal(res.statusCode, 400, JSON.stringify(bad))
    t.match(res.json(), { code: 'INVALID_IDEMPOTENCY_KEY', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' })
  }
})

t.test('a retry that arrives while the first is running waits for it and replays its answer; past lock_timeout it is 409', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const ids = await shop.orders(300)
  const body = { order_status: ids.map((id) => accept(id)) }
  const [one, two, three] = await Promise.all([0, 1, 2].map(() => postStatus(app, key, body, 'concurrent-1')))
  t.same([one.statusCode, two.statusCode, three.statusCode], [200, 200, 200])
  t.equal(one.body, two.body)
  t.equal(two.body, three.body)
  t.equal([one, two, three].filter((r) => r.headers['idempotent-replayed'] === 'true').length, 2, 'one did the work, two replayed it')
  t.same(one.json().data.unchangedOrderIds, [], 'every answer says the orders changed: the first attempt\'s answer')
  const [ledger] = await database.sql`select count(*)::int as n from points_ledger where kind = 'ORDER_ACCEPTANCE'`
  t.equal(ledger!.n, 300, 'each order charged once')

  // A first request that holds its key longer than the lock timeout.
  const slow = await build(t, { DB_LOCK_TIMEOUT_MS: '300' })
  const slowShop = await createShop(slow.database)
  const slowKey = await slowShop.apiKey()
  const [order] = await slowShop.orders(1)
  const [credential] = await slow.database.sql`select id from credentials order by id desc limit 1`
  const holder = rawClient(slow.database.url, { max: 1 })
  t.teardown(() => holder.end({ timeout: 1 }))
  const heldKey = await holdInTransaction(holder, (sql) =>
    sql`insert into idempotency_keys (credential_id, key, fingerprint, expires_at) values (${credential!.id}, 'held-1', 'x', now() + interval '1 day')`)
  const busy = await postStatus(slow.app, slowKey, { order_status: [accept(order)] }, 'held-1')
  t.equal(busy.statusCode, 409)
  t.same(busy.json(), {
    error: true,
    status: false,
    statusCode: 409,
    message: 'A request with this Idempotency-Key is still being processed: retry when it has finished',
    code: 'IDEMPOTENCY_KEY_IN_USE'
  })
  t.equal(await orderStatus(slow.database, order!), 'ORDER_PLACED', 'nothing applied')
  await heldKey.release().catch(() => {})
})

t.test('an answer lost after the commit: the retry with the key gets it; work that did not commit stores nothing', async (t) => {
  const served = await serve(t, { orders: 60 })
  const proxy = await faultProxy(t, served.baseUrl, (i) => i === 0 ? 'lose-answer' : 'pass')
  const [row] = await served.database.sql`select id from orders where seller_id = 1 and status = 'ORDER_PLACED' and not is_deleted order by id limit 1`
  const send = (): Promise<Response> => fetch(`${proxy.url}${STATUS}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${served.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'lost-answer-1' },
    body: JSON.stringify({ order_status: [accept(Number(row!.id))] })
  })
  await t.rejects(send(), 'the first answer never arrives')
  const retry = await send()
  t.equal(retry.status, 200)
  t.equal(retry.headers.get('idempotent-replayed'), 'true')
  t.same((await retry.json() as { data: unknown }).data, { successful: 1, failed: 0, errors: [], unchangedOrderIds: [] }, 'what the first attempt did: changed')

  // Backends terminated inside the batch's transaction: nothing committed, so nothing stored.
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const ids = await shop.orders(400)
  const killer = rawClient(database.url, { max: 1 })
  t.teardown(() => killer.end({ timeout: 1 }))
  const body = { order_status: ids.map((id) => accept(id)) }
  const pending = postStatus(app, key, body, 'terminated-1')
  await injectAfter(30, () => killer`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'order-exchange' and pid <> pg_backend_pid()`)
  const cut = await pending
  const [stored] = await database.sql`select count(*)::int as n from idempotency_keys where key = 'terminated-1' and outcome is not null`
  const [applied] = await database.sql`select count(*)::int as n from orders where id = any(${ids}::bigint[]) and status = 'ORDER_ACCEPTED'`
  t.ok(stored!.n === 0 ? applied!.n === 0 : applied!.n === ids.length, `all or nothing (${applied!.n} applied, key stored: ${stored!.n})`)
  const again = await postStatus(app, key, body, 'terminated-1')
  t.equal(again.statusCode, 200)
  if (stored!.n === 0) {
    t.equal(again.headers['idempotent-replayed'], undefined, 'the key was not stored: the retry did the work')
    t.equal(again.json().data.successful, ids.length)
  } else {
    t.equal(again.body, cut.body, 'the commit happened: the retry replays its answer')
  }
  const [after] = await database.sql`select count(*)::int as n from orders where id = any(${ids}::bigint[]) and status = 'ORDER_ACCEPTED'`
  t.equal(after!.n, ids.length, 'the retry converges')
})

t.test('a shipment sync retried with its key gets the first answer; another body under it is 422', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const body = JSON.stringify([{ retailerSyncId: 'R1', offerSyncId: 'O1', outstandingQuantity: '5' }, { retailerSyncId: 'R2', shopSyncId: null, offerSyncId: 'O2', outstandingQuantity: 2 }, { offerSyncId: 'x' }])
  const first = await putSync(app, key, body, 'sync-1')
  t.equal(first.statusCode, 200)
  t.match(first.json().data, { inserted: 2, failed: 1 })
  const again = await putSync(app, key, body, 'sync-1')
  t.equal(again.body, first.body, 'byte for byte: inserted 2 again, not unchanged 2')
  t.equal(again.headers['idempotent-replayed'], 'true')
  const spaced = await putSync(app, key, body.replace(/,/g, ', '), 'sync-1')
  t.equal(spaced.statusCode, 422, 'the sync compares the bytes it was sent')
  t.equal(spaced.json().code, 'IDEMPOTENCY_KEY_REUSED')
  const crossed = await postStatus(app, key, { order_status: [accept(1)] }, 'sync-1')
  t.equal(crossed.statusCode, 422, 'a key used on one endpoint cannot be replayed on the other')
  const [rows] = await database.sql`select count(*)::int as n from outstanding_shipments`
  t.equal(rows!.n, 2)
})

t.test('keys expire after 24 hours: ignored, then purged by the worker\'s hourly task', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b] = await shop.orders(2)
  t.equal((await postStatus(app, key, { order_status: [accept(a)] }, 'old-key')).statusCode, 200)
  const [expires] = await database.sql`select extract(epoch from expires_at - created_at)::int as seconds from idempotency_keys where key = 'old-key'`
  t.equal(expires!.seconds, 24 * 3600, 'kept for 24 hours')
  await database.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = 'old-key'`
  const reused = await postStatus(app, key, { order_status: [accept(b)] }, 'old-key')
  t.equal(reused.statusCode, 200, 'an expired key is a new key')
  t.equal(await orderStatus(database, b), 'ORDER_ACCEPTED')

  await database.sql`update idempotency_keys set expires_at = now() - interval '1 second'`
  await postStatus(app, key, { order_status: [accept(a)] }, 'fresh-key')
  const config = workerEnv(database)
  const { taskList, crontab } = effectsTasks(config, database, pino({ level: 'silent' }))
  t.match(crontab, new RegExp(`^0 \\* \\* \\* \\* ${TASKS.purgeIdempotencyKeys} `), 'scheduled hourly')
  await taskList[TASKS.purgeIdempotencyKeys]!({}, {} as never)
  t.same((await database.sql`select key from idempotency_keys`).map((r) => r.key), ['fresh-key'], 'only the live key is left')
  t.equal(await purgeExpiredIdempotencyKeys(database.db), 0)
})
