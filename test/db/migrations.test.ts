import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import postgres from 'postgres'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator'
import { migrate, MIGRATIONS_FOLDER } from '../../src/db/migrate.js'
import { testServerState } from '../helpers/test-server.js'
import { withDatabaseName } from '../../src/db/client.js'
import { Logger as WorkerLogger, runMigrations as runWorkerMigrations } from 'graphile-worker'

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
    'order_items', 'order_status_history', 'points_ledger', 'refunds', 'payout_schedules', 'order_effects', 'subscriptions', 'subscription_cursors', 'deliveries', 'delivery_attempts',
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
  // The migrations as they were before 0009: the same files, a journal that ends at 0008.
  const { sql, url } = await databaseBefore(t, '0009')
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

t.test('0021: events keep their ids, endpoints their deliveries and log, pending notifications become deliveries', async (t) => {
  // The migrations as they were before 0021, and graphile-worker's schema (it holds the `notify` jobs).
  const { sql, url } = await databaseBefore(t, '0021')
  await runWorkerMigrations({ connectionString: url, logger: new WorkerLogger(() => () => {}) })

  // Seller A: an order placed then accepted (a full event, a small one), a test event; an endpoint whose
  // cursor is at 2 with event 3 pending after a failed attempt; notifications of each state.
  const [a] = await sql`insert into sellers (name) values ('A') returning id`
  const [store] = await sql`insert into stores (seller_id, name) values (${a.id}, 'S') returning id`
  const [r] = await sql`insert into retailers (name) values ('R') returning id`
  const [o] = await sql`insert into orders (seller_id, store_id, retailer_id, order_number, service_order_number, status,
    retailer_name, order_total, order_total_final, total_items_in_order, payment_mode)
    values (${a.id}, ${store.id}, ${r.id}, 'N-1', 'S-1', 'ORDER_ACCEPTED', 'R', 10, 10, 1, 'PREPAID') returning id`
  await sql`insert into seller_event_counters (seller_id, last_sequence) values (${a.id}, 3)`
  await sql`insert into seller_events (seller_id, sequence, type, order_id, store_id, order_json, occurred_at)
    values (${a.id}, 1, 'order.placed', ${o.id}, ${store.id}, '{"orderStatus":"ORDER_PLACED"}', now())`
  await sql`insert into seller_events (seller_id, sequence, type, order_id, store_id, previous_status, occurred_at,
      base_sequence, order_status, order_is_actionable, order_updated_at)
    values (${a.id}, 2, 'order.accepted', ${o.id}, ${store.id}, 'ORDER_PLACED', now(), 1, 'ORDER_ACCEPTED', true, now())`
  await sql`insert into seller_events (seller_id, sequence, type, reason, occurred_at) values (${a.id}, 3, 'webhook.test', 'ping', now())`
  const [ep] = await sql`insert into webhook_endpoints (seller_id, url, secret, last_sequence, store_ids)
    values (${a.id}, 'https://example.com/hook', '\\x0102'::bytea, 2, ${[store.id]}) returning id`
  const [d] = await sql`insert into webhook_deliveries (endpoint_id, seller_id, sequence, type, attempts)
    values (${ep.id}, ${a.id}, 3, 'webhook.test', 1) returning id`
  await sql`insert into webhook_attempts (endpoint_id, delivery_id, seller_id, sequence, type, attempt, succeeded, http_status,
    duration_ms, answer_head) values (${ep.id}, ${d.id}, ${a.id}, 3, 'webhook.test', 1, false, 500, 12, 'no')`
  await sql`insert into notification_deliveries (event_id, order_id, seller_id, channel, event_type, status, attempts) values
    (${`${o.id}:ORDER_PLACED:seller`}, ${o.id}, ${a.id}, 'seller', 'order.placed', 'DELIVERED', 1),
    (${`${o.id}:ORDER_ACCEPTED:customer`}, ${o.id}, ${a.id}, 'customer', 'order.accepted', 'PENDING', 2),
    (${`${o.id}:ORDER_ACCEPTED:messaging`}, ${o.id}, ${a.id}, 'messaging', 'order.accepted', 'FAILED', 10),
    (${`${o.id}:CANCELLED:seller`}, ${o.id}, ${a.id}, 'seller', 'order.cancelled', 'PENDING', 0)`
  await sql`select graphile_worker.add_job('notify', json_build_object('eventId', ${`${o.id}:ORDER_ACCEPTED:customer`}::text))`
  await sql`select graphile_worker.add_job('auto-reject', json_build_object('orderId', ${o.id}::bigint))`

  await migrate(url)

  t.same(await sql`select sequence::int, type, status, previous_status from seller_events order by sequence`, [
    { sequence: 1, type: 'order.placed', status: 'ORDER_PLACED', previous_status: null },
    { sequence: 2, type: 'order.accepted', status: 'ORDER_ACCEPTED', previous_status: 'ORDER_PLACED' },
    { sequence: 3, type: 'webhook.test', status: null, previous_status: null }
  ], 'every event kept, with the status it moved its order to')
  const columns = (await sql`select column_name from information_schema.columns where table_name = 'seller_events'`)
    .map((c) => c.column_name)
  for (const gone of ['order_json', 'order_list_lengths', 'content_snapshot', 'base_sequence', 'order_shape']) {
    t.notOk(columns.includes(gone), `seller_events.${gone} is gone`)
  }
  const tables = (await sql`select table_name from information_schema.tables where table_schema = 'public'`).map((x) => x.table_name)
  for (const gone of ['content_changes', 'content_change_horizon', 'notification_deliveries', 'webhook_endpoints', 'webhook_deliveries']) {
    t.notOk(tables.includes(gone), `${gone} is gone`)
  }
  const [triggers] = await sql`select count(*)::int as n from pg_trigger where tgname like '%content%'`
  t.equal(triggers.n, 0, 'no content trigger is left')

  t.same(await sql`select id, kind, seller_id, url, store_ids from subscriptions where seller_id is not null`, [
    { id: ep.id, kind: 'seller-webhook', seller_id: a.id, url: 'https://example.com/hook', store_ids: [store.id] }
  ], 'the endpoint keeps its id, URL and scope')
  t.same(await sql`select c.last_sequence::int, s.kind from subscription_cursors c join subscriptions s on s.id = c.subscription_id
    order by s.kind`, [
    { last_sequence: 2, kind: 'seller-webhook' },
    { last_sequence: 3, kind: 'operator-webhook' },
    { last_sequence: 3, kind: 'notify-seller' },
    { last_sequence: 3, kind: 'notify-customer' },
    { last_sequence: 3, kind: 'notify-messaging' }
  ], 'the endpoint keeps its cursor; the subscriptions for every seller start after the last event')
  t.same(await sql`select status, disabled_reason from subscriptions where kind = 'operator-webhook'`,
    [{ status: 'DISABLED', disabled_reason: 'WEBHOOK_URL is not set' }])
  t.same(await sql`select d.id, s.kind, d.sequence::int, d.type, d.attempts, d.status from deliveries d
    join subscriptions s on s.id = d.subscription_id order by d.id`, [
    { id: d.id, kind: 'seller-webhook', sequence: 3, type: 'webhook.test', attempts: 1, status: 'PENDING' },
    { id: String(BigInt(d.id) + 1n), kind: 'notify-customer', sequence: 2, type: 'order.accepted', attempts: 2, status: 'PENDING' }
  ], 'the pending delivery is kept; the pending notification of a kept event is a delivery, with its attempts')
  t.same(await sql`select delivery_id, attempt, http_status from delivery_attempts`, [{ delivery_id: d.id, attempt: 1, http_status: 500 }],
    'the attempt log is kept')
  t.same(await sql`select t.identifier from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id`,
    [{ identifier: 'auto-reject' }], 'the notify jobs are gone; the other jobs stay')
})

/** A new database with the migrations before `tag` applied (the same files, a journal that ends before it). */
async function databaseBefore (t: Test, tag: string): Promise<{ sql: postgres.Sql, url: string }> {
  const { serverUrl } = testServerState()
  const name = `oxs_${tag}_${process.pid}`
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists "${name}"`)
  await admin.unsafe(`create database "${name}"`)
  const before = fs.mkdtempSync(path.join(os.tmpdir(), `oxs-before-${tag}-`))
  fs.cpSync(MIGRATIONS_FOLDER, before, { recursive: true })
  const journalPath = path.join(before, 'meta', '_journal.json')
  const journal = JSON.parse(fs.readFileSync(journalPath, 'utf8')) as { entries: Array<{ tag: string }> }
  journal.entries = journal.entries.filter((e) => e.tag < tag)
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
  return { sql, url }
}
