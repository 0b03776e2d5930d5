import t from 'tap'
import { sql } from 'drizzle-orm'
import { buildSchema, parse, type OperationDefinitionNode } from 'graphql'
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js'
import { openDatabase, type Tx } from '../../src/db/client.js'
import {
  executePrepared, observeQueries, poolStatsReader, postgresClientOf, type QueryObserver, type StatementOutcome
} from '../../src/db/driver-internals.js'
import { transaction } from '../../src/db/transaction.js'
import { testDatabase } from '../helpers/build.js'

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

t.test('postgres.js: every statement and its end, in the pool, a transaction and a savepoint (tracing)', async (t) => {
  const database = await testDatabase(t)
  const seen: Array<{ text: string, scope: string[], outcome?: StatementOutcome }> = []
  const scope: string[] = []
  const observer: QueryObserver = {
    statement (text) {
      if (text.includes('/* untraced */')) return undefined
      const entry: { text: string, scope: string[], outcome?: StatementOutcome } = { text, scope: [...scope] }
      seen.push(entry)
      return (outcome) => { entry.outcome = outcome }
    },
    async transaction (kind, run) {
      scope.push(kind)
      try { return await run() } finally { scope.pop() }
    }
  }
  const observed = openDatabase(database.url, { max: 2, observer })
  t.teardown(() => observed.close())
  await observed.db.execute(sql`select ${'a parameter value'}::text as v`)
  await transaction(observed.db, async (tx) => {
    await tx.execute(sql`select 1 as one`)
    await tx.transaction(async (savepoint) => {
      await savepoint.execute(sql`select ${41}::int + 1 as answer`)
      await postgresClientOf(savepoint).unsafe('select 2 /* raw */').raw()
    })
    await tx.execute(sql`select 3 /* untraced */`)
  })
  await t.rejects(observed.db.execute(sql`select 1/0`), { cause: { code: '22012' } })
  t.same(seen.map((s) => [s.text, s.scope.join('>')]), [
    ['select $1::text as v', ''],
    ['begin ', 'transaction'],
    ['select txid_current()::text as xid', 'transaction'],
    ['select 1 as one', 'transaction'],
    ['select $1::int + 1 as answer', 'transaction>savepoint'],
    ['select 2 /* raw */', 'transaction>savepoint'],
    ['select 1/0', '']
  ], 'the text with its placeholders (never a parameter), inside the scopes it ran in')
  t.same(seen[0].outcome, { command: 'SELECT', rows: 1 })
  t.same(seen[1].outcome, { command: 'BEGIN', rows: 0 })
  t.equal((seen.at(-1)!.outcome as { error: { code: string } }).error.code, '22012', 'a failed statement ends with its error')
  t.notOk(JSON.stringify(seen.map((s) => s.text)).includes('a parameter value'))

  const notPostgres = {} as unknown as Parameters<typeof observeQueries>[0]
  t.throws(() => observeQueries(notPostgres, observer), /driver-internals: postgres\.js sql\.unsafe/)
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
