import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import { prepared } from '../db/statements.js'
import { sampledTraceparent } from '../tracing/trace-context.js'
import type { OrderEventType } from './event-types.js'

/*
 * The seller's event log is written here: one event per change of an order, in the change's own
 * transaction, numbered per seller 1, 2, 3 … with no gap, in the order the transactions commit.
 *
 * Why a counter row and not a sequence (bigserial): a sequence hands out numbers when a row is written,
 * and transactions commit in another order than they drew them. A reader that has seen 11 and 12 cannot
 * know that 10 is still to commit; it moves its cursor past 10 and never sees it. Numbers that only ever
 * become visible in order need the writers of one seller to take turns between drawing a number and
 * committing, and a rolled-back transaction must give its numbers back: a row per seller
 * (seller_event_counters) incremented in the writer's transaction does both. Its row lock serialises the
 * seller's writers from the increment to their commit (the next writer reads the committed value), and a
 * rollback undoes the increment with everything else.
 *
 * The price is that a seller's writers wait on each other from that point, so it is the last statement of
 * every transaction that records events (`recordingEvents` runs the work first): the lock is then held for
 * the commit alone, and a transaction holding it waits for no other lock, so it can never be part of a
 * deadlock with the order, seller and deal locks the changes take (always before). A transaction that
 * records events of several sellers (a platform batch) increments their counters in seller id order, in
 * one statement, so two such transactions queue rather than deadlock.
 *
 * Everything is one statement per transaction, whatever the number of events: the counters, and the
 * events. An event is thin: its own fields (type, the status it moved its order to, the previous one, the
 * reason, the time) and its order's id and store, no copy of the order. Readers build the order as it is
 * when they read (the feed, events/event-json.ts; a delivery's body, events/event-body.ts), with the read
 * model, one statement per page or batch: the event's fields are as at the event, its order as it is now.
 * Storing the order's JSON here made the log a quarter to a third of a status change or a placement
 * (bench/results/2026-11-26-event-log.md); the order as it is now is also what a receiver acts on.
 *
 * Each event keeps the traceparent of the span recording it when that span is sampled (tracing.ts), so
 * that its webhook deliveries, sent later by another process, link back to the request or job that
 * caused it. Every event of a transaction shares it: one parameter of the statement, not a field per row,
 * and always a parameter (null when there is none) so the statement's text is one with tracing on or off.
 */

/** A change of an order to record (the order's row is locked by the change's transaction). */
export interface OrderEvent {
  sellerId: number
  storeId: number
  orderId: number
  type: OrderEventType
  /** The order's status right after this event (an order may move twice in one batch: each event has its own). */
  status: OrderStatus
  previousStatus: OrderStatus | null
  /** The reason given with the change (always for a rejection), else null. */
  reason: string | null
}

/** The events of one transaction, in the order they happened, recorded together at its end. */
export class PendingEvents {
  private readonly events: OrderEvent[] = []

  add (...events: OrderEvent[]): void {
    this.events.push(...events)
  }

  get size (): number {
    return this.events.length
  }

  /** Writes the events (nothing for none): the transaction's last statement, see above. */
  async record (tx: Tx): Promise<void> {
    await recordEvents(tx, this.events.splice(0))
  }
}

/**
 * Where the events of a transaction go: recorded (always, in the service), or dropped — only bench/events
 * passes that, to measure what the log costs a status batch or a placement against the very same code
 * without it. No route, job or CLI command can ask for it.
 */
export type EventLogging = 'record' | 'drop-for-bench'

/**
 * Runs `work` on the transaction and then records the events it added, as the transaction's last
 * statement: the one way a transaction that changes orders ends (status batches, placements,
 * auto-rejections).
 */
export async function recordingEvents<T> (
  tx: Tx, work: (events: PendingEvents) => Promise<T>, logging: EventLogging = 'record'
): Promise<T> {
  const events = new PendingEvents()
  const value = await work(events)
  if (logging === 'record') await events.record(tx)
  return value
}

export async function recordEvents (tx: Tx, events: readonly OrderEvent[]): Promise<void> {
  if (events.length === 0) return
  // Prepared: one text whatever the events (they and the traceparent are parameters); parsing and planning
  // the statement on every call was measured at a fifth of a status batch's log
  // (bench/results/2026-11-27-event-log.md).
  await prepared(tx, recordEventsStatement(events, sampledTraceparent()))
}

/**
 * The CTEs that number `events` (at least one): `e`, the input rows with their rank among their seller's
 * events here; `counted`, each seller's number of them; `bumped`, each seller's counter after the upsert.
 * The counters are taken in seller id order (the upsert writes its rows in the order it reads them); each
 * event's number is `bumped.last_sequence - counted.n + e.rank` (ranked on the small input rows: a window
 * over the written rows would sort them). `stamped` is the events' one time: read once every counter's
 * lock is granted, so every event of the statement has it, and the seller's next writer (who waits for
 * this commit on that lock) reads a later one: times never go back along a sequence. (A time per row would
 * follow the order PostgreSQL writes the rows in, which is not the sequence's.)
 */
function numberedEventsCtes (events: readonly OrderEvent[]): SQL {
  const rows = events.map((e, n) => ({
    n,
    seller_id: e.sellerId,
    store_id: e.storeId,
    order_id: e.orderId,
    type: e.type,
    status: e.status,
    previous_status: e.previousStatus,
    reason: e.reason
  }))
  return sql`e as materialized (
      select e.*, row_number() over (partition by e.seller_id order by e.n) as rank
      from json_to_recordset(${JSON.stringify(rows)}::json) as e(n int, seller_id int, store_id int,
        order_id bigint, type text, status text, previous_status text, reason text)
    ), counted as (
      select seller_id, count(*) as n from e group by seller_id
    ), bumped as (
      insert into seller_event_counters as c (seller_id, last_sequence)
      select seller_id, n from counted order by seller_id
      on conflict (seller_id) do update set last_sequence = c.last_sequence + excluded.last_sequence
      returning seller_id, last_sequence
    ), stamped as materialized (
      select max(clock_timestamp()) as at from bumped
    )`
}

/** The one statement that records `events` (at least one), each with `traceparent` (see above). */
export function recordEventsStatement (events: readonly OrderEvent[], traceparent: string | null): SQL {
  return sql`
    with ${numberedEventsCtes(events)}
    insert into seller_events (seller_id, sequence, type, order_id, store_id, status, previous_status, reason,
      occurred_at, traceparent)
    select e.seller_id, b.last_sequence - c.n + e.rank, e.type::event_type, e.order_id, e.store_id, e.status::order_status,
      e.previous_status::order_status, e.reason, (select at from stamped), ${traceparent}::text
    from e join counted c on c.seller_id = e.seller_id join bumped b on b.seller_id = e.seller_id`
}

/** An event of no order (webhook.test, webhook.endpoint_disabled): the seller's, whatever its stores. */
export type SellerEventType = 'webhook.test' | 'webhook.endpoint_disabled'

/**
 * Records one event of no order in the seller's log (the same counter, so the same gap-free numbering);
 * as for order events, the transaction's last statement. Returns its sequence.
 */
export async function recordSellerEvent (tx: Tx, sellerId: number, type: SellerEventType, reason: string):
Promise<number> {
  const [row] = await tx.execute<{ sequence: string }>(sql`
    with bumped as (
      insert into seller_event_counters as c (seller_id, last_sequence) values (${sellerId}::int, 1)
      on conflict (seller_id) do update set last_sequence = c.last_sequence + 1
      returning last_sequence
    )
    insert into seller_events (seller_id, sequence, type, reason, occurred_at, traceparent)
    select ${sellerId}::int, last_sequence, ${type}::event_type, ${reason}, clock_timestamp(),
      ${sampledTraceparent()}::text from bumped
    returning sequence::text`)
  return Number(row.sequence)
}
