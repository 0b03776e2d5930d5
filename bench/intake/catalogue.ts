import { sql } from 'drizzle-orm'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { issueCredential } from '../../src/credentials/service.js'
import { PLATFORM_CATALOGUE_PATH, PLATFORM_SELLERS_PATH } from '../../src/routes/rest-contract.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'

/*
 * Catalogue intake benchmark: 100,000 offers (10 per SKU, 5 SKUs per item, so 2,000 items) put through
 * PUT /v2/platform/catalogue over real HTTP, in requests of 1,000 offers (20 item rows) sent one after the
 * other, against a fresh database on an embedded PostgreSQL (fsync on) or BENCH_DATABASE_URL's server.
 * Phases: fresh inserts, the same batches again (all unchanged: nothing written), then every offer's price
 * changed (all updated). Each answer's counts are checked. The app runs in this process (buildApp, listening
 * on a port; the requests go through the kernel's TCP stack like any client's), so the peak RSS reported is
 * process.resourceUsage().maxRSS of server and client together. Baseline, same run: the same rows written
 * by bare set-based statements (json_to_recordset, one per table per batch; no HTTP, no checks, no locks).
 *
 *   npm run bench:intake:catalogue                     # 100,000 offers
 *   BENCH_OFFERS=10000 npm run bench:intake:catalogue  # smoke run
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:intake:catalogue
 */

const OFFERS = numberKnob('BENCH_OFFERS', 100_000, { min: 1, integer: true })
const OFFERS_PER_SKU = 10
const SKUS_PER_ITEM = 5
const OFFERS_PER_REQUEST = numberKnob('BENCH_OFFERS_PER_REQUEST', 1000, { min: 1, integer: true })
const OFFERS_PER_ITEM = OFFERS_PER_SKU * SKUS_PER_ITEM
if (OFFERS % OFFERS_PER_REQUEST !== 0 || OFFERS_PER_REQUEST % OFFERS_PER_ITEM !== 0) {
  throw new Error(`BENCH_OFFERS must be a multiple of ${OFFERS_PER_REQUEST}, which a multiple of ${OFFERS_PER_ITEM}`)
}
const ITEMS = OFFERS / OFFERS_PER_ITEM
const ITEMS_PER_REQUEST = OFFERS_PER_REQUEST / OFFERS_PER_ITEM

/** Item i (from 0) of a seller, its records numbered from `base` so two sellers never share an id. */
function itemRow (i: number, companyId: number, base: number, bump: number) {
  const itemId = base + i + 1
  return {
    id: itemId,
    companyId,
    itemName: `Item ${itemId}`,
    skus: Array.from({ length: SKUS_PER_ITEM }, (_, s) => {
      const skuId = base + i * SKUS_PER_ITEM + s + 1
      return {
        id: skuId,
        skuNickName: `Item ${itemId} pack ${s + 1}`,
        images: [`https://cdn.example.com/sku/${skuId}/1.jpg`, `https://cdn.example.com/sku/${skuId}/2.jpg`],
        tags: ['grocery', `brand-${i % 50}`, `pack-${s + 1}`],
        itemSellingUnits: [
          { id: skuId * 2 - 1, name: 'Piece', multiplier: 1, isBaseUnit: true },
          { id: skuId * 2, name: 'Case', multiplier: '12', isBaseUnit: false }
        ],
        offers: Array.from({ length: OFFERS_PER_SKU }, (_, o) => {
          const offerId = base + (i * SKUS_PER_ITEM + s) * OFFERS_PER_SKU + o + 1
          const cents = 5000 + (offerId % 10_000) + bump
          const price = (cents / 100).toFixed(2)
          // Half numbers, half numeric strings, as a marketplace's JSON would mix them.
          return {
            id: offerId,
            purchasePrice: ((cents - 900) / 100).toFixed(2),
            mrpPriceAmount: o % 2 === 0 ? (cents + 1500) / 100 : ((cents + 1500) / 100).toFixed(2),
            finalPriceWithTax: price,
            currency: 'INR',
            priceRange: [
              { minQuantity: 1, maxQuantity: 9, price },
              { minQuantity: 10, maxQuantity: null, price: (cents - 250) / 100 }
            ]
          }
        })
      }
    })
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US')
const maxRssMb = () => process.resourceUsage().maxRSS / 1024

interface Data { received: number, inserted: number, updated: number, unchanged: number, failed: number }

async function main (): Promise<void> {
  const bench = await benchDatabase('intake_catalogue')
  const { database } = bench
  // Throughput, not limits: rate limits and load shedding off (bench/load measures them); the shedder would
  // read this process's event loop, which the client shares.
  const app = await buildApp({
    config: loadConfig({
      DATABASE_URL: bench.url,
      LOG_LEVEL: 'silent',
      WORKER_ENABLED: 'false',
      RATE_LIMIT_ENABLED: 'false',
      SHED_EVENT_LOOP_DELAY_MS: '0',
      SHED_HEAP_USED_BYTES: '0'
    }),
    database
  })
  try {
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const { secret } = await issueCredential(database.db, { kind: 'platform-key', environment: 'testing' })
    const put = async (path: string, body: string): Promise<Data> => {
      const res = await fetch(`${base}${path}`, {
        method: 'PUT', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body
      })
      const json = await res.json() as { message: string, data: Data }
      if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${json.message}`)
      return json.data
    }
    await put(PLATFORM_SELLERS_PATH, JSON.stringify([1, 2].map((companyId) =>
      ({ companyId, name: `Seller ${companyId}`, status: 'ACTIVE', takeRate: 0, autoRejectEnabled: false, stores: [] }))))
    const rssStart = maxRssMb()

    const table: string[] = []
    const phases: Array<[string, number, keyof Data]> = [
      ['fresh inserts', 0, 'inserted'], ['re-send, all unchanged', 0, 'unchanged'], ['every price changed, all updated', 1, 'updated']
    ]
    const rates = new Map<string, number>()
    for (const [phase, bump, counter] of phases) {
      let ms = 0
      let bytes = 0
      let worst = 0
      for (let first = 0; first < ITEMS; first += ITEMS_PER_REQUEST) {
        const rows = Array.from({ length: ITEMS_PER_REQUEST }, (_, k) => itemRow(first + k, 1, 0, bump))
        const body = JSON.stringify(rows)
        bytes += body.length
        const start = performance.now()
        const data = await put(PLATFORM_CATALOGUE_PATH, body)
        const took = performance.now() - start
        ms += took
        worst = Math.max(worst, took)
        if (data[counter] !== ITEMS_PER_REQUEST) throw new Error(`${phase}: ${JSON.stringify(data)}`)
      }
      const rate = OFFERS / (ms / 1000)
      rates.set(phase, rate)
      table.push(`| PUT /v2/platform/catalogue, ${phase} | ${(bytes / 2 ** 20).toFixed(1)} MB | ${fmt(ms)} | ` +
        `${fmt(ms / (ITEMS / ITEMS_PER_REQUEST))} / ${fmt(worst)} | ${fmt(rate)} | ${maxRssMb().toFixed(0)} |`)
    }

    // Baseline: the same rows (seller 2, ids past seller 1's), bare statements, no HTTP, no checks.
    let baselineMs = 0
    for (let first = 0; first < ITEMS; first += ITEMS_PER_REQUEST) {
      const rows = Array.from({ length: ITEMS_PER_REQUEST }, (_, k) => itemRow(first + k, 2, 10_000_000, 0))
      const skus = rows.flatMap((r) => r.skus.map((s) => ({ ...s, item_id: r.id })))
      const start = performance.now()
      await database.db.transaction(async (tx) => {
        const json = (v: unknown) => sql`${JSON.stringify(v)}::json`
        await tx.execute(sql`insert into items (id, seller_id, item_name) select id, 2, "itemName"
          from json_to_recordset(${json(rows)}) as s(id int, "itemName" text)`)
        await tx.execute(sql`insert into skus (id, seller_id, item_id, sku_nick_name, images, tags)
          select id, 2, item_id, "skuNickName", images, tags
          from json_to_recordset(${json(skus)}) as s(id int, item_id int, "skuNickName" text, images text[], tags text[])`)
        await tx.execute(sql`insert into selling_units (id, sku_id, name, multiplier, is_base_unit)
          select id, sku_id, name, multiplier, "isBaseUnit"
          from json_to_recordset(${json(skus.flatMap((s) => s.itemSellingUnits.map((u) => ({ ...u, sku_id: s.id }))))})
            as s(id int, sku_id int, name text, multiplier numeric, "isBaseUnit" boolean)`)
        await tx.execute(sql`insert into offers (id, seller_id, sku_id, purchase_price, mrp_price_amount, final_price_with_tax,
            currency, price_range)
          select id, 2, sku_id, "purchasePrice", "mrpPriceAmount", "finalPriceWithTax", currency, "priceRange"
          from json_to_recordset(${json(skus.flatMap((s) => s.offers.map((o) => ({ ...o, sku_id: s.id }))))})
            as s(id int, sku_id int, "purchasePrice" numeric, "mrpPriceAmount" numeric, "finalPriceWithTax" numeric,
              currency text, "priceRange" jsonb)`)
      })
      baselineMs += performance.now() - start
    }
    const baselineRate = OFFERS / (baselineMs / 1000)
    table.push(`| baseline: bare set-based inserts in process, fresh | – | ${fmt(baselineMs)} | ` +
      `${fmt(baselineMs / (ITEMS / ITEMS_PER_REQUEST))} / – | ${fmt(baselineRate)} | ${maxRssMb().toFixed(0)} |`)

    const [counts] = await database.sql`select (select count(*)::int from offers) as offers,
      (select count(*)::int from items) as items, (select count(*)::int from skus) as skus`
    if (counts.offers !== OFFERS * 2) throw new Error(`expected ${OFFERS * 2} offers, found ${counts.offers}`)
    const [pg] = await database.sql`select version() as v`
    console.log(`\nCatalogue intake bench — ${machineLine()}`)
    console.log(`PostgreSQL: ${String(pg.v).split(',')[0]} (${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded, fsync on'})`)
    console.log(`${fmt(OFFERS)} offers = ${fmt(ITEMS)} items × ${SKUS_PER_ITEM} SKUs × ${OFFERS_PER_SKU} offers (2 selling units ` +
      `and 2 price slabs each); ${fmt(ITEMS / ITEMS_PER_REQUEST)} requests of ${fmt(OFFERS_PER_REQUEST)} offers ` +
      `(${ITEMS_PER_REQUEST} item rows), one at a time. Peak RSS (server and client, one process) before the catalogue: ` +
      `${rssStart.toFixed(0)} MB`)
    console.log('\n| phase | bodies | total ms | ms per request (mean / worst) | offers/s | peak RSS so far (MB) |')
    console.log('|---|---:|---:|---:|---:|---:|')
    for (const line of table) console.log(line)
    const fresh = rates.get('fresh inserts')!
    console.log(`\nFresh inserts through the route at ${(fresh / baselineRate * 100).toFixed(0)} % of the bare statements' offers/s.`)
  } finally {
    await app.close()
    await bench.dispose()
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
