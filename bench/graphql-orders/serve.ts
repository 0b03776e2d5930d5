import fs from 'node:fs'
import type { Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { buildSchema, print } from 'graphql'
import { PgDialect } from 'drizzle-orm/pg-core'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openClient, openDatabase } from '../../src/db/client.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'
import { answerSurround, PassThrough } from '../../src/graphql/pass-through.js'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import { orderConnectionStatement } from '../../src/orders/order-json.js'
import { parseOrderListInput, type OrderListQuery } from '../../src/orders/order-list-input.js'

/*
 * One benchmark target in its own process (so the load sent from the parent does not share its event loop):
 *   service       the real app (GraphQL pass-through on, the default)
 *   standard      the real app with GRAPHQL_PASS_THROUGH=false: standard GraphQL execution
 *   baseline      bare Fastify + one hand-written SQL statement (json_agg, parsed and re-serialised)
 *   loaders       the loader variant (a road not taken)
 *   postgraphile  PostGraphile 5, Amber preset, over the same tables
 *   limit         no HTTP at all: the service's page statement sent by a bare postgres.js client that
 *                 receives the JSON text and does nothing else, from `connections` loops
 * Tells the parent its port, answers 'statements' (SQL statements sent), 'cpu' (this process's CPU, µs)
 * and, for `limit`, { page } (one page's text) and { run } (a timed run).
 */

const [target, url, timeZone, pool = '10'] = process.argv.slice(2)
const POOL = Number(pool)
let statements = 0
const onQuery = (): void => { statements++ }
// The service's handle; the baseline and the loader variant send raw SQL on `sql`.
const database = { ...openDatabase(url!, { max: POOL, onQuery }), sql: openClient(url!, { max: POOL, onQuery }) }
// Throughput, not limits, is measured here: rate limits off (bench/load measures them).
// Load shedding off too: a saturated 2-core machine lags by design here, and a shed request is not a page.
const env = {
  DATABASE_URL: url,
  LOG_LEVEL: 'silent',
  WORKER_ENABLED: 'false',
  RATE_LIMIT_ENABLED: 'false',
  SHED_EVENT_LOOP_DELAY_MS: '0',
  SHED_HEAP_USED_BYTES: '0',
  BUSINESS_TIMEZONE: timeZone,
  DB_POOL_MAX: String(POOL)
}

let app: FastifyInstance | null = null
let server: Server | null = null
let close: () => Promise<void> = async () => {}
if (target === 'service') app = await buildApp({ config: loadConfig(env), database })
else if (target === 'standard') app = await buildApp({ config: loadConfig({ ...env, GRAPHQL_PASS_THROUGH: 'false' }), database })
// Each target loads only its own modules: PostGraphile's would otherwise sit in the service's heap and
// make every major GC of the service's process slower than in production (measured: 40 MB heap).
else if (target === 'baseline') app = await (await import('./baseline.js')).buildBaselineApp(database, timeZone!)
else if (target === 'loaders') app = await (await import('./loaders-variant.js')).buildLoadersApp(loadConfig(env), database)
else if (target === 'postgraphile') ({ server, close } = await (await import('./postgraphile.js')).startPostgraphile(url!, POOL))
else if (target !== 'limit') throw new Error(`unknown target ${target}`)

let port = 0
if (app) {
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as { port: number }).port
} else if (server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  port = (server.address() as { port: number }).port
}

/**
 * The limit target's statement for a page: exactly what the service sends for the full selection, the
 * answer's envelope included, so what it receives is the service's response body.
 */
const passThrough = new PassThrough(buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8')))
const dialect = new PgDialect()
function limitStatement (input: OrderListQuery): { text: string, params: unknown[] } {
  const planned = passThrough.plan(print(OrdersDocument), { input }, null)
  const part = planned?.parts[0]
  if (!part || part.kind !== 'orders') throw new Error('the full selection is not passed through')
  const query = dialect.sqlToQuery(orderConnectionStatement({ sellerId: 1, storeIds: null }, parseOrderListInput(input), part.entries, timeZone!, answerSurround(['orders'], 0)))
  return { text: query.sql, params: query.params }
}
async function limitPage (input: OrderListQuery): Promise<string> {
  const { text, params } = limitStatement(input)
  const [row] = await database.sql.unsafe(text, params as never[], { prepare: true })
  return (row as unknown as { body: string }).body
}
async function limitRun (input: OrderListQuery, seconds: number,
  connections: number): Promise<{ requests: number, latencies: number[] }> {
  const { text, params } = limitStatement(input)
  const end = Date.now() + seconds * 1000
  const latencies: number[] = []
  await Promise.all(Array.from({ length: connections }, async () => {
    while (Date.now() < end) {
      const t0 = performance.now()
      await database.sql.unsafe(text, params as never[], { prepare: true })
      latencies.push(performance.now() - t0)
    }
  }))
  return { requests: latencies.length, latencies }
}

process.send!({ port })
// The parent went away (it failed or was killed): do not linger.
process.on('disconnect', () => process.exit(0))
process.on('message', async (message: unknown) => {
  if (message === 'statements') process.send!({ statements })
  if (message === 'cpu') { const u = process.cpuUsage(); process.send!({ cpu: u.user + u.system }) }
  if (typeof message === 'object' && message !== null && 'page' in message) {
    process.send!({ body: await limitPage((message as { page: OrderListQuery }).page) })
  }
  if (typeof message === 'object' && message !== null && 'run' in message) {
    const { input, seconds, connections } =
      (message as { run: { input: OrderListQuery, seconds: number, connections: number } }).run
    process.send!({ result: await limitRun(input, seconds, connections) })
  }
  if (message === 'stop') {
    await app?.close()
    await close()
    await database.close()
    await database.sql.end({ timeout: 5 })
    process.exit(0)
  }
})
