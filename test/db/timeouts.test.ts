import t from 'tap'
import { build, rawClient } from '../helpers/build.js'
import { holdInTransaction } from '../helpers/held-transaction.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { accept, createShop, orderStatus, post } from '../helpers/status-update.js'

/*
 * The session timeouts of every pool (DB_STATEMENT_TIMEOUT_MS, DB_LOCK_TIMEOUT_MS,
 * DB_IDLE_IN_TRANSACTION_TIMEOUT_MS): a row held by another transaction costs only its own order, a
 * read held up past the limit is a clean 503 TIMEOUT, and nothing waits forever.
 */

t.test('every connection of the pool starts with the configured timeouts', async (t) => {
  const { app } = await build(t, { DB_STATEMENT_TIMEOUT_MS: '7000', DB_LOCK_TIMEOUT_MS: '700', DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '70000' })
  const [settings] = await app.database.db.execute<{ statement: string, lock: string, idle: string }>(
    // drizzle's sql is what every service uses: this is the service's own handle
    (await import('drizzle-orm')).sql`select current_setting('statement_timeout') as statement, current_setting('lock_timeout') as lock,
      current_setting('idle_in_transaction_session_timeout') as idle`)
  t.same({ ...settings }, { statement: '7s', lock: '700ms', idle: '70s' })
  t.equal(app.server.requestTimeout, 120_000, 'HTTP_REQUEST_TIMEOUT_MS: a client gets two minutes to send a request')
})

t.test('an order held by another transaction past lock_timeout is that order\'s error; the rest of the batch goes on', async (t) => {
  const { app, database } = await build(t, { DB_LOCK_TIMEOUT_MS: '300' })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b, c] = await shop.orders(3)
  const holder = rawClient(database.url, { max: 1 })
  t.teardown(() => holder.end({ timeout: 1 }))
  const lock = await holdInTransaction(holder, (sql) => sql`select id from orders where id = ${b} for update`)

  const started = Date.now()
  const res = await post(app, key, { order_status: [accept(a), accept(b), accept(c)] })
  const elapsed = Date.now() - started
  t.equal(res.statusCode, 200)
  const heldError = { index: 1, orderId: b, error: 'Order could not be updated', code: 'ORDER_NOT_UPDATED' }
  t.same(res.body.data.errors, [heldError], 'only the held order')
  t.equal(res.body.data.successful, 2)
  t.ok(elapsed < 5000, `answered in ${elapsed} ms, not after the holder`)
  t.same([await orderStatus(database, a), await orderStatus(database, b), await orderStatus(database, c)], ['ORDER_ACCEPTED', 'ORDER_PLACED', 'ORDER_ACCEPTED'])

  await lock.release()
  const retry = await post(app, key, { order_status: [accept(a), accept(b), accept(c)] })
  t.same(retry.body.data.errors, [], 'the retry converges once the lock is gone')
  t.equal(await orderStatus(database, b), 'ORDER_ACCEPTED')
  const [ledger] = await database.sql`select count(*)::int as n from points_ledger where order_id = any(${[a, b, c]}::bigint[])`
  t.equal(ledger!.n, 3, 'each order charged once')
})

t.test('racing batches still queue on each other below lock_timeout: no order fails', async (t) => {
  const { app, database } = await build(t, { DB_LOCK_TIMEOUT_MS: '5000' })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const ids = await shop.orders(30)
  const results = await Promise.all(
    [0, 1, 2, 3].map(() => post(app, key, { order_status: ids.map((id) => accept(id)) }))
  )
  t.same(results.map((r) => r.body.data.failed), [0, 0, 0, 0])
})

t.test('a read held up past the limits is a clean 503 TIMEOUT, in each endpoint\'s shape', async (t) => {
  for (const [env, cause] of [[{ DB_LOCK_TIMEOUT_MS: '300' }, 'lock_timeout'], [{ DB_LOCK_TIMEOUT_MS: '0', DB_STATEMENT_TIMEOUT_MS: '300' }, 'statement_timeout']] as const) {
    const { app, database } = await build(t, env)
    await seedDemo(database, 20)
    const token = await credential(database, 1, 'access-token')
    const apiKey = await credential(database, 1, 'api-key')
    const holder = rawClient(database.url, { max: 1 })
    const lock = await holdInTransaction(holder, (sql) => sql`lock table orders, outstanding_shipments in access exclusive mode`)

    const read = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { query: '{ orders { pageInfo { total } nodes { orderId } } }' } })
    t.equal(read.statusCode, 503, `${cause}: GraphQL read`)
    t.equal(read.headers['retry-after'], '5')
    t.match(read.json(), { data: { orders: null }, errors: [{ message: 'The database took too long to answer; nothing was applied, retry shortly', extensions: { code: 'TIMEOUT' } }] })

    const sync = await app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }] })
    t.equal(sync.statusCode, 503, `${cause}: sync`)
    t.same(sync.json(), { error: true, status: false, statusCode: 503, message: 'The database took too long to answer; nothing was applied, retry shortly', code: 'TIMEOUT' })
    await lock.release()
    await holder.end({ timeout: 1 })
    const [stored] = await database.sql`select count(*)::int as n from outstanding_shipments`
    t.equal(stored!.n, 0, 'nothing of the sync applied')
    const again = await app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }] })
    t.equal(again.statusCode, 200, 'the retry works once the lock is gone')
  }
})
