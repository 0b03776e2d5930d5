import fs from 'node:fs'
import t from 'tap'
import { buildSchema, print } from 'graphql'
import type { Query } from 'drizzle-orm'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { answerSurround, PassThrough } from '../../src/graphql/pass-through.js'
import { ALONE } from '../../src/db/json-text.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'
import { orderConnectionQuery } from '../../src/orders/order-json.js'
import { parseOrderListInput, type OrderListQuery } from '../../src/orders/order-list-input.js'
import { ORDER } from '../../src/orders/order-model.js'
import { entriesOf } from '../../src/db/read-model.js'
import { pageInfoEntries } from '../../src/paging/page-info.js'
import { MAX_LIMIT } from '../../src/paging/page-window.js'

/*
 * The page statements run as prepared statements with their generic plan (db/client.ts), where the page
 * size is a parameter the planner cannot see. Unbounded, it took the page for a tenth of the seller's
 * orders and, at 1,000,000 orders, hash-joined whole retailers and shops tables to it (a page of 100 went
 * from 12 to 25 ms; bench/README.md). The generic plan must expect at most MAX_LIMIT orders on a page.
 * The seed gives seller 1 enough orders (60 % of 50,000) that the planner's guess for an unfiltered page
 * without the bound is above MAX_LIMIT, which the test checks too: the bound is what keeps the estimate
 * down. (A date or updatedSince filter keeps the guess low by its own selectivity.)
 */

const TIME_ZONE = 'Asia/Kolkata'

type PlanNode = { 'Node Type': string, 'Subplan Name'?: string, 'Plan Rows': number, Plans?: PlanNode[] }

function find (node: PlanNode, name: string): PlanNode | null {
  if (node['Subplan Name'] === name) return node
  for (const child of node.Plans ?? []) {
    const hit = find(child, name)
    if (hit) return hit
  }
  return null
}

/** The Limit nodes from `node` down its first children. */
function limitsBelow (node: PlanNode): PlanNode[] {
  const found: PlanNode[] = []
  for (let at: PlanNode | undefined = node; at; at = at.Plans?.[0]) if (at['Node Type'] === 'Limit') found.push(at)
  return found
}

/** A parameter as an SQL literal for EXECUTE (numbers, text, int arrays: what the page statements take). */
function literal (value: unknown): string {
  if (typeof value === 'number') return String(value)
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(',')}]`
  return `'${String(value).replaceAll('\'', '\'\'')}'`
}

t.test('the generic plan of every page statement expects at most MAX_LIMIT orders on a page', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 50_000)
  await database.sql`analyze`

  const passThrough = new PassThrough(buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8')))
  const inputs: Array<[string, OrderListQuery]> = [
    ['unfiltered', { page: 1, limit: 100 }],
    ['one day', { page: 2, limit: 100, fromDate: '2026-10-15', toDate: '2026-10-15' }],
    ['updatedSince', { page: 1, limit: 20, updatedSince: '2026-09-01T00:00:00.000000Z' }]
  ]
  const statements: Array<[string, Query, boolean]> = []
  for (const [name, input] of inputs) {
    const part = passThrough.plan(print(OrdersDocument), { input }, null)?.parts[0]
    if (!part || part.kind !== 'orders') throw new Error('the full selection is not passed through')
    const filter = parseOrderListInput(input)
    for (const reader of [{ sellerId: 1, storeIds: null }, { sellerId: 1, storeIds: [1, 2] }]) {
      const narrowed = reader.storeIds ? ', narrowed to stores' : ''
      const unfiltered = name === 'unfiltered'
      const around = answerSurround(['orders'], 0)
      statements.push([`pass-through, ${name}${narrowed}`, orderConnectionQuery(database.db, reader, filter, part.entries, TIME_ZONE, around), unfiltered])
      // The standard execution's read of every field of every object: the same statement, whole objects.
      const whole = entriesOf(ORDER, function all (_name, model) { return entriesOf(model, all) })
      const entries = [
        { key: 'pageInfo', value: { kind: 'field' as const, name: 'pageInfo', entries: pageInfoEntries(true) } },
        { key: 'nodes', value: { kind: 'field' as const, name: 'nodes', entries: whole } }
      ]
      statements.push([`standard execution, ${name}${narrowed}`, orderConnectionQuery(database.db, reader, filter, entries, TIME_ZONE, ALONE), unfiltered])
    }
  }

  const session = await database.sql.reserve()
  t.teardown(() => session.release())
  await session.unsafe('set plan_cache_mode = force_generic_plan')
  for (const [name, query, unfiltered] of statements) {
    await session.unsafe('deallocate all')
    await session.unsafe(`prepare page_statement as ${query.sql}`)
    const [row] = await session.unsafe(`explain (format json) execute page_statement(${query.params.map(literal).join(', ')})`)
    const plan = (row as unknown as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan
    const picked = find(plan, 'CTE picked')
    t.ok(picked, `${name}: the plan has the page CTE`)
    t.ok(picked!['Plan Rows'] <= MAX_LIMIT, `${name}: the generic plan expects ${picked!['Plan Rows']} orders on a page`)
    // Below the bound: the page as limited by the parameter alone, what the planner guessed without it.
    if (unfiltered) {
      const unbounded = limitsBelow(picked!)[1]
      t.ok(unbounded && unbounded['Plan Rows'] > MAX_LIMIT, `${name}: unbounded, it would expect ${unbounded?.['Plan Rows']}`)
    }
  }
})
