import { print } from 'graphql'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueCredential } from '../../src/credentials/service.js'
import type { JsonEntry } from '../../src/db/json-text.js'
import { entriesOf, type Model } from '../../src/db/read-model.js'
import { ItemsDocument, OrdersDocument, RetailersDocument } from '../../src/graphql/generated/operations.js'
import { pageInfoEntries } from '../../src/paging/page-info.js'
import { itemConnectionStatement } from '../../src/references/item-json.js'
import { parseReferenceListInput } from '../../src/references/reference-list-input.js'
import { SELLER_ITEM, SELLER_RETAILER } from '../../src/references/reference-model.js'
import { retailerConnectionStatement } from '../../src/references/retailer-json.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { PgDialect } from 'drizzle-orm/pg-core'
import { benchDatabase, machineLine } from '../lib/database.js'
import { injectLoad } from '../lib/inject-load.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * npm run bench:references:lists — issue 23: do `retailers` and `items` need the pass-through? The demo
 * seed (BENCH_ORDERS, default 100,000 orders) plus, for seller 1, BENCH_EXTRA (20,000) more retailers (one
 * shop each) and items (one SKU, two offers each), a tenth of each unmapped: a seller with many of both.
 * Then, in this one process, the app answers pages of 100 with the full selection through app.inject (no
 * HTTP: what is compared is the service's own work) from BENCH_CONCURRENCY (4) loops for BENCH_DURATION
 * (8) seconds per target: `orders` with the pass-through (as served) and without it (the standard
 * execution), and `retailers` / `items` (standard execution; page 1, a deep page, unmapped). Before that,
 * the plans of the new statements (EXPLAIN ANALYZE, BUFFERS) say which indexes serve them.
 */

const ORDERS = numberKnob('BENCH_ORDERS', 100_000, { min: 1, integer: true })
const EXTRA = numberKnob('BENCH_EXTRA', 20_000, { min: 1, integer: true })
const DURATION = numberKnob('BENCH_DURATION', 8, { above: 0 })
const CONCURRENCY = numberKnob('BENCH_CONCURRENCY', 4, { min: 1, integer: true })
const SELLER = 1

const log = (line: string): void => { process.stderr.write(`${line}\n`) }

async function addCatalogue (sql: import('postgres').Sql): Promise<void> {
  // Retailers with one shop each, linked to seller 1; every tenth without the seller's sync ID, every
  // tenth (another one) with an unmapped shop.
  await sql`with r as (
      insert into retailers (name, first_name, last_name, phone, whatsapp)
      select 'Bench Retailer ' || g, 'Bench', 'Retailer ' || g, '+9190' || lpad(g::text, 8, '0'), null
      from generate_series(1, ${EXTRA}::int) g returning id
    ), l as (
      insert into seller_retailers (seller_id, retailer_id, sync_id)
      select ${SELLER}, id, case when id % 10 = 0 then null else 'BENCH-R-' || id end from r returning retailer_id
    ), s as (
      insert into shops (retailer_id, shop_name) select retailer_id, 'Bench Shop ' || retailer_id from l returning id, retailer_id
    )
    insert into seller_shops (seller_id, shop_id, sync_id)
    select ${SELLER}, id, case when retailer_id % 10 = 5 then null else 'BENCH-S-' || id end from s`
  await sql`with i as (
      insert into items (seller_id, item_name, item_sync_id)
      select ${SELLER}, 'Bench Item ' || g, case when g % 10 = 0 then null else 'BENCH-I-' || g end
      from generate_series(1, ${EXTRA}::int) g returning id
    ), k as (
      insert into skus (seller_id, item_id, sku_nick_name, images, tags)
      select ${SELLER}, id, 'Bench SKU ' || id, array['https://cdn.example.in/' || id || '.jpg'], array['bench'] from i returning id, item_id
    )
    insert into offers (seller_id, sku_id, offer_sync_id, purchase_price, mrp_price_amount, final_price_with_tax, price_range)
    select ${SELLER}, k.id, case when n = 2 and k.item_id % 10 = 5 then null else 'BENCH-V-' || k.id || '-' || n end,
      80.10, 120.00, 105.25, '[{"minQuantity":1,"maxQuantity":null,"price":105.25}]'::jsonb
    from k cross join generate_series(1, 2) n`
}

/** Every field of `model` and of everything below it. */
const whole = (model: Model): JsonEntry[] => entriesOf(model, (_name, nested) => whole(nested))
const connection = (model: Model): JsonEntry[] => [
  { key: 'pageInfo', value: { kind: 'field', name: 'pageInfo', entries: pageInfoEntries(true) } },
  { key: 'nodes', value: { kind: 'field', name: 'nodes', entries: whole(model) } }
]

async function explain (sql: import('postgres').Sql, label: string, statement: import('drizzle-orm').SQL): Promise<string> {
  const query = new PgDialect().sqlToQuery(statement)
  const rows = await sql.unsafe(`explain (analyze, buffers, costs off) ${query.sql}`, query.params as never[])
  const plan = rows.map((r) => (r as Record<string, string>)['QUERY PLAN']!)
  const scans = [...new Set(plan.filter((l) => /Scan/.test(l) && /(items|retailers|seller_|shops|skus|offers|selling_units)/.test(l))
    .map((l) => l.trim().replace(/\s*\(actual.*$/, '').replace(/^->\s*/, '')))]
  const time = plan.find((l) => l.startsWith('Execution Time'))
  const buffers = plan.find((l) => l.trim().startsWith('Buffers'))?.trim()
  return `${label}: ${time}; ${buffers}\n    ${scans.join('\n    ')}`
}

interface Result { target: string, rps: number, p50: number, p99: number, bytes: number }

async function measure (
  app: FastifyInstance, token: string, target: string, query: string, input: Record<string, unknown>
): Promise<Result> {
  const { bytes, times, seconds } = await injectLoad({
    app, token, target, query, variables: () => ({ input }), concurrency: CONCURRENCY, seconds: DURATION
  })
  times.sort((a, b) => a - b)
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]!)
  const result = { target, rps: times.length / seconds, p50: at(0.5), p99: at(0.99), bytes }
  log(`  ${target.padEnd(44)} ${result.rps.toFixed(0).padStart(5)} req/s  p50 ${result.p50} ms  p99 ${result.p99} ms  ${bytes} B`)
  return result
}

async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const bench = await benchDatabase('references_lists')
  try {
    const t0 = Date.now()
    await seed(bench.database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    await addCatalogue(bench.database.sql)
    await bench.database.sql`vacuum analyze`
    const [counts] = await bench.database.sql`select (select count(*) from seller_retailers where seller_id = ${SELLER})::int as retailers,
      (select count(*) from items where seller_id = ${SELLER})::int as items, (select count(*) from items)::int as all_items,
      (select count(*) from retailers)::int as all_retailers`
    log(`seeded ${ORDERS.toLocaleString('en')} orders and ${EXTRA.toLocaleString('en')} more retailers and items in ${((Date.now() - t0) / 1000).toFixed(0)} s: ` +
      `seller ${SELLER} has ${counts!.retailers} retailers and ${counts!.items} items (of ${counts!.all_retailers} and ${counts!.all_items})`)
    const deep = Math.floor(EXTRA / 100 / 2)
    const sql = bench.database.sql
    const plans = [
      await explain(sql, 'retailers page 1', retailerConnectionStatement(SELLER, parseReferenceListInput({ limit: 100 }), connection(SELLER_RETAILER), { before: '', after: '' })),
      await explain(sql, `retailers page ${deep}`, retailerConnectionStatement(SELLER, parseReferenceListInput({ limit: 100, page: deep }), connection(SELLER_RETAILER), { before: '', after: '' })),
      await explain(sql, 'retailers unmapped page 2', retailerConnectionStatement(SELLER, parseReferenceListInput({ limit: 100, page: 2, unmapped: true }), connection(SELLER_RETAILER), { before: '', after: '' })),
      await explain(sql, 'items page 1', itemConnectionStatement(SELLER, parseReferenceListInput({ limit: 100 }), connection(SELLER_ITEM), { before: '', after: '' })),
      await explain(sql, `items page ${deep}`, itemConnectionStatement(SELLER, parseReferenceListInput({ limit: 100, page: deep }), connection(SELLER_ITEM), { before: '', after: '' })),
      await explain(sql, 'items unmapped page 2', itemConnectionStatement(SELLER, parseReferenceListInput({ limit: 100, page: 2, unmapped: true }), connection(SELLER_ITEM), { before: '', after: '' }))
    ]
    log(`plans:\n  ${plans.join('\n  ')}`)

    const { secret: token } = await issueCredential(bench.database.db, { sellerId: SELLER, kind: 'access-token', environment: 'testing' })
    const env = { DATABASE_URL: bench.url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false', SHED_EVENT_LOOP_DELAY_MS: '0', SHED_HEAP_USED_BYTES: '0' }
    const served = await buildApp({ config: loadConfig(env), database: bench.database })
    const standard = await buildApp({ config: loadConfig({ ...env, GRAPHQL_PASS_THROUGH: 'false' }), database: bench.database })
    const results: Result[] = []
    const orders = print(OrdersDocument)
    const retailers = print(RetailersDocument)
    const items = print(ItemsDocument)
    results.push(await measure(served, token, 'orders, page 1 (pass-through)', orders, { limit: 100 }))
    results.push(await measure(standard, token, 'orders, page 1 (standard execution)', orders, { limit: 100 }))
    results.push(await measure(served, token, 'retailers, page 1', retailers, { limit: 100 }))
    results.push(await measure(served, token, `retailers, page ${deep}`, retailers, { limit: 100, page: deep }))
    results.push(await measure(served, token, 'retailers, unmapped, page 2', retailers, { limit: 100, page: 2, unmapped: true }))
    results.push(await measure(served, token, 'items, page 1', items, { limit: 100 }))
    results.push(await measure(served, token, `items, page ${deep}`, items, { limit: 100, page: deep }))
    results.push(await measure(served, token, 'items, unmapped, page 2', items, { limit: 100, page: 2, unmapped: true }))
    await served.close()
    await standard.close()
    const base = results[0]!.rps
    process.stdout.write('\n| target (limit 100, full selection) | req/s | p50 ms | p99 ms | answer bytes | vs orders (pass-through) |\n|---|---:|---:|---:|---:|---:|\n')
    for (const r of results) {
      process.stdout.write(`| ${r.target} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.bytes.toLocaleString('en')} | ${Math.round(100 * r.rps / base)} % |\n`)
    }
  } finally {
    await bench.dispose()
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
