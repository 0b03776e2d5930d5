import t from 'tap'
import { testDatabase, type TestDatabase } from '../helpers/build.js'
import { eventually } from '../helpers/eventually.js'
import { seedDemo } from '../helpers/fixtures.js'
import { sql } from 'drizzle-orm'
import { BULK_LOAD_ROWS } from '../../src/db/analyze.js'
import { INSERTED } from '../../src/platform/batch.js'
import { runPlatformBatch } from '../../src/platform/run-batch.js'

/*
 * A bulk load analyzes the tables it filled (src/db/analyze.ts): the planner has no statistics for them
 * until then, and autovacuum may not have run. pg_stat_user_tables.last_analyze is set by an ANALYZE
 * statement only (autovacuum sets last_autoanalyze), so these checks hold whatever autovacuum does.
 */

async function analyzed (database: TestDatabase, tables: string[]): Promise<string[]> {
  const rows = await database.sql<Array<{ relname: string }>>`
    select relname from pg_stat_user_tables where relname = any(${tables}) and last_analyze is not null order by 1`
  return rows.map((r) => r.relname)
}

const SEEDED = ['order_items', 'order_status_history', 'orders', 'retailers', 'seller_retailers', 'shops']

t.test('the seed analyzes the tables it filled', async (t) => {
  const database = await testDatabase(t)
  t.same(await analyzed(database, SEEDED), [], 'a new database: nothing analyzed yet')
  await seedDemo(database, 200)
  await eventually(t, 'every seeded table analyzed', async () => (await analyzed(database, SEEDED)).length === SEEDED.length)
  t.same(await analyzed(database, SEEDED), SEEDED)
  const [orders] = await database.sql`select reltuples::int as n from pg_class where relname = 'orders'`
  t.equal(orders.n, 200, 'the planner knows how many orders there are')
})

t.test(`a platform batch that writes ${BULK_LOAD_ROWS} rows or more analyzes the tables it wrote; a smaller one does not`, async (t) => {
  const database = await testDatabase(t)
  const batch = (from: number, count: number) =>
    runPlatformBatch(database.db, { valid: [{ index: 0, row: null }], outcomes: [null] }, undefined, async (tx) => {
      await tx.execute(sql`insert into retailers (id, name)
        select i, 'Retailer ' || i from generate_series(${from}::int, ${from + count - 1}::int) as i`)
      return new Map([[0, INSERTED]])
    })
  const small = await batch(1, BULK_LOAD_ROWS - 1)
  t.equal(small.inserted, 1)
  // A batch's ANALYZE has finished when the batch returns: nothing to wait for.
  t.same(await analyzed(database, ['retailers']), [], `${BULK_LOAD_ROWS - 1} rows: no ANALYZE`)
  await batch(BULK_LOAD_ROWS, BULK_LOAD_ROWS)
  await eventually(t, 'retailers analyzed', async () => (await analyzed(database, ['retailers'])).length === 1)
  const [retailers] = await database.sql`select reltuples::int as n from pg_class where relname = 'retailers'`
  t.equal(retailers.n, 2 * BULK_LOAD_ROWS - 1)
})
