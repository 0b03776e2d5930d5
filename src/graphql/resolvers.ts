import type { Caller } from '../credentials/service.js'
import { parseOrderListInput } from '../orders/order-list-input.js'
import { readOrderPage, type OrderReader } from '../orders/read-orders.js'
import { readSeller } from '../sellers/read-seller.js'
import { parseOutstandingShipmentListInput } from '../shipments/outstanding-list-input.js'
import { readOutstandingShipments } from '../shipments/read-outstanding.js'
import type { Resolvers } from './generated/types.js'
import { orderSelection } from './selection.js'

/*
 * Thin: check the input, call one service function, shape the reply. The services return their own read
 * models (codegen maps each GraphQL object onto one); every field below Query is a plain property of
 * them, served by the default resolvers, except where GraphQL's type differs from the stored one.
 */

const reader = (caller: Caller): OrderReader => ({ sellerId: caller.sellerId, storeIds: caller.storeIds })

export const resolvers: Resolvers = {
  Query: {
    async orders (_root, { input }, ctx, info) {
      const filter = parseOrderListInput(input)
      const page = await readOrderPage(ctx.db, reader(ctx.caller), filter, orderSelection(info), ctx.timeZone)
      return {
        // total is null only when pageInfo.total was not selected, and then nobody reads it.
        pageInfo: { total: page.total ?? 0, page: page.page, hasNext: page.hasNext, limit: page.limit },
        nodes: page.nodes
      }
    },
    seller: (_root, _args, ctx) => readSeller(ctx.db, reader(ctx.caller)),
    async outstandingShipments (_root, { input }, ctx) {
      const page = await readOutstandingShipments(ctx.db, ctx.caller.sellerId, parseOutstandingShipmentListInput(input))
      return { pageInfo: { total: page.total, page: page.page, hasNext: page.hasNext, limit: page.limit }, nodes: page.nodes }
    }
  },
  Seller: {
    status: (seller) => seller.status === 'active' ? 'ACTIVE' : 'SUSPENDED',
    // Float per decisions.md; the stored numeric stays exact in the database.
    pointsBalance: (seller) => Number(seller.pointsBalance)
  },
  OutstandingShipment: {
    outstandingQuantity: (node) => Number(node.outstandingQuantity)
  }
}
