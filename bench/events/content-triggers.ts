import { performance } from 'node:perf_hooks'
import type postgres from 'postgres'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { topUpReferenceRecords } from '../lib/reference-records.js'
import { median } from '../lib/median.js'

/*
 * What the content-change triggers (drizzle/0018: the event log's record of what else an order shows
 * changed) cost the writes they watch: `npx tsx bench/events/content-triggers.ts` (BENCH_DATABASE_URL picks
 * the server). The heaviest such write is the references sync's rotation, 100,000 rows updated in four
 * statements of 10,000 (the sync writes in chunks of that size); and a catalogue update of 10,000 offers'
 * prices. Each round, in a transaction rolled back: the writes with the triggers, or with them disabled in
 * that transaction (ALTER TABLE … DISABLE TRIGGER, undone by the rollback), alternating, medians.
 */

const ORDERS = numberKnob('BENCH_ORDERS', 20_000, { min: 1, integer: true })
const ROWS = numberKnob('BENCH_REFERENCE_ROWS', 100_000, { min: 4, integer: true })
const ROUNDS = numberKnob('BENCH_ROUNDS', 12, { min: 2, integer: true })
const CHUNK = 10_000
const SELLER = 1

const log = (line: string): void => { process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`) }

/** The content triggers of the tables these writes touch. */
const WATCHED = ['seller_retailers', 'seller_shops', 'items', 'offers']

const TABLES: Record<string, [string, string, string]> = {
  RETAILER: ['seller_retailers', 'retailer_id', 'sync_id'],
  SHOP: ['seller_shops', 'shop_id', 'sync_id'],
  ITEM: ['items', 'id', 'item_sync_id'],
  OFFER: ['offers', 'id', 'offer_sync_id']
}

async function main (): Promise<void> {
  log(`machine: ${machineLine()}`)
  const bench = await benchDatabase('content_triggers')
  try {
    const { database } = bench
    const sql = database.sql
    await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    // Seller 1 topped up with items and offers to ROWS records, as bench:references does.
    const records = await topUpReferenceRecords(sql, SELLER, ROWS)
    const offerIds = records.filter((r) => r.type === 'OFFER').slice(0, CHUNK).map((r) => r.id)
    await sql`vacuum analyze`
    log(`seller ${SELLER}: ${records.length.toLocaleString('en')} records`)
    const triggers = await sql<Array<{ table: string, name: string }>>`select c.relname as table, t.tgname as name from pg_trigger t
      join pg_class c on c.oid = t.tgrelid where t.tgname like '%content%' and c.relname in ${sql(WATCHED)}`

    let round = 0
    const writes: Record<string, (tx: postgres.TransactionSql) => Promise<void>> = {
      // Every record's sync ID replaced (a rotation: the unique checks deferred to the commit, as the sync does).
      [`references rotation, ${ROWS.toLocaleString('en')} rows in chunks of 10,000`]: async (tx) => {
        await tx`set constraints all deferred`
        for (const type of Object.keys(TABLES)) {
          const [table, id, syncId] = TABLES[type]!
          const rows = records.filter((r) => r.type === type)
          for (let at = 0; at < rows.length; at += CHUNK) {
            const chunk = rows.slice(at, at + CHUNK)
            await tx.unsafe(`update ${table} x set ${syncId} = v.s from unnest($1::int[], $2::text[]) as v(id, s)
              where x.seller_id = ${SELLER} and x.${id} = v.id`, [chunk.map((r) => r.id), chunk.map((r) => `${type}-${r.id}-${round}`)])
          }
        }
      },
      'catalogue: 10,000 offers\' prices': async (tx) => {
        await tx`update offers set purchase_price = purchase_price + 1 where id = any(${offerIds}::int[])`
      }
    }
    const lines: string[] = []
    for (const [what, write] of Object.entries(writes)) {
      const times = { with: [] as number[], without: [] as number[] }
      for (round = 0; round < ROUNDS + 1; round++) {
        for (const mode of round % 2 === 0 ? ['with', 'without'] as const : ['without', 'with'] as const) {
          await sql.begin(async (tx) => {
            if (mode === 'without') for (const t of triggers) await tx.unsafe(`alter table ${t.table} disable trigger ${t.name}`)
            const t0 = performance.now()
            await write(tx)
            if (round > 0) times[mode].push(performance.now() - t0) // round 0 warms up
            throw new RollBack()
          }).catch((err: unknown) => { if (!(err instanceof RollBack)) throw err })
        }
      }
      const [on, off] = [median(times.with), median(times.without)]
      lines.push(`| ${what} | ${off.toFixed(1)} | ${on.toFixed(1)} | +${(100 * (on - off) / off).toFixed(1)} % |`)
      log(`${what}: ${off.toFixed(1)} ms without the triggers, ${on.toFixed(1)} ms with`)
    }
    console.log(`\n${machineLine()}; PostgreSQL ${process.env.BENCH_DATABASE_URL ? 'at BENCH_DATABASE_URL' : 'embedded'}; medians of ${ROUNDS}\n`)
    console.log('| write | without the triggers, ms | with, ms | cost |\n|---|---:|---:|---:|')
    for (const line of lines) console.log(line)
  } finally {
    await bench.dispose()
  }
}

class RollBack extends Error {}

main().catch((err: unknown) => { console.error(err); process.exitCode = 1 })
