import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { OrderStatus } from '../db/schema.js'
import { scalarTexts } from '../db/read-model.js'
import { prepared } from '../db/statements.js'
import { ORDER } from '../orders/order-model.js'
import { fullOrderParts } from '../orders/order-json.js'
import { sampledTraceparent } from '../tracing/trace-context.js'
import { ORDER_SHAPE } from './event-order-text.js'
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
 * events with their orders' JSON, written by PostgreSQL from the same read model the orders query uses
 * (orders/order-json.ts, every field of every object), as the transaction sees the order at that point.
 * A status change of an order whose last built event still shows everything else as it is stores less: its
 * order's status, isActionable and updatedAt and that event's sequence (SMALL_EVENTS below); building the
 * ~3.5 KB JSON again was a quarter to a third of a status change's cost (bench/README "Event log"). Readers
 * write it over the base's text (event-order-text.ts), so every reader gets the same bytes either way.
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
  /** The order's status right after this event: its JSON shows it (an order may move twice in one batch). */
  status: OrderStatus
  /** Whether the order is actionable in that status (orders.is_actionable). */
  actionable: boolean
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

/**
 * An order's own fields in an event: as the read model writes them from the order's row `o`, except its
 * status and isActionable, which are the event's (`e`, whose columns are named as the order's).
 */
const EVENT_ORDER_SCALARS = {
  ...scalarTexts(ORDER, 'o'),
  orderStatus: ORDER.orderStatus.text('e'),
  isActionable: ORDER.isActionable.text('e')
}

export async function recordEvents (tx: Tx, events: readonly OrderEvent[]): Promise<void> {
  if (events.length === 0) return
  // Prepared: one text whatever the events (they and the traceparent are parameters), and parsing and
  // planning its ~10 KB of CTEs was ~4 ms of every call, a fifth of a status batch's log (bench/README).
  await prepared(tx, recordEventsStatement(events, sampledTraceparent()))
}

/**
 * The CTEs that number `events` (at least one): `e`, the input rows with their rank among their seller's
 * events here; `counted`, each seller's number of them; `bumped`, each seller's counter after the upsert.
 * The counters are taken in seller id order (the upsert writes its rows in the order it reads them); each
 * event's number is `bumped.last_sequence - counted.n + e.rank` (ranked on the small input rows: a window
 * over the written rows would sort their JSON). `stamped` is the events' one time: read once every counter's
 * lock is granted, so every event of the statement has it, and the seller's next writer (who waits for
 * this commit on that lock) reads a later one: times never go back along a sequence. (A time per row would
 * follow the order PostgreSQL writes the rows in, which is not the sequence's.)
 */
export function numberedEventsCtes (events: readonly OrderEvent[]): SQL {
  const rows = events.map((e, n) => ({
    n,
    seller_id: e.sellerId,
    store_id: e.storeId,
    order_id: e.orderId,
    type: e.type,
    status: e.status,
    is_actionable: e.actionable,
    previous_status: e.previousStatus,
    reason: e.reason
  }))
  return sql`e as materialized (
      select e.*, row_number() over (partition by e.seller_id order by e.n) as rank
      from json_to_recordset(${JSON.stringify(rows)}::json) as e(n int, seller_id int, store_id int,
        order_id bigint, type text, status text, is_actionable boolean, previous_status text, reason text)
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

/**
 * Which of the events `e` may be small (record the order's status, isActionable and updatedAt, and point at
 * a base), by `e.n`: a status change of an order whose newest built event (its base), built with this
 * FULL_ORDER (ORDER_SHAPE), shows everything else as it is now. That holds when no change recorded in
 * content_changes (drizzle/0018: every table the order's JSON reads, by triggers) for the order, its seller
 * or every seller (0) is visible to this statement but was not to the statement that built the base: its
 * snapshot, and its own transaction. Changes below the horizon are pruned, so a base whose snapshot may not
 * have seen one of them is not used. A change not yet committed is seen by neither this statement nor its
 * full JSON, so the answer is the same as building it.
 */
const SMALL_EVENTS = sql.raw(`base as materialized (
      select e.n, e.seller_id, e.order_id, b.sequence, b.content_snapshot as snapshot, b.content_xid as xid
      from e cross join lateral (
        select b.sequence, b.content_snapshot, b.content_xid, b.order_shape from seller_events b
        where b.order_id = e.order_id and b.seller_id = e.seller_id and b.content_snapshot is not null
        order by b.sequence desc limit 1) b
      where e.type <> 'order.placed' and b.order_shape = ${ORDER_SHAPE}
    ), recent as materialized (
      select c.seller_id, c.order_id, c.xid from content_changes c
      where c.seller_id in (select seller_id from counted union all select 0)
        and c.xid >= (select min(pg_snapshot_xmin(snapshot)) from base)
    ), small as materialized (
      select base.n, base.sequence from base
      where pg_snapshot_xmin(base.snapshot) >= (select horizon from content_change_horizon)
        and not exists (select 1 from recent c
          where c.seller_id in (base.seller_id, 0) and c.order_id in (0, base.order_id)
            and c.xid >= pg_snapshot_xmin(base.snapshot) and c.xid <> base.xid
            and not pg_visible_in_snapshot(c.xid, base.snapshot))
    )`)

/**
 * The one statement that records `events` (at least one), each with `traceparent` (see above): the small
 * ones (SMALL_EVENTS) with their base, the others with their order's JSON built, the snapshot it was built
 * in and the transaction's id (a base for the next).
 */
export function recordEventsStatement (events: readonly OrderEvent[], traceparent: string | null): SQL {
  const order = fullOrderParts(EVENT_ORDER_SCALARS)
  const numbered = sql`e.seller_id, b.last_sequence - c.n + e.rank, e.type::event_type, e.order_id, e.store_id,
      e.previous_status::order_status, e.reason`
  const joined = sql`e join counted c on c.seller_id = e.seller_id join bumped b on b.seller_id = e.seller_id
      join orders o on o.id = e.order_id`
  return sql`
    with ${numberedEventsCtes(events)}, ${SMALL_EVENTS}, picked as materialized (
      select distinct order_id as id from e where e.n not in (select n from small)
    ) ${order.ctes}, built as (
      insert into seller_events (seller_id, sequence, type, order_id, store_id, previous_status, reason, order_json,
        order_list_lengths, occurred_at, traceparent, content_snapshot, content_xid, order_shape)
      select ${numbered}, ${order.text}, ${order.lengths}, (select at from stamped), ${traceparent}::text,
        pg_current_snapshot(), pg_current_xact_id(), ${sql.raw(String(ORDER_SHAPE))}
      from ${joined} ${order.joins}
      where e.n not in (select n from small)
    )
    insert into seller_events (seller_id, sequence, type, order_id, store_id, previous_status, reason,
      occurred_at, traceparent, base_sequence, order_status, order_is_actionable, order_updated_at)
    select ${numbered}, (select at from stamped), ${traceparent}::text, s.sequence, e.status::order_status, e.is_actionable,
      o.updated_at
    from ${joined} join small s on s.n = e.n`
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
