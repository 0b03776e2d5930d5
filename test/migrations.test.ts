import t from 'tap'
import postgres from 'postgres'
import { migrate } from '../src/db/migrate.js'
import { testServerState } from './helpers/test-server.js'
import { withDatabaseName } from '../src/db/client.js'

t.test('migrations from an empty database, twice at once, then again', async (t) => {
  const { serverUrl } = testServerState()
  const name = `oxs_empty_${process.pid}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists "${name}"`)
  await admin.unsafe(`create database "${name}"`)
  t.teardown(async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`)
    await admin.end()
  })
  const url = withDatabaseName(serverUrl, name)
  // Two instances starting together: the advisory lock makes them take turns.
  await Promise.all([migrate(url), migrate(url)])
  await migrate(url)

  const sql = postgres(url, { max: 1, onnotice: () => {} })
  t.teardown(() => sql.end())
  const tables = (await sql`select table_name from information_schema.tables where table_schema = 'public' order by 1`).map((r) => r.table_name)
  for (const table of ['sellers', 'stores', 'retailers', 'shops', 'items', 'skus', 'offers', 'selling_units', 'daily_deals', 'orders',
    'order_items', 'order_status_history', 'points_ledger', 'refunds', 'payout_schedules', 'order_effects', 'notification_deliveries',
    'outstanding_shipments', 'credentials']) {
    t.ok(tables.includes(table), `table ${table}`)
  }
  const [applied] = await sql`select count(*)::int as n from drizzle.__drizzle_migrations`
  t.ok(applied.n >= 1)
  const [worker] = await sql`select count(*)::int as n from information_schema.schemata where schema_name = 'graphile_worker'`
  t.equal(worker.n, 1, 'graphile-worker schema installed')

  // The constraints the later endpoints rely on.
  const [seller] = await sql`insert into sellers (name) values ('s') returning id`
  await t.rejects(sql`update sellers set points_balance = -1 where id = ${seller.id}`, { code: '23514' }, 'points never below zero')
  await sql`insert into outstanding_shipments (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity) values (${seller.id}, 'R', null, 'O', 1)`
  await t.rejects(sql`insert into outstanding_shipments (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity) values (${seller.id}, 'R', null, 'O', 2)`,
    { code: '23505' }, 'a null shop is a key value of its own (NULLS NOT DISTINCT)')
})
