import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import type { IResolvers, MercuriusLoaders } from 'mercurius'
import type { Config } from '../../src/config.js'
import type { BenchDb as Database } from '../lib/database.js'
import databasePlugin from '../../src/plugins/database.js'
import errorHandlerPlugin from '../../src/plugins/error-handler.js'
import authPlugin from '../../src/plugins/auth.js'
import metricsPlugin from '../../src/plugins/metrics.js'
import { createMetrics } from '../../src/metrics.js'
import { mercuriusOptions, registerGraphql } from '../../src/graphql/plugin.js'
import { parseOrderListInput } from '../../src/orders/order-list-input.js'

/*
 * The road not taken, kept so the comparison in bench/results/2026-11-21-graphql-orders-before-pass-through.md
 * can be re-run: the same schema, auth, limits and JIT as the service, but nested fields resolved by Mercurius
 * loaders (one batched SQL statement per nested field per request) instead of one statement building the whole
 * tree.
 */

type Row = Record<string, unknown>
const num = (v: unknown) => v === null ? null : Number(v)
const iso = (c: string) => `to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const offer = (f: Row) => ({
  id: f.id,
  skuId: f.sku_id,
  offerSyncId: f.offer_sync_id,
  finalPriceWithTax: num(f.final_price_with_tax),
  purchasePrice: num(f.purchase_price),
  mrpPriceAmount: num(f.mrp_price_amount),
  currency: f.currency,
  priceRange: f.price_range
})

/** Answers each query's key from one `where key = any($1)` statement. */
function byKey (database: () => Database, table: string, key: string, objKey: string, shape: (r: Row) => unknown,
  many: boolean) {
  return async (queries: Array<{ obj: Row }>) => {
    const keys = [...new Set(queries.map((q) => q.obj[objKey]).filter((k) => k !== null))]
    const rows = keys.length === 0 ? [] : await database().sql.unsafe(`select * from ${table} where ${key} = any($1) order by id`, [keys as never], { prepare: true })
    const grouped = new Map<unknown, unknown[]>()
    for (const r of rows) {
      const list = grouped.get(r[key]) ?? []
      list.push(shape(r))
      grouped.set(r[key], list)
    }
    return queries.map((q) => many ? grouped.get(q.obj[objKey]) ?? [] : grouped.get(q.obj[objKey])?.[0] ?? null)
  }
}

const loadersPlugin = (bench: Database): FastifyPluginAsync => async (app) => {
  const database = () => bench
  app.addHook('onRequest', app.requireCredential('access-token', 'authorization'))
  const resolvers = {
    Query: {
      async orders (_root: unknown, { input }: { input: never },
        ctx: { caller: { sellerId: number, storeIds: number[] | null } }) {
        const filter = parseOrderListInput(input)
        const { sql } = bench
        const where = sql`o.seller_id = ${ctx.caller.sellerId} and not o.is_deleted
          ${ctx.caller.storeIds ? sql`and o.store_id = any(${ctx.caller.storeIds})` : sql``}
          ${filter.fromDate ? sql`and o.created_at >= (${filter.fromDate}::date)::timestamp at time zone ${app.config.BUSINESS_TIMEZONE}::text` : sql``}
          ${filter.toDate ? sql`and o.created_at < (${filter.toDate}::date + 1)::timestamp at time zone ${app.config.BUSINESS_TIMEZONE}::text` : sql``}`
        const offset = (filter.page - 1) * filter.limit
        const rows = await sql`select o.*, ${sql.unsafe(iso('o.created_at'))} as created_iso, ${sql.unsafe(iso('o.updated_at'))} as updated_iso from orders o where ${where} order by o.created_at, o.id limit ${filter.limit + 1} offset ${offset}`
        const hasNext = rows.length > filter.limit
        const page = rows.slice(0, filter.limit)
        const total = !hasNext && (page.length > 0 || offset === 0)
          ? offset + page.length
          : (await sql`select count(*)::int as n from orders o where ${where}`)[0].n
        return {
          pageInfo: { total, page: filter.page, hasNext, limit: filter.limit },
          nodes: page.map((o) => ({
            orderId: String(o.id),
            orderNumber: o.order_number,
            serviceOrderNumber: o.service_order_number,
            orderStatus: o.status,
            deliveryType: o.delivery_type,
            companyId: o.seller_id,
            storeId: o.store_id,
            retailerName: o.retailer_name,
            isActionable: o.is_actionable,
            currencyCode: o.currency_code,
            orderTotal: num(o.order_total),
            orderTotalFinal: num(o.order_total_final),
            orderTaxAmount: num(o.order_tax_amount),
            orderCessAmount: num(o.order_cess_amount),
            appliedPoints: num(o.applied_points),
            totalExtraCharges: num(o.total_extra_charges),
            roundOff: num(o.round_off),
            totalItemsInOrder: o.total_items_in_order,
            isDeleted: o.is_deleted,
            createdAt: o.created_iso,
            updatedAt: o.updated_iso,
            id: o.id,
            seller_id: o.seller_id,
            retailer_id: o.retailer_id,
            shop_id: o.shop_id
          }))
        }
      },
      seller: () => { throw new Error('not part of the comparison') }
    }
  }
  const loaders: MercuriusLoaders = {
    Order: {
      // Sync IDs are the order's seller's own (migration 0009): its links in seller_retailers / seller_shops.
      // A request reads one seller's orders, so one seller per batch.
      retailer: async (queries) => {
        const ids = [...new Set(queries.map((q) => q.obj.retailer_id))]
        const seller = queries[0]?.obj.seller_id
        const rows = ids.length === 0
          ? []
          : await database().sql`select r.*, rl.sync_id from retailers r
            left join seller_retailers rl on rl.seller_id = ${seller as number} and rl.retailer_id = r.id
            where r.id = any(${ids as number[]})`
        const byId = new Map(rows.map((r) => [r.id, {
          id: r.id,
          name: r.name,
          firstName: r.first_name,
          lastName: r.last_name,
          phone: r.phone,
          whatsapp: r.whatsapp,
          syncId: r.sync_id
        }]))
        return queries.map((q) => byId.get(q.obj.retailer_id) ?? null)
      },
      shop: async (queries) => {
        const ids = [...new Set(queries.map((q) => q.obj.shop_id).filter((k) => k !== null))]
        const seller = queries[0]?.obj.seller_id
        const rows = ids.length === 0
          ? []
          : await database().sql`select s.*, sl.sync_id, srl.sync_id as retailer_sync_id from shops s
            left join seller_shops sl on sl.seller_id = ${seller as number} and sl.shop_id = s.id
            left join seller_retailers srl on srl.seller_id = ${seller as number} and srl.retailer_id = s.retailer_id
            where s.id = any(${ids as number[]})`
        const byId = new Map(rows.map((s) => [
          s.id, { id: s.id, syncId: s.sync_id, retailerSyncId: s.retailer_sync_id, shopName: s.shop_name }
        ]))
        return queries.map((q) => byId.get(q.obj.shop_id) ?? null)
      },
      orderItems: byKey(database, 'order_items', 'order_id', 'id', (l) => ({ id: String(l.id), skuId: l.sku_id, quantity: num(l.quantity), offer_id: l.offer_id, item_id: l.item_id, sku_id: l.sku_id }), true)
    },
    OrderItem: {
      offer: byKey(database, 'offers', 'id', 'offer_id', offer, false),
      item: byKey(database, 'items', 'id', 'item_id', (i) => ({ id: i.id, itemName: i.item_name, itemSyncId: i.item_sync_id }), false),
      sku: byKey(database, 'skus', 'id', 'sku_id', (k) => ({ id: k.id, itemId: k.item_id, skuNickName: k.sku_nick_name, images: k.images, tags: k.tags }), false)
    },
    Sku: {
      offers: byKey(database, 'offers', 'sku_id', 'id', offer, true),
      itemSellingUnits: byKey(database, 'selling_units', 'sku_id', 'id', (u) => ({ id: u.id, name: u.name, multiplier: num(u.multiplier), isBaseUnit: u.is_base_unit, skuId: u.sku_id }), true)
    }
  }
  await registerGraphql(app, mercuriusOptions(resolvers as unknown as IResolvers, loaders))
}

/** An app like buildApp's, but serving /v2/graphql through loaders. */
export async function buildLoadersApp (config: Config, database: Database): Promise<FastifyInstance> {
  // Errors only, so a broken variant says why instead of measuring error pages.
  const app = Fastify({ logger: { level: 'error' } })
  await app.register(databasePlugin, { config, database })
  await app.register(errorHandlerPlugin)
  // The GraphQL context counts each read by database (src/graphql/context.ts), as in buildApp.
  await app.register(metricsPlugin, { metrics: createMetrics() })
  await app.register(authPlugin)
  await app.register(loadersPlugin(database))
  return app
}
