import { sql, type SQL } from 'drizzle-orm'
import { fullOrdersCtes } from '../orders/order-json.js'

/*
 * An event's order, for every reader of events (the feed, event-json.ts; a delivery's body, event-body.ts):
 * the order as it is now, written by the read model (orders/order-json.ts FULL_ORDER, the JSON the orders
 * read answers the contract's full document with), once per order however many of the events read name it,
 * in the reader's one statement. The event's own fields are as at the event; the log stores no order
 * (record-events.ts). An event of no order, or of an order that is gone (or soft-deleted, which the orders
 * read does not show either), has the order `null`.
 */

/**
 * The CTEs, to follow the caller's, that write the order of each event of its CTE `events` (column
 * `order_id`) as `order_now (id, t, lengths)`; with `lengths`, each order's list lengths for the GraphQL
 * cost (FULL_ORDER_LIST_PATHS). Adds the CTE `picked`, which the caller must not have.
 */
export function eventOrdersCtes (events: string, options: { lengths: boolean }): SQL {
  return sql`, picked as materialized (
      select distinct order_id as id from ${sql.raw(events)} where order_id is not null
    ) ${fullOrdersCtes('order_now', options)}`
}

/** The join that finds the order of event row `e` (alias `ot`, no row for none). */
export function eventOrderJoin (e: string): SQL {
  return sql.raw(`left join order_now ot on ot.id = ${e}.order_id`)
}

/** The JSON text of the order joined by eventOrderJoin: 'null' for none. */
export const EVENT_ORDER_TEXT: SQL = sql.raw('coalesce(ot.t, \'null\')')
