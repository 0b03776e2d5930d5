import { sql, type SQL } from 'drizzle-orm'
import { planObject, PlanNotCovered, type JsonEntry } from '../db/json-text.js'

/*
 * The `pageInfo` of every list read, written by PostgreSQL in the page's statement. hasNext has one
 * method everywhere: the page is read with one row more than it shows, and another page follows when that
 * row came back, so no list needs a count to know it.
 */

/** A pageInfo as read back: total only when it was asked for. */
export interface PageInfoView { page: number, limit: number, hasNext: boolean, total?: number }

export interface PageInfoSource {
  /** The total of matching rows, as SQL (counted only when pageInfo.total is selected). */
  total: SQL
  page: SQL
  limit: SQL
  /** How many rows the page read, at most limit + 1. */
  fetched: SQL
}

export function pageInfoText (entries: JsonEntry[], source: PageInfoSource): SQL {
  return planObject(entries, 'PageInfo', {
    total: sql`(${source.total})::text`,
    page: sql`(${source.page})::text`,
    hasNext: sql`(case when ${source.fetched} > ${source.limit} then 'true' else 'false' end)`,
    limit: sql`(${source.limit})::text`
  }, (name) => { throw new PlanNotCovered(`PageInfo.${name}`) })
}

/**
 * The total of a page read with one row more than it shows (`fetched` rows at `offset`): on the last page
 * it is offset + rows, known without counting, so `count` runs only when there is a next page or the page
 * is past the end (PostgreSQL evaluates an uncorrelated sub-select only in the branch that needs it).
 */
export function pageTotal (fetched: SQL, limit: SQL, offset: SQL, count: SQL): SQL {
  return sql`(case when ${fetched} <= ${limit} and (${fetched} > 0 or ${offset} = 0) then ${offset} + ${fetched}
    else (${count}) end)`
}

/** The entries of a whole pageInfo, total included only when it was asked for (it may cost a count). */
export function pageInfoEntries (total: boolean): JsonEntry[] {
  return ['page', 'limit', 'hasNext', ...(total ? ['total'] : [])].map((name) => ({ key: name, value: { kind: 'field', name } }))
}

/** A connection as the standard execution reads it: the statement's JSON parsed, nodes empty when not selected. */
export interface Connection<T> { pageInfo: PageInfoView, nodes: T[] }

export function parseConnection<T> (text: Buffer): Connection<T> {
  const connection = JSON.parse(text.toString('utf8')) as { pageInfo: PageInfoView, nodes?: T[] }
  return { pageInfo: connection.pageInfo, nodes: connection.nodes ?? [] }
}
