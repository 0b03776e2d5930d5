import type { QueryResolvers } from '../graphql/generated/types.js'
import { parseOutstandingShipmentListInput } from './outstanding-list-input.js'
import { readOutstandingShipments } from './read-outstanding.js'

/** Query.outstandingShipments: check the input, read the caller's own rows, shape the reply. */
export const outstandingShipmentsResolver: NonNullable<QueryResolvers['outstandingShipments']> = async (_root, { input }, ctx) => {
  const page = await readOutstandingShipments(ctx.database.db, ctx.caller.sellerId, parseOutstandingShipmentListInput(input))
  return {
    pageInfo: { total: page.total, page: page.page, hasNext: page.hasNext, limit: page.limit },
    // Float per decisions.md; the stored numeric stays exact in the database.
    nodes: page.nodes.map((n) => ({ ...n, outstandingQuantity: Number(n.outstandingQuantity) }))
  }
}
