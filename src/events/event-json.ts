import { sql, type Query, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import {
  ALONE, arrayAggText, planObject, PlanNotCovered, stringText, surroundOf, type JsonEntry, type SurroundText
} from '../db/json-text.js'
import { scalarTexts } from '../db/read-model.js'
import { runRawRow, slot, templatesOf, type JsonAnswer } from '../db/statements.js'
import { InvalidInputError } from '../errors.js'
import { FULL_ORDER_LIST_PATHS, FULL_ORDER } from '../orders/order-json.js'
import { MAX_LIMIT } from '../paging/page-window.js'
import type { EventListFilter } from './event-list-input.js'
import { EVENT, type EventView } from './event-model.js'
import { EVENT_ORDER_TEXT, eventOrderJoin, eventOrdersCtes } from './event-order.js'
import { EventFeedText } from './texts.js'

/*
 * A page of the feed (GraphQL `events`): the reader's events after a sequence, in sequence order, as the
 * exact JSON text of what the query selected (an EventConnection), written by PostgreSQL in one statement
 * with one snapshot. Because a seller's sequences become visible only in order (record-events.ts), a page
 * read now holds every event up to its last one: a reader that continues after `endCursor` misses nothing.
 *
 * An event's order is the order as it is now (event-order.ts), written in the same statement with the full
 * order selection (orders/order-json.ts FULL_ORDER: the JSON the orders read answers its full
 * document with), once per order on the page. The statement writes it when the query selects exactly that,
 * in that order (as the contract's OrderFull fragment and @order-exchange/client do); any other selection
 * of it is answered by the standard execution, which reads the same full order and lets graphql-js pick
 * (PlanNotCovered below).
 *
 * A cursor older than the oldest event kept (retention removed what followed it) is refused, naming the
 * oldest available sequence: the statement writes no body then, and says which that is.
 */

/** Who reads: a seller, maybe narrowed to some of its stores (it then reads only their orders' events). */
export interface EventReader { sellerId: number, storeIds: number[] | null }

const FULL_ORDER_KEY = JSON.stringify(FULL_ORDER)

/** The `nodes` of one sub-selection: the page's events (`listed`), in sequence order. */
function nodesText (entries: JsonEntry[]): SQL {
  let order = false
  const node = planObject(entries, 'Event', scalarTexts(EVENT, 'p'), (field, sub) => {
    if (field !== 'order' || JSON.stringify(sub) !== FULL_ORDER_KEY) throw new PlanNotCovered(`Event.${field}`)
    order = true
    return EVENT_ORDER_TEXT
  })
  return sql`(select ${arrayAggText(node, sql.raw('p.sequence'))} from listed p ${order ? eventOrderJoin('p') : sql``})`
}

/**
 * Throws PlanNotCovered unless the statement writes `entries` (an EventConnection's) as they are: the
 * nodes' order must be FULL_ORDER as it is. Checked before anything is spent.
 */
export function checkEventEntries (entries: JsonEntry[]): void {
  for (const { value } of entries) {
    if (value.kind !== 'field' || value.name !== 'nodes') continue
    for (const node of value.entries ?? []) {
      if (node.value.kind === 'field' && node.value.name === 'order' && JSON.stringify(node.value.entries) !== FULL_ORDER_KEY) {
        throw new PlanNotCovered('Event.order (another selection than the full order)')
      }
    }
  }
}

/** Whether `entries` (an EventConnection's) select the nodes' order. */
function selectsOrder (entries: JsonEntry[]): boolean {
  return entries.some(({ value }) => value.kind === 'field' && value.name === 'nodes' &&
    (value.entries ?? []).some((e) => e.value.kind === 'field' && e.value.name === 'order'))
}

/**
 * The lengths of the page's lists, by path, for the GraphQL cost's bill: counted on the orders as the page
 * shows them, each event's order once per event (as the answer has it).
 */
function listLengthsText (entries: JsonEntry[]): SQL {
  const counted: SQL[] = [sql.raw('\'nodes\', (select count(*) from listed)')]
  if (selectsOrder(entries)) {
    FULL_ORDER_LIST_PATHS.forEach((path, i) => counted.push(sql`${sql.raw(`'nodes/order/${path}'`)},
      (select coalesce(sum(ot.lengths[${sql.raw(String(i + 1))}]), 0) from listed p ${eventOrderJoin('p')})`))
  }
  return sql`json_build_object(${sql.join(counted, sql`, `)})::text`
}

export function eventConnectionStatement (
  reader: EventReader, filter: EventListFilter, entries: JsonEntry[], around: SurroundText, countLists = false
): SQL {
  const conditions = [sql`e.seller_id = ${reader.sellerId}::int`, sql`e.sequence > ${filter.after}::bigint`]
  if (filter.types !== null) conditions.push(sql`e.type = any(${sql.param(filter.types)}::event_type[])`)
  // An event of no order (webhook.test) is the seller's, whatever stores a credential is narrowed to.
  if (reader.storeIds !== null) conditions.push(sql`(e.store_id is null or e.store_id = any(${sql.param(reader.storeIds)}::int[]))`)
  const limit = sql`${filter.limit}::int`
  const connection = planObject(entries, 'EventConnection', {}, (field, sub) => {
    if (field === 'nodes') return nodesText(sub)
    if (field === 'pageInfo') {
      return planObject(sub, 'EventPageInfo', {
        hasNext: sql`(case when f.n > ${limit} then 'true' else 'false' end)`,
        // The input's own cursor when the page is empty: a reader can always store endCursor.
        endCursor: stringText(sql`coalesce((select max(sequence) from listed)::text, ${filter.after}::text)`),
        limit: sql`(${limit})::text`
      }, (name) => { throw new PlanNotCovered(`EventPageInfo.${name}`) })
    }
    throw new PlanNotCovered(`EventConnection.${field}`)
  }, surroundOf(around))
  const lengths = countLists ? listLengthsText(entries) : sql`null::text`
  const orders = selectsOrder(entries) ? eventOrdersCtes('listed', { lengths: countLists }) : sql``
  // The oldest sequence a cursor may start from: the first event kept, or (all removed) the next to come.
  // The outer constant LIMIT tells a generic plan that a page is small (as the orders page does).
  return sql`with page as (
      select e.* from seller_events e where ${sql.join(conditions, sql` and `)}
      order by e.sequence limit ${limit} + 1
    ), fetched as (select count(*) as n from page),
    listed as materialized (select * from (select * from page order by sequence limit ${limit}) w
      limit ${sql.raw(String(MAX_LIMIT))}) ${orders},
    oldest as (select coalesce(
      (select min(sequence) from seller_events where seller_id = ${reader.sellerId}::int),
      (select last_sequence + 1 from seller_event_counters where seller_id = ${reader.sellerId}::int), 1) as sequence)
    select case when ${filter.after}::bigint > 0 and ${filter.after}::bigint < (select sequence from oldest) - 1
      then null else ${connection} end as body, ${lengths} as lengths, (select sequence from oldest)::text as oldest
    from fetched f`
}

interface PageContext { reader: EventReader, filter: EventListFilter, around: SurroundText }

/** The statement of `entries` for this reader and filter, its text kept per shape (as order-json.ts does). */
function eventConnectionQuery (tx: Tx, reader: EventReader, filter: EventListFilter, entries: JsonEntry[],
  around: SurroundText, entriesKey: string, countLists: boolean): Query {
  const key = `${entriesKey}|${reader.storeIds === null}|${filter.types === null}|${countLists}`
  return templatesOf<PageContext>(tx, 'event-connection').query(key, () => eventConnectionStatement(
    {
      sellerId: slot((c: PageContext) => c.reader.sellerId),
      storeIds: reader.storeIds === null ? null : slot((c: PageContext) => c.reader.storeIds)
    },
    {
      after: slot((c: PageContext) => c.filter.after),
      limit: slot((c: PageContext) => c.filter.limit),
      types: filter.types === null ? null : slot((c: PageContext) => c.filter.types)
    },
    entries,
    { before: slot((c: PageContext) => c.around.before), after: slot((c: PageContext) => c.around.after) },
    countLists
  ), { reader, filter, around })
}

/**
 * The page as JSON text (an EventConnection of the selected fields, with `around` before and after it),
 * and with `countLists` the lengths of its lists. Throws InvalidInputError for a cursor older than the
 * events kept, PlanNotCovered for a selection it does not write.
 */
export async function readEventConnectionText (tx: Tx, reader: EventReader, filter: EventListFilter,
  entries: JsonEntry[], around: SurroundText, entriesKey = JSON.stringify(entries), countLists = false
): Promise<JsonAnswer> {
  const query = eventConnectionQuery(tx, reader, filter, entries, around, entriesKey, countLists)
  const [body, lengths, oldest] = await runRawRow(tx, query)
  if (!(body instanceof Buffer)) {
    throw new InvalidInputError('after', EventFeedText.expired(filter.after, oldest?.toString('utf8') ?? '1'))
  }
  return { body, lengths: lengths instanceof Buffer ? JSON.parse(lengths.toString('utf8')) : null }
}

/** A page as the standard execution reads it: every field, the order as it is now when `order` is selected. */
export interface EventPage {
  pageInfo: { hasNext: boolean, endCursor: string, limit: number }
  nodes: EventView[]
}

/** The entries of a whole page: pageInfo, and nodes with every field (the full order only when asked for). */
export function eventPageEntries (withOrder: boolean): JsonEntry[] {
  const field = (name: string, entries?: JsonEntry[]): JsonEntry => ({ key: name, value: { kind: 'field', name, entries } })
  const node = Object.entries(EVENT).filter(([, f]) => f.kind === 'scalar').map(([name]) => field(name))
  if (withOrder) node.push(field('order', FULL_ORDER))
  return [field('pageInfo', ['hasNext', 'endCursor', 'limit'].map((name) => field(name))), field('nodes', node)]
}

export async function readEventPage (
  tx: Tx, reader: EventReader, filter: EventListFilter, withOrder: boolean
): Promise<EventPage> {
  const entries = eventPageEntries(withOrder)
  const { body } = await readEventConnectionText(tx, reader, filter, entries, ALONE)
  return JSON.parse(body.toString('utf8')) as EventPage
}
