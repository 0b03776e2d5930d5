import type { Resolvers } from './generated/types.js'
import { parseOrderListInput } from '../orders/order-list-input.js'
import { readOrderPage, type OrderReader } from '../orders/read-orders.js'
import { readSeller } from '../sellers/read-seller.js'
import { orderSelection } from './selection.js'
import { outstandingShipmentsResolver } from '../shipments/outstanding-resolver.js'
import type { Caller } from '../credentials/service.js'

/*
 * Thin: check the input, call one service function, shape the reply. Every field below Query is a plain
 * property of the tree the service returns, so the default resolvers (compiled by graphql-jit) serve them.
 */

const reader = (caller: Caller): OrderReader => ({ sellerId: caller.sellerId, storeIds: caller.storeIds })

export const resolvers: Resolvers = {
  Query: {
    async orders (_root, { input }, ctx, info) {
      const filter = parseOrderListInput(input)
      const page = await readOrderPage(ctx.database.sql, reader(ctx.caller), filter, orderSelection(info), ctx.timeZone)
      return {
        // total is null only when pageInfo.total was not selected, and then nobody reads it.
        pageInfo: { total: page.total ?? 0, page: page.page, hasNext: page.hasNext, limit: page.limit },
        nodes: page.nodes
      }
    },
    async seller (_root, _args, ctx) {
      const seller = await readSeller(ctx.database.db, reader(ctx.caller))
      return {
        companyId: seller.companyId,
        name: seller.name,
        status: seller.status === 'active' ? 'ACTIVE' : 'SUSPENDED',
        pointsBalance: Number(seller.pointsBalance),
        stores: seller.stores
      }
    },
    outstandingShipments: outstandingShipmentsResolver
  }
}
