import type { GraphQLObjectType } from 'graphql'
import type { MercuriusContext } from 'mercurius'
import type { Caller } from '../credentials/service.js'
import { listLengths } from '../db/read-model.js'
import { parseEventListInput } from '../events/event-list-input.js'
import { readEventPage } from '../events/event-json.js'
import { EVENT } from '../events/event-model.js'
import { EventFeedText } from '../events/texts.js'
import { InvalidInputError } from '../errors.js'
import { FULL_ORDER } from '../orders/order-json.js'
import { parseOrderListInput } from '../orders/order-list-input.js'
import { ORDER } from '../orders/order-model.js'
import type { OrderReader } from '../orders/order-page.js'
import { readOrderPage } from '../orders/read-orders.js'
import { readItemPage } from '../references/item-json.js'
import { parseReferenceListInput } from '../references/reference-list-input.js'
import { SELLER_ITEM, SELLER_RETAILER } from '../references/reference-model.js'
import { readRetailerPage } from '../references/retailer-json.js'
import { readSeller } from '../sellers/read-seller.js'
import { readOutstandingShipments } from '../shipments/outstanding-json.js'
import { parseOutstandingShipmentListInput } from '../shipments/outstanding-list-input.js'
import { OUTSTANDING_SHIPMENT } from '../shipments/outstanding-model.js'
import { recordListLengths } from './cost-limit.js'
import type { Resolvers } from './generated/types.js'
import { connectionEntries, fieldOutside, nodeFieldNodes } from './selection.js'

/*
 * Thin: check the input, call one service function, shape the reply (and note how long its lists came
 * back, which the GraphQL cost bills). The services return their own read
 * models (codegen maps each GraphQL object onto one); every field below Query is a plain property of
 * them, served by the default resolvers, except where GraphQL's type differs from the stored one.
 */

/** The request spent from a cost budget, so its lists are counted for the bill (no budget: no walk). */
const billed = (ctx: MercuriusContext): boolean => ctx.reply.request.graphqlCost !== null

const reader = (caller: Caller): OrderReader => ({ sellerId: caller.sellerId, storeIds: caller.storeIds })

export const resolvers: Resolvers = {
  Query: {
    async orders (_root, { input }, ctx, info) {
      const filter = parseOrderListInput(input)
      const page = await readOrderPage(ctx.db, reader(ctx.caller), filter, connectionEntries(ORDER, info), ctx.timeZone)
      if (billed(ctx)) recordListLengths(ctx.reply.request, String(info.path.key), listLengths(ORDER, page.nodes, 'nodes'))
      // total is absent only when pageInfo.total was not selected, and then nobody reads it.
      return { pageInfo: { total: 0, ...page.pageInfo }, nodes: page.nodes }
    },
    seller: (_root, _args, ctx) => readSeller(ctx.db, reader(ctx.caller)),
    async outstandingShipments (_root, { input }, ctx, info) {
      const filter = parseOutstandingShipmentListInput(input)
      const entries = connectionEntries(OUTSTANDING_SHIPMENT, info)
      const page = await readOutstandingShipments(ctx.db, ctx.caller.sellerId, filter, entries)
      if (billed(ctx)) {
        recordListLengths(ctx.reply.request, String(info.path.key), listLengths(OUTSTANDING_SHIPMENT, page.nodes, 'nodes'))
      }
      return { pageInfo: { total: 0, ...page.pageInfo }, nodes: page.nodes }
    },
    // The seller's whole reference lists, not narrowed to a credential's stores: retailers and items are
    // the seller's, not a store's.
    async retailers (_root, { input }, ctx, info) {
      const filter = parseReferenceListInput(input)
      const page = await readRetailerPage(ctx.db, ctx.caller.sellerId, filter, connectionEntries(SELLER_RETAILER, info))
      if (billed(ctx)) recordListLengths(ctx.reply.request, String(info.path.key), listLengths(SELLER_RETAILER, page.nodes, 'nodes'))
      return { pageInfo: { total: 0, ...page.pageInfo }, nodes: page.nodes }
    },
    async items (_root, { input }, ctx, info) {
      const filter = parseReferenceListInput(input)
      const page = await readItemPage(ctx.db, ctx.caller.sellerId, filter, connectionEntries(SELLER_ITEM, info))
      if (billed(ctx)) recordListLengths(ctx.reply.request, String(info.path.key), listLengths(SELLER_ITEM, page.nodes, 'nodes'))
      return { pageInfo: { total: 0, ...page.pageInfo }, nodes: page.nodes }
    },
    // Events of orders in the credential's stores only, as orders: a narrowed credential reads those.
    async events (_root, { input }, ctx, info) {
      const filter = parseEventListInput(input)
      // An event's order is read as the full order selection (events/event-order.ts): nothing else.
      const order = nodeFieldNodes(info, 'order')
      const outside = order && fieldOutside(info.schema.getType('Order') as GraphQLObjectType, order, info.fragments, FULL_ORDER)
      if (outside) throw new InvalidInputError('order', EventFeedText.outsideFullOrder(outside))
      const page = await readEventPage(ctx.db, reader(ctx.caller), filter, order !== undefined)
      if (billed(ctx)) recordListLengths(ctx.reply.request, String(info.path.key), listLengths(EVENT, page.nodes, 'nodes'))
      return page
    }
  },
  Seller: {
    status: (seller) => seller.status === 'active' ? 'ACTIVE' : 'SUSPENDED',
    // Float, as docs/api/orders.md says; the stored numeric stays exact in the database.
    pointsBalance: (seller) => Number(seller.pointsBalance)
  }
}
