import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import postgres from 'postgres'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator'
import { migrate, MIGRATIONS_FOLDER } from '../src/db/migrate.js'
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

t.test('0009: the retailers and shops of a database made before it keep their seller and sync IDs as links', async (t) => {
  const { serverUrl } = testServerState()
  const name = `oxs_0009_${process.pid}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists "${name}"`)
  await admin.unsafe(`create database "${name}"`)
  // The migrations as they were before 0009: the same files, a journal that ends at 0008.
  const before = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-before-0009-'))
  fs.cpSync(MIGRATIONS_FOLDER, before, { recursive: true })
  const journalPath = path.join(before, 'meta', '_journal.json')
  const journal = JSON.parse(fs.readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> }
  journal.entries = journal.entries.filter((e) => e.tag < '0009')
  fs.writeFileSync(journalPath, JSON.stringify(journal))
  const url = withDatabaseName(serverUrl, name)
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  t.teardown(async () => {
    await sql.end()
    await admin.unsafe(`drop database if exists "${name}" with (force)`)
    await admin.end()
    fs.rmSync(before, { recursive: true, force: true })
  })
  await drizzleMigrate(drizzle(sql), { migrationsFolder: before })
  const [a] = await sql`insert into sellers (name) values ('A') returning id`
  const [b] = await sql`insert into sellers (name) values ('B') returning id`
  const [ra] = await sql`insert into retailers (seller_id, name, sync_id) values (${a.id}, 'R1', 'RET-A') returning id`
  const [rb] = await sql`insert into retailers (seller_id, name, sync_id) values (${b.id}, 'R2', null) returning id`
  const [sa] = await sql`insert into shops (seller_id, retailer_id, sync_id, shop_name)
    values (${a.id}, ${ra.id}, 'SHOP-A', 'S1') returning id`

  await migrate(url)
  t.same(await sql`select seller_id, retailer_id, sync_id from seller_retailers order by retailer_id`, [
    { seller_id: a.id, retailer_id: ra.id, sync_id: 'RET-A' }, { seller_id: b.id, retailer_id: rb.id, sync_id: null }
  ])
  t.same(await sql`select seller_id, shop_id, sync_id from seller_shops`, [{ seller_id: a.id, shop_id: sa.id, sync_id: 'SHOP-A' }])
  const columns = await sql`select table_name, column_name from information_schema.columns
    where table_name in ('retailers', 'shops') and column_name in ('seller_id', 'sync_id')`
  t.same(columns, [], 'the columns are gone: one place holds a seller\'s sync ID')
  // The same retailer linked to a second seller, with a sync ID of its own.
  await sql`insert into seller_retailers (seller_id, retailer_id, sync_id) values (${b.id}, ${ra.id}, 'B-OWN')`
  await t.rejects(sql`update seller_retailers set sync_id = 'B-OWN' where seller_id = ${b.id} and retailer_id = ${rb.id}`,
    { code: '23505' }, 'a seller\'s sync ID names one retailer')
})
