import { performance } from 'node:perf_hooks'
import { sql as dsql, type Query } from 'drizzle-orm'
import { PgDialect } from 'drizzle-orm/pg-core'
import { recordEvents, recordEventsStatement, type OrderEvent } from '../../src/events/record-events.js'
import { DEFAULT_ANCHOR, seed } from '../../src/seed/seed.js'
import { benchDatabase, machineLine } from '../lib/database.js'
import { numberKnob } from '../lib/knobs.js'
import { median } from '../lib/median.js'

/*
 * A measurement for issue 24, not a feature: what the log's statement costs a status batch of small events,
 * and what two changes to it would save. `npx tsx bench/events/status-statement.ts` (BENCH_DATABASE_URL picks
 * the server). On BENCH_ORDERS (40,000) demo orders whose seller-1 orders have their order.placed:
 * 1. EXPLAIN (ANALYZE, TIMING OFF) of the statement for BENCH_EVENTS (600) order.accepted events in a
 *    transaction rolled back, four variants alternating, BENCH_ROUNDS each (executor time): as it is; the
 *    events as typed arrays (unnest) instead of one JSON text (json_to_recordset); each without
 *    seller_events_small_idx (dropped in the transaction).
 * 2. As the service runs it (prepared, generic plan, in a transaction that commits), after a stand-in for the
 *    batch's own work (one UPDATE of the orders): the statement's round trip and the commit's, with the
 *    events and without, alternating, fresh orders each round (as many rounds as the seed's placed orders
 *    allow). What bench:events' status A/B shows beyond these is the service's own JavaScript for the log.
 */

const ORDERS = numberKnob('BENCH_ORDERS', 40_000, { min: 1, integer: true })
const ROUNDS = numberKnob('BENCH_ROUNDS', 30, { min: 1, integer: true })
const EVENTS = numberKnob('BENCH_EVENTS', 600, { min: 1, integer: true })
const SELLER = 1
const dialect = new PgDialect()

class Rollback extends Error {}

type OrderRow = Record<string, any>

/** The event of `r` of seller 1: its placement as it stands, or its acceptance. */
function eventOf (r: OrderRow, type: 'order.placed' | 'order.accepted'): OrderEvent {
  const placed = type === 'order.placed'
  return {
    sellerId: SELLER,
    storeId: r.store_id,
    orderId: Number(r.id),
    type,
    status: placed ? r.status : 'ORDER_ACCEPTED',
    actionable: placed ? r.is_actionable : false,
    previousStatus: placed ? null : 'ORDER_PLACED',
    reason: null
  }
}

/** The events' columns as the statement's `e` has them, for the typed-array variant. */
const COLUMNS: Array<[string, string, (e: OrderEvent, n: number) => unknown]> = [
  ['n', 'int', (_e, n) => n],
  ['seller_id', 'int', (e) => e.sellerId],
  ['store_id', 'int', (e) => e.storeId],
  ['order_id', 'bigint', (e) => e.orderId],
  ['type', 'text', (e) => e.type],
  ['status', 'text', (e) => e.status],
  ['is_actionable', 'boolean', (e) => e.actionable],
  ['previous_status', 'text', (e) => e.previousStatus],
  ['reason', 'text', (e) => e.reason]
]

/** An array literal (what postgres.js sends for an array parameter, too). */
function arrayLiteral (values: unknown[]): string {
  const element = (v: unknown): string => v === null ? 'NULL' : `"${String(v).replace(/[\\"]/g, (c) => `\\${c}`)}"`
  return `{${values.map(element).join(',')}}`
}

/** The log's statement for `events` as the raw client sends it, and the same with typed arrays. */
function statements (events: OrderEvent[]): { json: Query, typed: Query } {
  const json = dialect.sqlToQuery(recordEventsStatement(events, null))
  // The raw client JSON-encodes a json parameter itself (Drizzle's passes its text through).
  json.params[0] = JSON.parse(json.params[0] as string)
  const from = /json_to_recordset\(\$1::json\) as e\([^)]*\)/
  if (!from.test(json.sql)) throw new Error('the statement\'s shape changed: update this bench')
  // $1 becomes the first array (n), the others go after the statement's own parameters.
  const placeholder = (i: number): string => i === 0 ? '$1' : `$${json.params.length + i}`
  const unnest = `unnest(${COLUMNS.map(([, type], i) => `${placeholder(i)}::${type}[]`).join(', ')})` +
    ` as e(${COLUMNS.map(([c]) => c).join(', ')})`
  const arrays = COLUMNS.map(([, , get]) => arrayLiteral(events.map(get)))
  const params = [arrays[0], ...json.params.slice(1), ...arrays.slice(1)]
  return { json, typed: { sql: json.sql.replace(from, unnest), params } }
}

async function main (): Promise<void> {
  process.stderr.write(`${machineLine()}\n`)
  const bench = await benchDatabase('status_statement')
  try {
    const { database } = bench
    const sql = database.sql
    await seed(database, { orders: ORDERS, seed: 1, anchor: DEFAULT_ANCHOR })
    const rows = await sql`select id, store_id, status, is_actionable from orders where seller_id = ${SELLER} order by id`
    for (let at = 0; at < rows.length; at += 1000) {
      await database.db.transaction((tx) => recordEvents(tx, rows.slice(at, at + 1000).map((r) => eventOf(r, 'order.placed'))))
    }
    await sql`vacuum analyze`
    await sql`checkpoint`
    const placed = rows.filter((r) => r.status === 'ORDER_PLACED')
    if (placed.length < EVENTS) throw new Error('not enough placed orders: raise BENCH_ORDERS')
    const events = placed.slice(0, EVENTS).map((r) => eventOf(r, 'order.accepted'))
    const { json, typed } = statements(events)

    const variants: Record<string, { text: string, params: unknown[], before?: string }> = {
      'json (today)': { text: json.sql, params: json.params },
      'typed arrays': { text: typed.sql, params: typed.params },
      'json, no small_idx': { text: json.sql, params: json.params, before: 'drop index seller_events_small_idx' },
      'typed, no small_idx': { text: typed.sql, params: typed.params, before: 'drop index seller_events_small_idx' }
    }
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]))
    const nodes: Record<string, string> = {}
    for (let round = -2; round < ROUNDS; round++) {
      for (const [name, v] of Object.entries(variants)) {
        try {
          await sql.begin(async (tx) => {
            if (v.before) await tx.unsafe(v.before)
            const [plan] = await tx.unsafe(`explain (analyze, timing off, summary on, format json) ${v.text}`, v.params as any[])
            const p = (plan as any)['QUERY PLAN'][0]
            const written = JSON.stringify(p).match(/"Actual Rows":\d+/g)?.length ?? 0
            nodes[name] = `${written} nodes`
            if (round >= 0) times[name]!.push(p['Execution Time'])
            const [{ n }] = await tx`select count(*)::int as n from seller_events where base_sequence is not null`
            if (n !== EVENTS) throw new Error(`${name}: ${n} small events, not ${EVENTS}`)
            throw new Rollback()
          })
        } catch (err) {
          if (!(err instanceof Rollback)) throw err
        }
      }
    }
    process.stdout.write(`\n${machineLine()}; ${process.env.BENCH_DATABASE_URL ? 'BENCH_DATABASE_URL' : 'embedded'}; ` +
      `${ORDERS} orders; ${EVENTS} small status events; ${ROUNDS} rounds alternating\n\n| variant | executor ms (median) | quartiles |\n|---|---:|---|\n`)
    for (const [name, t] of Object.entries(times)) {
      const s = [...t].sort((a, b) => a - b)
      process.stdout.write(`| ${name} | ${median(t).toFixed(2)} | ${s[Math.floor(s.length / 4)]!.toFixed(2)}–${s[Math.floor(3 * s.length / 4)]!.toFixed(2)} |\n`)
    }

    // Phase 2: the statement as the service runs it (prepared, in a transaction that commits), after a
    // stand-in for the batch's own work (the orders' UPDATE): its round trip and the commit's, with and
    // without the events, alternating, fresh orders each round.
    const rest = placed.slice(EVENTS)
    const phase: Record<string, { work: number[], statement: number[], commit: number[] }> = {
      with: { work: [], statement: [], commit: [] }, without: { work: [], statement: [], commit: [] }
    }
    for (let round = 0; rest.length >= 2 * EVENTS; round++) {
      for (const mode of round % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
        const batch = rest.splice(0, EVENTS)
        const ids = batch.map((r) => Number(r.id))
        const t0 = performance.now()
        let t1 = 0
        let t2 = 0
        await database.db.transaction(async (tx) => {
          await tx.execute(dsql`update orders set status = 'ORDER_ACCEPTED', is_actionable = false, updated_at = now()
            where id = any(${dsql.param(ids)}::bigint[])`)
          t1 = performance.now()
          if (mode === 'with') {
            await recordEvents(tx, batch.map((r) => eventOf(r, 'order.accepted')))
          }
          t2 = performance.now()
        })
        const t3 = performance.now()
        if (round >= 1) {
          phase[mode]!.work.push(t1 - t0)
          phase[mode]!.statement.push(t2 - t1)
          phase[mode]!.commit.push(t3 - t2)
        }
      }
    }
    process.stdout.write(`\n| ${EVENTS} orders, committed (${phase.with!.work.length} rounds) | UPDATE ms | events statement ms | commit ms |\n|---|---:|---:|---:|\n`)
    for (const [mode, p] of Object.entries(phase)) {
      process.stdout.write(`| ${mode} events | ${median(p.work).toFixed(2)} | ${median(p.statement).toFixed(2)} | ${median(p.commit).toFixed(2)} |\n`)
    }
    const [{ small, n }] = await sql`select count(*) filter (where base_sequence is not null)::int as small, count(*)::int as n
      from seller_events where type = 'order.accepted'`
    process.stdout.write(`\n${small} of ${n} committed status events small\n`)
  } finally {
    await bench.dispose()
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
