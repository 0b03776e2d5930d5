import t from 'tap'
import { sql } from 'drizzle-orm'
import { buildSchema, parse, type OperationDefinitionNode } from 'graphql'
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js'
import type { Tx } from '../src/db/client.js'
import { executePrepared, poolStatsReader, postgresClientOf } from '../src/db/driver-internals.js'
import { testDatabase } from './helpers/build.js'

/*
 * Every private library API the service leans on, run for real. After an upgrade of drizzle-orm,
 * postgres, graphile-worker or graphql, a failure here names what moved (src/db/driver-internals.ts).
 */

t.test('drizzle: a statement runs prepared, on the transaction it is given', async (t) => {
  const database = await testDatabase(t)
  await database.db.transaction(async (tx) => {
    const query = { sql: 'select $1::int + 1 as answer /* driver-internals */', params: [41] }
    t.same(await executePrepared(tx, query), [{ answer: 42 }])
    const named = await tx.execute<{ n: number }>(sql`select count(*)::int as n from pg_prepared_statements
      where statement like '%/* driver-internals */%'`)
    t.equal(named[0].n, 1, 'postgres.js prepared it on this connection')
  })
})

t.test("drizzle: the session's postgres.js client, in raw mode, inside the transaction", async (t) => {
  const database = await testDatabase(t)
  const [[text]] = await postgresClientOf(database.db).unsafe('select \'{"a":1}\'::text').raw()
  t.ok(Buffer.isBuffer(text), 'raw mode gives the bytes')
  t.equal(String(text), '{"a":1}')
  await database.db.transaction(async (tx) => {
    await tx.execute(sql`select set_config('oxs.fence', 'inside', true)`)
    const [[seen]] = await postgresClientOf(tx).unsafe("select current_setting('oxs.fence')").raw()
    t.equal(String(seen), 'inside', "the transaction's own client, not the pool")
  })
})

t.test('a handle without the internals fails by name', async (t) => {
  const notDrizzle = {} as unknown as Tx
  await t.rejects(executePrepared(notDrizzle, { sql: 'select 1', params: [] }), /driver-internals: drizzle-orm/)
  t.throws(() => postgresClientOf(notDrizzle), /driver-internals: drizzle-orm/)
  const notPatched = {} as unknown as Parameters<typeof poolStatsReader>[0]
  t.throws(() => poolStatsReader(notPatched), /poolStats \(patches\/postgres\+3\.4\.9\.patch/)
})

t.test('postgres.js (patched): the pool counts its connections', async (t) => {
  const database = await testDatabase(t)
  await database.db.execute(sql`select 1`)
  const stats = database.poolStats()
  t.same(Object.keys(stats).sort(), ['busy', 'connecting', 'idle', 'max', 'waiting'])
  t.equal(stats.max, 5)
  t.ok(stats.idle >= 1, 'the connection just used is idle')
  await database.db.transaction(async () => {
    t.equal(database.poolStats().busy, 1, 'a transaction holds one')
  })
})

t.test("graphile-worker: the private table and row type this service's statements use", async (t) => {
  const database = await testDatabase(t)
  const columns = await database.sql<Array<{ name: string }>>`
    select column_name as name from information_schema.columns
    where table_schema = 'graphile_worker' and table_name = '_private_jobs'`
  const names = columns.map((c) => c.name)
  for (const used of ['key', 'locked_at', 'locked_by', 'attempts', 'max_attempts', 'updated_at']) {
    t.ok(names.includes(used), `_private_jobs.${used} (effects/enqueue.ts, effects/crash-recovery.ts)`)
  }
  // effects/enqueue.ts and status-update/apply-changes.ts build job_spec rows by position.
  const spec = await database.sql<Array<{ name: string }>>`
    select a.attname as name from pg_attribute a
    where a.attrelid = 'graphile_worker.job_spec'::regclass and a.attnum > 0 and not a.attisdropped
    order by a.attnum`
  t.same(spec.map((a) => a.name),
    ['identifier', 'payload', 'queue_name', 'run_at', 'max_attempts', 'job_key', 'priority', 'flags'])
  const [unlock] = await database.sql`select to_regprocedure('graphile_worker.force_unlock_workers(text[])') as f`
  t.ok(unlock.f, 'graphile_worker.force_unlock_workers(text[])')
})

t.test("graphql: collectFields (not exported from graphql's root in 16) and its answer", async (t) => {
  const schema = buildSchema('type Query { orders: Orders } type Orders { total: Int, page: Int }')
  const document = parse('query { a: orders { total ...F } } fragment F on Orders { page }')
  const operation = document.definitions[0] as OperationDefinitionNode
  const fragments = { F: document.definitions[1] } as unknown as Parameters<typeof collectFields>[1]
  const fields = collectFields(schema, fragments, {}, schema.getQueryType()!, operation.selectionSet)
  t.ok(fields instanceof Map)
  t.same([...fields.keys()], ['a'], 'keyed by response name')
  const orders = schema.getType('Orders') as Parameters<typeof collectSubfields>[3]
  const subfields = collectSubfields(schema, fragments, {}, orders, fields.get('a')!)
  t.same([...subfields.keys()], ['total', 'page'], 'fragments spread in place')
})
