import { sql, type SQL } from 'drizzle-orm'
import { MAX_LIMIT } from '../paging/page-window.js'
import type { OrderListFilter } from './order-list-input.js'

/*
 * Which orders a page holds: the reader's live orders matching the filter, oldest first (then id), the
 * page's ids picked by one index walk, and the total only when it must be counted. Every orders read
 * starts its one statement from here (order-json.ts).
 */

/** Who reads: a seller, maybe narrowed to some of its stores. */
export interface OrderReader { sellerId: number, storeIds: number[] | null }

/**
 * The conditions of "this reader's live orders matching the filter". Only the conditions in use are
 * written, so each prepared statement gets a plan that walks orders_seller_created_idx (or
 * orders_seller_updated_idx for updatedSince) instead of a generic plan full of `$n is null or …`.
 */
function whereClause (reader: OrderReader, filter: OrderListFilter, timeZone: string): SQL {
  const conditions = [sql`o.seller_id = ${reader.sellerId}::int`, sql`not o.is_deleted`]
  if (reader.storeIds) conditions.push(sql`o.store_id = any(${sql.param(reader.storeIds)}::int[])`)
  // Whole days in the business time zone, DST included: [fromDate 00:00, toDate + 1 day 00:00).
  if (filter.fromDate !== null) conditions.push(sql`o.created_at >= (${filter.fromDate}::date)::timestamp at time zone ${timeZone}::text`)
  if (filter.toDate !== null) conditions.push(sql`o.created_at < (${filter.toDate}::date + 1)::timestamp at time zone ${timeZone}::text`)
  if (filter.updatedSince !== null) conditions.push(sql`o.updated_at > ${filter.updatedSince}::timestamptz`)
  return sql.join(conditions, sql` and `)
}

/**
 * How many orders match. Without a date or updatedSince filter that is the reader's live orders: the sum
 * of a few order_counts rows (kept by triggers, same snapshot), whatever the seller's size. With one,
 * an index-only count over the range, which grows with the range, not with the table.
 */
function countStatement (reader: OrderReader, filter: OrderListFilter, where: SQL): SQL {
  if (filter.fromDate !== null || filter.toDate !== null || filter.updatedSince !== null) {
    return sql`select count(*) from orders o where ${where}`
  }
  const stores = reader.storeIds ? sql` and c.store_id = any(${sql.param(reader.storeIds)}::int[])` : sql``
  return sql`select coalesce(sum(c.live_orders), 0) from order_counts c where c.seller_id = ${reader.sellerId}::int${stores}`
}

/**
 * What every page statement starts from: the page's ids (`picked`, in page order), how many rows were
 * fetched (`fetched f`: one more than the page tells whether another follows), and the total.
 */
export interface PageSource {
  /** `with page …, fetched …, picked …` (continue with `, name as (…)`). */
  ctes: SQL
  /** The total of matching orders, as an SQL expression over `f` (counts only when it must). */
  total: SQL
  /** The page size, as an SQL expression. */
  limit: SQL
}

export function pageSource (reader: OrderReader, filter: OrderListFilter, timeZone: string): PageSource {
  const where = whereClause(reader, filter, timeZone)
  const limit = sql`${filter.limit}::int`
  // Computed by PostgreSQL, not here, so the statement can be a template (order-json.ts).
  const offset = sql`((${filter.page}::bigint - 1) * ${filter.limit}::int)`
  // The page size is a parameter, so the generic plan of a prepared statement cannot see that a page is
  // small: it took `picked` for a tenth of the seller's orders and, at 1,000,000 orders, hash-joined the
  // whole retailers and shops tables to it (25 ms of a 45 ms page). The outer constant LIMIT (never below
  // the page: a limit is at most MAX_LIMIT) tells it, and it joins each order's rows by index again.
  return {
    ctes: sql`with page as (
      select o.id, o.created_at from orders o where ${where}
      order by o.created_at, o.id limit ${limit} + 1 offset ${offset}
    ), fetched as (select count(*) as n from page),
    picked as materialized (select id, created_at from (
      select id, created_at from page order by created_at, id limit ${limit}
    ) w limit ${sql.raw(String(MAX_LIMIT))})`,
    // On the last page the total is known without counting (offset + rows), so the count runs only when
    // there is a next page or the page is past the end; PostgreSQL evaluates the uncorrelated sub-select
    // only in the branch that needs it.
    total: sql`case when f.n <= ${limit} and (f.n > 0 or ${offset} = 0) then ${offset} + f.n
        else (${countStatement(reader, filter, where)}) end`,
    limit
  }
}
