import { sql, type Query, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import {
  arrayAggText, elementsAggText, listText, planObject, PlanNotCovered, surroundOf, type JsonEntry, type SurroundText
} from '../db/json-text.js'
import { scalarTexts } from '../db/read-model.js'
import { runJsonQuery, slot, templatesOf, type JsonAnswer } from '../db/statements.js'
import { pageInfoText } from '../paging/page-info.js'
import type { OrderListFilter } from './order-list-input.js'
import { ITEM, OFFER, ORDER, ORDER_ITEM, PRICE_SLAB, RETAILER, SELLING_UNIT, SHOP, SKU } from './order-model.js'
import { pageSource, type OrderReader } from './order-page.js'

/*
 * A page of orders as the exact JSON text of what the query selected (an OrderConnection), built by
 * PostgreSQL in one statement (the page of order-page.ts), each object written with the selected fields
 * only, in selection order, under their aliases, each field as order-model.ts declares it. The
 * pass-through splices the text into the answer without parsing it (graphql/pass-through.ts); the standard
 * execution selects every field and parses it (read-orders.ts).
 *
 * Nested lists are built set-wise, once per page, not once per order: the page's lines in one join, each
 * SKU once, each list of a SKU's offers or selling units once, then grouped per order (correlated
 * sub-selects per order and line were measured 2–3× slower: the executor restarts each one per row).
 * Each part is MATERIALIZED: with a prepared statement's generic plan the planner expects a handful of
 * rows and would otherwise re-run an inlined aggregate per outer row. A field selected twice under
 * different aliases with different sub-selections gets a part of its own.
 */

/** The statement's parts: CTEs in dependency order, and a counter for their names. */
class Parts {
  readonly ctes: SQL[] = []
  private n = 0
  lines = false
  name (prefix: string): string { return `${prefix}_${++this.n}` }
  /** The page's order lines, once. */
  useLines (): void {
    if (this.lines) return
    this.lines = true
    this.ctes.push(sql`line as materialized (select oi.* from picked p join order_items oi on oi.order_id = p.id)`)
  }
}

function noNested (type: string) {
  return (name: string): SQL => { throw new PlanNotCovered(`${type}.${name}`) }
}

/** One offer from its row `f` (also the items list's, references/item-json.ts). */
export function offerText (entries: JsonEntry[], f: string): SQL {
  return planObject(entries, 'Offer', scalarTexts(OFFER, f), (name, slab) => {
    if (name !== 'priceRange') throw new PlanNotCovered(`Offer.${name}`)
    const element = planObject(slab, 'PriceSlab', scalarTexts(PRICE_SLAB, 'e'), noNested('PriceSlab'))
    return sql`(select ${arrayAggText(element, sql.raw('e.ord'))}
      from jsonb_array_elements(${sql.raw(`${f}.price_range`)}) with ordinality e(v, ord))`
  })
}

/** A SKU CTE for one sub-selection: each SKU of the page's lines once, as text. */
function skuCte (entries: JsonEntry[], parts: Parts): string {
  const name = parts.name('sku')
  const joins: SQL[] = []
  const text = planObject(entries, 'Sku', scalarTexts(SKU, 'k'), (field, sub) => {
    const alias = parts.name(field === 'offers' ? 'so' : 'su')
    if (field === 'offers') {
      parts.ctes.push(sql`${sql.raw(alias)} as materialized (select so.sku_id, ${elementsAggText(offerText(sub, 'so'), sql.raw('so.id'))} as t
        from offers so where so.sku_id in (select sku_id from line) group by so.sku_id)`)
    } else if (field === 'itemSellingUnits') {
      const unit = planObject(sub, 'ItemSellingUnit', scalarTexts(SELLING_UNIT, 'u'), noNested('ItemSellingUnit'))
      parts.ctes.push(sql`${sql.raw(alias)} as materialized (select u.sku_id, ${elementsAggText(unit, sql.raw('u.id'))} as t
        from selling_units u where u.sku_id in (select sku_id from line) group by u.sku_id)`)
    } else {
      throw new PlanNotCovered(`Sku.${field}`)
    }
    joins.push(sql.raw(`left join ${alias} on ${alias}.sku_id = k.id`))
    return listText(sql.raw(`${alias}.t`))
  })
  parts.ctes.push(sql`${sql.raw(name)} as materialized (select k.id, ${text} as t from skus k ${sql.join(joins, sql` `)}
    where k.id in (select sku_id from line))`)
  return name
}

/** A lines CTE for one sub-selection of orderItems: per order, the text of its lines in id order. */
function linesCte (entries: JsonEntry[], parts: Parts): string {
  parts.useLines()
  const name = parts.name('lines')
  const joins: SQL[] = []
  const text = planObject(entries, 'OrderItem', scalarTexts(ORDER_ITEM, 'l'), (field, sub) => {
    const alias = parts.name(field)
    if (field === 'offer') {
      joins.push(sql.raw(`join offers ${alias} on ${alias}.id = l.offer_id`))
      return offerText(sub, alias)
    }
    if (field === 'item') {
      joins.push(sql.raw(`join items ${alias} on ${alias}.id = l.item_id`))
      return planObject(sub, 'Item', scalarTexts(ITEM, alias), noNested('Item'))
    }
    if (field === 'sku') {
      const sku = skuCte(sub, parts)
      joins.push(sql.raw(`join ${sku} ${alias} on ${alias}.id = l.sku_id`))
      return sql.raw(`${alias}.t`)
    }
    throw new PlanNotCovered(`OrderItem.${field}`)
  })
  parts.ctes.push(sql`${sql.raw(name)} as materialized (select l.order_id, ${elementsAggText(text, sql.raw('l.id'))} as t
    from line l ${sql.join(joins, sql` `)} group by l.order_id)`)
  return name
}

/**
 * One order's text from its row `o`, and the joins it needs below `o`. The nested lists come from CTEs
 * (added to `parts`) over `picked p`: the ids of the orders being written.
 */
function orderObject (entries: JsonEntry[], parts: Parts): { text: SQL, joins: SQL[] } {
  const joins: SQL[] = []
  let retailer = false
  let shop = false
  const text = planObject(entries, 'Order', scalarTexts(ORDER, 'o'), (field, sub) => {
    if (field === 'retailer') {
      // The seller's own link (its sync ID): the primary key (seller_id, retailer_id) finds it.
      if (!retailer) {
        joins.push(sql.raw(`join retailers r on r.id = o.retailer_id
          left join seller_retailers rl on rl.seller_id = o.seller_id and rl.retailer_id = o.retailer_id`))
      }
      retailer = true
      return planObject(sub, 'Retailer', scalarTexts(RETAILER, 'r'), noNested('Retailer'))
    }
    if (field === 'shop') {
      if (!shop) {
        joins.push(sql.raw(`left join shops s on s.id = o.shop_id
          left join seller_shops sl on sl.seller_id = o.seller_id and sl.shop_id = s.id
          left join seller_retailers srl on srl.seller_id = o.seller_id and srl.retailer_id = s.retailer_id`))
      }
      shop = true
      const text = planObject(sub, 'Shop', scalarTexts(SHOP, 's'), noNested('Shop'))
      return sql`(case when s.id is null then 'null' else ${text} end)`
    }
    if (field === 'orderItems') {
      const lines = linesCte(sub, parts)
      const alias = parts.name('li')
      joins.push(sql.raw(`left join ${lines} ${alias} on ${alias}.order_id = o.id`))
      return listText(sql.raw(`${alias}.t`))
    }
    throw new PlanNotCovered(`Order.${field}`)
  })
  return { text, joins }
}

/** The `nodes` list of one sub-selection: the page's orders, in page order. */
function nodesText (entries: JsonEntry[], parts: Parts): SQL {
  const { text, joins } = orderObject(entries, parts)
  return sql`(select ${arrayAggText(text, sql.raw('p.created_at, p.id'))} from picked p join orders o on o.id = p.id ${sql.join(joins, sql` `)})`
}

/** A selection written compactly: a field, or a field and the selection of its object. */
type Selection = ReadonlyArray<string | readonly [string, Selection]>

function entriesOfSelection (selection: Selection): JsonEntry[] {
  return selection.map((f): JsonEntry => typeof f === 'string'
    ? { key: f, value: { kind: 'field', name: f } }
    : { key: f[0], value: { kind: 'field', name: f[0], entries: entriesOfSelection(f[1]) } })
}

/**
 * The full order selection of docs/api/orders.md (with paymentMode, createdAt, updatedAt), in the order of the
 * contract's own document (src/graphql/operations/orders.graphql, fragment OrderFull; a test holds the two
 * equal): an event's order (the feed's, a delivery's `data.order`), the very JSON the orders read answers
 * that document with.
 */
export const FULL_ORDER: JsonEntry[] = entriesOfSelection([
  'orderId', 'orderNumber', 'serviceOrderNumber', 'orderStatus', 'deliveryType', 'paymentMode', 'companyId', 'storeId',
  'retailerName', ['retailer', ['id', 'name', 'firstName', 'lastName', 'phone', 'whatsapp', 'syncId']],
  'isActionable', 'currencyCode', 'orderTotal', 'orderTotalFinal', 'orderTaxAmount', 'orderCessAmount', 'appliedPoints',
  'totalExtraCharges', 'roundOff', 'totalItemsInOrder', 'isDeleted', ['shop', ['id', 'syncId', 'retailerSyncId', 'shopName']],
  ['orderItems', [
    'id', 'skuId', 'quantity', 'unitPrice', 'lineTotal', ['offer', ['id', 'offerSyncId', 'finalPriceWithTax']], ['item', ['id', 'itemName', 'itemSyncId']],
    ['sku', [
      'itemId', 'skuNickName', 'images', 'tags',
      ['offers', ['id', 'skuId', 'offerSyncId', 'purchasePrice', 'mrpPriceAmount', 'currency',
        ['priceRange', ['minQuantity', 'maxQuantity', 'price']]]],
      ['itemSellingUnits', ['id', 'name', 'multiplier', 'isBaseUnit', 'skuId']]
    ]]
  ]],
  'createdAt', 'updatedAt'
])

/**
 * The lists of FULL_ORDER whose lengths the GraphQL cost bills, by their path below the order, in the order
 * of fullOrdersCtes' `lengths`.
 */
export const FULL_ORDER_LIST_PATHS = [
  'orderItems', 'orderItems/sku/offers', 'orderItems/sku/offers/priceRange', 'orderItems/sku/itemSellingUnits'
] as const

/**
 * The CTEs that write FULL_ORDER once for each order of `picked` (a CTE of the caller's, with the orders'
 * ids as column `id`, each once; it may name one that is gone), for readers whose rows are not a page
 * of orders: the event feed and the events' bodies (events/). To follow the caller's CTEs; they end with
 * `name (id, t, lengths)`: each live order's JSON text, and with `lengths` an int[] of its
 * FULL_ORDER_LIST_PATHS lengths (else null). A missing or soft-deleted order has no row there, as the
 * orders read does not show it either.
 */
export function fullOrdersCtes (name: string, options: { lengths: boolean }): SQL {
  const parts = new Parts()
  const { text, joins } = orderObject(FULL_ORDER, parts)
  let lengths = sql.raw('null::int[]')
  if (options.lengths) {
    // Each SKU's offer, price slab and selling-unit counts once, summed per order over its lines: what
    // LIST_LENGTHS counts for a page, per order.
    parts.useLines()
    parts.ctes.push(sql.raw(`sku_lists as materialized (
      select k.id as sku_id,
        (select count(*) from offers so where so.sku_id = k.id) as offers,
        (select coalesce(sum(jsonb_array_length(so.price_range)), 0) from offers so where so.sku_id = k.id) as slabs,
        (select count(*) from selling_units u where u.sku_id = k.id) as units
      from skus k where k.id in (select sku_id from line))`))
    parts.ctes.push(sql.raw(`lengths_of_order as materialized (
      select l.order_id, array[count(*), sum(k.offers), sum(k.slabs), sum(k.units)]::int[] as lengths
      from line l join sku_lists k on k.sku_id = l.sku_id group by l.order_id)`))
    joins.push(sql.raw('left join lengths_of_order lo on lo.order_id = o.id'))
    lengths = sql.raw('coalesce(lo.lengths, \'{0,0,0,0}\'::int[])')
  }
  parts.ctes.push(sql`${sql.raw(name)} as materialized (select o.id, ${text} as t, ${lengths} as lengths
    from picked p join orders o on o.id = p.id and not o.is_deleted ${sql.join(joins, sql` `)})`)
  return sql.join(parts.ctes.map((cte) => sql`, ${cte}`), sql` `)
}

/** The page's order lines, for counting. */
const LINES = 'picked p join order_items oi on oi.order_id = p.id'

/**
 * How long each list of a page is, by its path below the connection: all its elements on the page, as the
 * answer has them (a SKU's offers once per line that has the SKU). What the GraphQL cost bills.
 */
const LIST_LENGTHS: Record<string, string> = {
  nodes: 'select count(*) from picked',
  'nodes/orderItems': `select count(*) from ${LINES}`,
  'nodes/orderItems/offer/priceRange':
    `select coalesce(sum(jsonb_array_length(f.price_range)), 0) from ${LINES} join offers f on f.id = oi.offer_id`,
  'nodes/orderItems/sku/offers': `select count(*) from ${LINES} join offers so on so.sku_id = oi.sku_id`,
  'nodes/orderItems/sku/offers/priceRange':
    `select coalesce(sum(jsonb_array_length(so.price_range)), 0) from ${LINES} join offers so on so.sku_id = oi.sku_id`,
  'nodes/orderItems/sku/itemSellingUnits': `select count(*) from ${LINES} join selling_units u on u.sku_id = oi.sku_id`
}

/** The paths of the lists `entries` select that LIST_LENGTHS can count. */
function listPaths (entries: JsonEntry[], prefix = ''): string[] {
  const paths = new Set<string>()
  for (const { value } of entries) {
    if (value.kind !== 'field' || value.entries === undefined) continue
    const path = prefix === '' ? value.name : `${prefix}/${value.name}`
    if (Object.hasOwn(LIST_LENGTHS, path)) paths.add(path)
    for (const below of listPaths(value.entries, path)) paths.add(below)
  }
  return [...paths]
}

/** A JSON object of the lengths of the lists `entries` select, as text (the statement's second column). */
function listLengthsText (entries: JsonEntry[]): SQL {
  const counted = listPaths(entries).sort().map((path) => sql.raw(`'${path}', (${LIST_LENGTHS[path]})`))
  return sql`json_build_object(${sql.join(counted, sql`, `)})::text`
}

/**
 * The statement that writes the OrderConnection of `entries`, with `around` before and after it, as one text column,
 * `body`.
 */
export function orderConnectionStatement (
  reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[], timeZone: string, around: SurroundText,
  countLists = false
): SQL {
  const source = pageSource(reader, filter, timeZone)
  const parts = new Parts()
  const connection = planObject(entries, 'OrderConnection', {}, (field, sub) => {
    if (field === 'nodes') return nodesText(sub, parts)
    if (field === 'pageInfo') {
      return pageInfoText(sub, { total: source.total, page: sql`${filter.page}::int`, limit: source.limit, fetched: sql.raw('f.n') })
    }
    throw new PlanNotCovered(`OrderConnection.${field}`)
  }, surroundOf(around))
  const more = parts.ctes.map((cte) => sql`, ${cte}`)
  const lengths = countLists ? sql`, ${listLengthsText(entries)} as lengths` : sql``
  return sql`${source.ctes} ${sql.join(more, sql` `)}
    select ${connection} as body${lengths} from fetched f`
}

interface PageContext { reader: OrderReader, filter: OrderListFilter, timeZone: string, around: SurroundText }

/**
 * The statement of `entries` for this reader and filter. Its text is built once per shape (selection and
 * set of filters in use) and handle, kept as a template; each request fills in its values.
 */
export function orderConnectionQuery (tx: Tx, reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[],
  timeZone: string, around: SurroundText, entriesKey = JSON.stringify(entries), countLists = false): Query {
  const filters = [reader.storeIds, filter.fromDate, filter.toDate, filter.updatedSince].map((v) => v === null)
  const key = `${entriesKey}|${filters.join('|')}|${countLists}`
  return templatesOf<PageContext>(tx, 'order-connection').query(key, () => orderConnectionStatement(
    {
      sellerId: slot((c: PageContext) => c.reader.sellerId),
      storeIds: reader.storeIds === null ? null : slot((c: PageContext) => c.reader.storeIds)
    },
    {
      page: slot((c: PageContext) => c.filter.page),
      limit: slot((c: PageContext) => c.filter.limit),
      fromDate: filter.fromDate === null ? null : slot((c: PageContext) => c.filter.fromDate),
      toDate: filter.toDate === null ? null : slot((c: PageContext) => c.filter.toDate),
      updatedSince: filter.updatedSince === null ? null : slot((c: PageContext) => c.filter.updatedSince)
    },
    entries, slot((c: PageContext) => c.timeZone),
    { before: slot((c: PageContext) => c.around.before), after: slot((c: PageContext) => c.around.after) },
    countLists
  ), { reader, filter, timeZone, around })
}

/**
 * The page as JSON text in UTF-8 bytes (an OrderConnection of the selected fields, with `around` before
 * and after it), and with `countLists` the lengths of its lists; throws PlanNotCovered for a field it does
 * not write.
 */
export async function readOrderConnectionText (tx: Tx, reader: OrderReader, filter: OrderListFilter,
  entries: JsonEntry[], timeZone: string, around: SurroundText, entriesKey?: string, countLists = false
): Promise<JsonAnswer> {
  const query = orderConnectionQuery(tx, reader, filter, entries, timeZone, around, entriesKey, countLists)
  return await runJsonQuery(tx, query)
}
