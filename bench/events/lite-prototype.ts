import { performance } from 'node:perf_hooks'
import { sql, TransactionRollbackError } from 'drizzle-orm'
import { planObject } from '../../src/db/json-text.js'
import { scalarTexts } from '../../src/db/read-model.js'
import { numberedEventsCtes, recordEventsStatement, type OrderEvent } from '../../src/events/record-events.js'
import { FULL_ORDER } from '../../src/orders/order-json.js'
import { ORDER } from '../../src/orders/order-model.js'
import { issueCredential, type Caller } from '../../src/credentials/service.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { updateOrderStatuses } from '../../src/status-update/update-batch.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { ordersIn, statusBatchMaker } from './fixtures.js'
import { median } from '../lib/median.js'

/*
 * A design measurement for issue 24, not a feature: what a status event would cost if it did not write its
 * order's full JSON again. `npx tsx bench/events/lite-prototype.ts` (BENCH_DATABASE_URL picks the server).
 *
 * The event log's goal (≤ 10 % of a status update's rate) is missed because each event builds and writes
 * the order's full JSON (~3.5 KB: its lines, each SKU's offers and selling units, retailer, shop). A status
 * change changes only the order's own status, isActionable and updatedAt (status-update/apply-changes.ts is
 * the one statement that updates an order); the rest could be taken from the order's previous event that
 * wrote it in full, as long as nothing it shows changed since (which needs a per-seller content stamp, see
 * bench/README "Event log"). This measures the write side of that design on a scratch schema in the bench's
 * own database, two ways, each with the sequence of the base event (found by a partial index), no full JSON,
 * and a one-row stamp table joined as the check would: the event row keeps the order's own fields as a JSON
 * text (the same read model, fresh), or only the order's updatedAt (status and isActionable are the event's
 * own columns already; a reader would patch the three into the base's text). Against: today's statement
 * (full JSON), and nothing.
 *
 * On BENCH_ORDERS (100,000) demo orders. Each round, in one transaction rolled back: the BENCH_EVENTS
 * orders' status update (one UPDATE, as a batch's own work, roughly), then the variant's statement; medians;
 * the events' cost is the difference to "none". Then, in the same process, what the events would cost a
 * real status batch: BENCH_RUNS batches of 600 (bench:status's shape) through updateOrderStatuses without
 * the log ('drop-for-bench', as bench:events), their time per 1,000 orders held against each variant's
 * cost: the estimated rate with events / without.
 */

const EVENTS = numberKnob('BENCH_EVENTS', 1000, { min: 1, integer: true })
const ROUNDS = numberKnob('BENCH_ROUNDS', 22, { min: 3, integer: true })
const ORDERS = numberKnob('BENCH_ORDERS', 100_000, { min: 1, integer: true })
const RUNS = numberKnob('BENCH_RUNS', 7, { min: 1, integer: true })
const SELLER = 1
const STATUS_BATCH = 600

/** The order's own fields of FULL_ORDER (no nested object), written as an event's would be. */
const scalarsText = planObject(
  FULL_ORDER.filter((e) => e.value.kind === 'field' && e.value.entries === undefined), 'Order',
  { ...scalarTexts(ORDER, 'o'), orderStatus: ORDER.orderStatus.text('e'), isActionable: ORDER.isActionable.text('e') },
  (name) => { throw new Error(`not a scalar: ${name}`) })

/** The prototype's statement: the counter as today, the order's own fields, the base event's sequence. */
function liteStatement (events: readonly OrderEvent[], fields: 'own fields' | 'updatedAt') {
  return sql`
    with ${numberedEventsCtes(events)}, base as materialized (
      select e.n, (select b.sequence from seller_events b where b.order_id = e.order_id and b.order_json is not null
        order by b.sequence desc limit 1) as sequence from e
    )
    insert into seller_events (seller_id, sequence, type, order_id, store_id, previous_status, reason,
      order_scalars, order_updated_at, base_sequence, occurred_at)
    select e.seller_id, b.last_sequence - c.n + e.rank, e.type::event_type, e.order_id, e.store_id,
      e.previous_status::order_status, e.reason, ${fields === 'own fields' ? scalarsText : sql`null`},
      ${fields === 'updatedAt' ? sql`o.updated_at` : sql`null`}, base.sequence, clock_timestamp()
    from e join counted c on c.seller_id = e.seller_id join bumped b on b.seller_id = e.seller_id
      join lite_content_stamps st on st.seller_id = e.seller_id
      join orders o on o.id = e.order_id join base on base.n = e.n`
}

async function main (): Promise<void> {
  process.stderr.write(`machine: ${machineLine()}\n`)
  const bench = await benchDatabase('lite_prototype')
  try {
    const { database } = bench
    await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    const raw = database.sql
    await raw`alter table seller_events add column order_scalars text, add column order_updated_at timestamptz,
      add column base_sequence bigint`
    await raw`create index seller_events_base on seller_events (order_id, sequence) where order_json is not null`
    await raw`create table lite_content_stamps (seller_id int primary key, stamp bigint not null)`
    await raw`insert into lite_content_stamps select id, 1 from sellers`
    const orders = await raw`select id, store_id from orders where seller_id = ${SELLER} and status = 'ORDER_PLACED'
      and not is_deleted order by id limit ${EVENTS}`
    const accepted = orders.map((r): OrderEvent => ({
      sellerId: SELLER,
      storeId: r.store_id,
      orderId: Number(r.id),
      type: 'order.accepted',
      status: 'ORDER_ACCEPTED',
      actionable: false,
      previousStatus: 'ORDER_PLACED',
      reason: null
    }))
    // Every order gets its placement's full event first: the base a status event would point to.
    const placed = accepted.map((e): OrderEvent => ({
      ...e, type: 'order.placed', status: 'ORDER_PLACED', previousStatus: null, actionable: true
    }))
    await database.db.transaction(async (tx) => { await tx.execute(recordEventsStatement(placed, null)) })
    await raw`vacuum analyze`
    const ids = accepted.map((e) => e.orderId)
    const variants = {
      none: null,
      'full JSON (today)': () => recordEventsStatement(accepted, null),
      'own fields + base (prototype)': () => liteStatement(accepted, 'own fields'),
      'updatedAt + base (prototype)': () => liteStatement(accepted, 'updatedAt')
    }
    const times = new Map<string, number[]>(Object.keys(variants).map((k) => [k, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, statement] of Object.entries(variants)) {
        const t0 = performance.now()
        await database.db.transaction(async (tx) => {
          await tx.execute(sql`update orders set status = 'ORDER_ACCEPTED', is_actionable = false, updated_at = now()
            where id = any(${sql.param(ids)}::bigint[])`)
          if (statement) await tx.execute(statement())
          tx.rollback()
        }).catch((err: unknown) => { if (!(err instanceof TransactionRollbackError)) throw err })
        if (round >= 2) times.get(name)!.push(performance.now() - t0) // two rounds of warm-up
      }
    }
    // A real status batch without the log, on other orders than the prototype's (each used once).
    const { id: credentialId } = await issueCredential(database.db, { sellerId: SELLER, kind: 'api-key', environment: 'testing' })
    const caller: Caller = { credentialId, sellerId: SELLER, kind: 'api-key', environment: 'testing', storeIds: null }
    const used = new Set(ids)
    const free = async (status: string) => (await ordersIn(raw, SELLER, status)).filter((id) => !used.has(id))
    const batch = statusBatchMaker(await free('ORDER_PLACED'), await free('ORDER_ACCEPTED'))
    const batchTimes: number[] = []
    for (let run = -1; run < RUNS; run++) {
      const t0 = performance.now()
      const outcome = await updateOrderStatuses(database.db, { seller: caller }, batch(run < 0 ? 30 : STATUS_BATCH),
        { eventLogging: 'drop-for-bench' })
      if (outcome.failed !== 0) throw new Error(`status update: ${JSON.stringify(outcome.errors.slice(0, 3))}`)
      if (run >= 0) batchTimes.push(performance.now() - t0)
    }
    const batchPer1000 = median(batchTimes) * 1000 / STATUS_BATCH
    const none = median(times.get('none')!)
    console.log(`status batch without events: ${batchPer1000.toFixed(1)} ms per 1,000 orders (median of ${RUNS} batches of ${STATUS_BATCH})`)
    console.log(`| variant (${EVENTS} events) | transaction ms (median of ${ROUNDS - 2}) | events' cost ms per 1,000 | est. with / without |`)
    console.log('|---|---:|---:|---:|')
    for (const [name, values] of times) {
      const m = median(values)
      const cost = (m - none) * 1000 / EVENTS
      const ratio = name === 'none' ? '' : `${(100 * batchPer1000 / (batchPer1000 + cost)).toFixed(1)} %`
      console.log(`| ${name} | ${m.toFixed(1)} | ${name === 'none' ? '' : cost.toFixed(1)} | ${ratio} |`)
    }
  } finally {
    await bench.dispose()
  }
}

main().catch((err: unknown) => { console.error(err); process.exitCode = 1 })
