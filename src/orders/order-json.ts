import { sql, type Query, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import {
  arrayAggText, boolText, decimalText, elementsAggText, listText, intText, numberText, planObject, PlanNotCovered, stringArrayText, stringText, surroundOf,
  type JsonEntry, type ScalarFields, type SurroundText
} from '../db/json-text.js'
import { runJsonQuery, slot, StatementTemplates } from '../db/statements.js'
import type { OrderListFilter } from './order-list-input.js'
import { pageSource, type OrderReader } from './read-orders.js'

/*
 * A page of orders as the exact JSON text of what the query selected (an OrderConnection), built by
 * PostgreSQL in one statement: the same page, total and nested objects as read-orders.ts, but each
 * object written with the selected fields only, in selection order, under their aliases. The caller
 * splices the text into the answer without parsing it (graphql/pass-through.ts).
 *
 * Nested lists are built set-wise, once per page, as in read-orders.ts: the page's lines, each SKU once,
 * each list of a SKU's offers or selling units once. A field selected twice under different aliases with
 * different sub-selections gets a part of its own.
 */

const iso = (column: string): SQL => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`)
const col = (expr: string): SQL => sql.raw(expr)

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

const retailerScalars = (r: string): ScalarFields => ({
  id: intText(col(`${r}.id`)),
  name: stringText(col(`${r}.name`)),
  firstName: stringText(col(`${r}.first_name`)),
  lastName: stringText(col(`${r}.last_name`)),
  phone: stringText(col(`${r}.phone`)),
  whatsapp: stringText(col(`${r}.whatsapp`)),
  syncId: stringText(col(`${r}.sync_id`))
})

const slabScalars: ScalarFields = {
  minQuantity: numberText(col('(e.v->>\'minQuantity\')')),
  maxQuantity: numberText(col('(e.v->>\'maxQuantity\')')),
  price: numberText(col('(e.v->>\'price\')'))
}

function noNested (type: string) {
  return (name: string): SQL => { throw new PlanNotCovered(`${type}.${name}`) }
}

/** One offer from its row `f`. */
function offerText (entries: JsonEntry[], f: string): SQL {
  return planObject(entries, 'Offer', {
    id: intText(col(`${f}.id`)),
    skuId: intText(col(`${f}.sku_id`)),
    offerSyncId: stringText(col(`${f}.offer_sync_id`)),
    finalPriceWithTax: decimalText(col(`${f}.final_price_with_tax`)),
    purchasePrice: decimalText(col(`${f}.purchase_price`)),
    mrpPriceAmount: decimalText(col(`${f}.mrp_price_amount`)),
    currency: stringText(col(`${f}.currency`))
  }, (name, slab) => {
    if (name !== 'priceRange') throw new PlanNotCovered(`Offer.${name}`)
    return sql`(select ${arrayAggText(planObject(slab, 'PriceSlab', slabScalars, noNested('PriceSlab')), sql.raw('e.ord'))}
      from jsonb_array_elements(${col(`${f}.price_range`)}) with ordinality e(v, ord))`
  })
}

/** A SKU CTE for one sub-selection: each SKU of the page's lines once, as text. */
function skuCte (entries: JsonEntry[], parts: Parts): string {
  const name = parts.name('sku')
  const joins: SQL[] = []
  const text = planObject(entries, 'Sku', {
    itemId: intText(col('k.item_id')),
    skuNickName: stringText(col('k.sku_nick_name')),
    images: stringArrayText(col('k.images')),
    tags: stringArrayText(col('k.tags'))
  }, (field, sub) => {
    const alias = parts.name(field === 'offers' ? 'so' : 'su')
    if (field === 'offers') {
      parts.ctes.push(sql`${sql.raw(alias)} as materialized (select so.sku_id, ${elementsAggText(offerText(sub, 'so'), sql.raw('so.id'))} as t
        from offers so where so.sku_id in (select sku_id from line) group by so.sku_id)`)
    } else if (field === 'itemSellingUnits') {
      const unit = planObject(sub, 'ItemSellingUnit', {
        id: intText(col('u.id')),
        name: stringText(col('u.name')),
        multiplier: decimalText(col('u.multiplier')),
        isBaseUnit: boolText(col('u.is_base_unit')),
        skuId: intText(col('u.sku_id'))
      }, noNested('ItemSellingUnit'))
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
  const text = planObject(entries, 'OrderItem', {
    id: stringText(col('l.id')),
    skuId: intText(col('l.sku_id')),
    quantity: decimalText(col('l.quantity'))
  }, (field, sub) => {
    const alias = parts.name(field)
    if (field === 'offer') {
      joins.push(sql.raw(`join offers ${alias} on ${alias}.id = l.offer_id`))
      return offerText(sub, alias)
    }
    if (field === 'item') {
      joins.push(sql.raw(`join items ${alias} on ${alias}.id = l.item_id`))
      return planObject(sub, 'Item', {
        id: intText(col(`${alias}.id`)),
        itemName: stringText(col(`${alias}.item_name`)),
        itemSyncId: stringText(col(`${alias}.item_sync_id`))
      }, noNested('Item'))
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

/** The `nodes` list of one sub-selection: the page's orders, in page order. */
function nodesText (entries: JsonEntry[], parts: Parts): SQL {
  const joins: SQL[] = []
  let retailer = false
  let shop = false
  const order = planObject(entries, 'Order', {
    orderId: stringText(col('o.id')),
    orderNumber: stringText(col('o.order_number')),
    serviceOrderNumber: stringText(col('o.service_order_number')),
    orderStatus: stringText(col('o.status')),
    deliveryType: stringText(col('o.delivery_type')),
    companyId: intText(col('o.seller_id')),
    storeId: intText(col('o.store_id')),
    retailerName: stringText(col('o.retailer_name')),
    isActionable: boolText(col('o.is_actionable')),
    currencyCode: stringText(col('o.currency_code')),
    orderTotal: decimalText(col('o.order_total')),
    orderTotalFinal: decimalText(col('o.order_total_final')),
    orderTaxAmount: decimalText(col('o.order_tax_amount')),
    orderCessAmount: decimalText(col('o.order_cess_amount')),
    appliedPoints: decimalText(col('o.applied_points')),
    totalExtraCharges: decimalText(col('o.total_extra_charges')),
    roundOff: decimalText(col('o.round_off')),
    totalItemsInOrder: intText(col('o.total_items_in_order')),
    isDeleted: boolText(col('o.is_deleted')),
    createdAt: stringText(iso('o.created_at')),
    updatedAt: stringText(iso('o.updated_at'))
  }, (field, sub) => {
    if (field === 'retailer') {
      if (!retailer) joins.push(sql.raw('join retailers r on r.id = o.retailer_id'))
      retailer = true
      return planObject(sub, 'Retailer', retailerScalars('r'), noNested('Retailer'))
    }
    if (field === 'shop') {
      if (!shop) joins.push(sql.raw('left join shops s on s.id = o.shop_id left join retailers sr on sr.id = s.retailer_id'))
      shop = true
      const text = planObject(sub, 'Shop', {
        id: intText(col('s.id')),
        syncId: stringText(col('s.sync_id')),
        retailerSyncId: stringText(col('sr.sync_id')),
        shopName: stringText(col('s.shop_name'))
      }, noNested('Shop'))
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
  return sql`(select ${arrayAggText(order, sql.raw('p.created_at, p.id'))} from picked p join orders o on o.id = p.id ${sql.join(joins, sql` `)})`
}

/** The statement that writes the OrderConnection of `entries`, with `around` before and after it, as one text column, `body`. */
export function orderConnectionStatement (reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[], timeZone: string, around: SurroundText): SQL {
  const source = pageSource(reader, filter, timeZone)
  const parts = new Parts()
  const connection = planObject(entries, 'OrderConnection', {}, (field, sub) => {
    if (field === 'nodes') return nodesText(sub, parts)
    if (field === 'pageInfo') {
      return planObject(sub, 'PageInfo', {
        total: sql`(${source.total})::text`,
        page: sql`${filter.page}::int::text`,
        hasNext: sql`(case when f.n > ${source.limit} then 'true' else 'false' end)`,
        limit: sql`${filter.limit}::int::text`
      }, noNested('PageInfo'))
    }
    throw new PlanNotCovered(`OrderConnection.${field}`)
  }, surroundOf(around))
  const more = parts.ctes.map((cte) => sql`, ${cte}`)
  return sql`${source.ctes} ${sql.join(more, sql` `)}
    select ${connection} as body from fetched f`
}

interface PageContext { reader: OrderReader, filter: OrderListFilter, timeZone: string, around: SurroundText }

/** One statement text per selection and set of filters in use; each request fills in its values. */
const templates = new StatementTemplates<PageContext>()

/** The statement of `entries` for this reader and filter, its text built once per shape. */
export function orderConnectionQuery (reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[], timeZone: string,
  around: SurroundText, entriesKey = JSON.stringify(entries)): Query {
  const key = `${entriesKey}|${reader.storeIds === null}|${filter.fromDate === null}|${filter.toDate === null}|${filter.updatedSince === null}`
  return templates.query(key, () => orderConnectionStatement(
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
    { before: slot((c: PageContext) => c.around.before), after: slot((c: PageContext) => c.around.after) }
  ), { reader, filter, timeZone, around })
}

/**
 * The page as JSON text in UTF-8 bytes (an OrderConnection of the selected fields, with `around` before
 * and after it); throws PlanNotCovered for a field it does not write.
 */
export async function readOrderConnectionText (tx: Tx, reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[], timeZone: string,
  around: SurroundText, entriesKey?: string): Promise<Buffer> {
  return await runJsonQuery(tx, orderConnectionQuery(reader, filter, entries, timeZone, around, entriesKey))
}
