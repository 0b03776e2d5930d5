/*
 * The contract's rules for mapping an order back to the caller's own records (docs/api/orders.md, client
 * rules 3–7 and the sync IDs), written once so every integration reads them the same way. Each takes only
 * the fields it needs, so a caller selecting fewer fields can still use them.
 */

/** Rule 4: the ordered variant in the external catalogue (orderItems[].offer.offerSyncId). */
export function variantKey (item: { offer: { offerSyncId: string | null } }): string | null {
  return item.offer.offerSyncId
}

/** Rule 5: the parent product (orderItems[].item.itemSyncId). */
export function productKey (item: { item: { itemSyncId: string | null } }): string | null {
  return item.item.itemSyncId
}

/** Rule 6: the ordering outlet (shop.syncId); an order placed without a shop has none. */
export function outletKey (order: { shop: { syncId: string | null } | null }): string | null {
  return order.shop?.syncId ?? null
}

/** Rule 7: the buyer: retailer.syncId, and when that is null, retailer.phone. */
export function buyerKey (order: { retailer: { syncId: string | null, phone: string | null } }): string | null {
  return order.retailer.syncId ?? order.retailer.phone
}

/**
 * Rule 3: whether the order is still the seller's to act on: placed (accept or reject it) or accepted
 * (complete or reject it), as the order's own isActionable flag says; works without that field selected.
 */
export function isActionable (order: { orderStatus: string }): boolean {
  return order.orderStatus === 'ORDER_PLACED' || order.orderStatus === 'ORDER_ACCEPTED'
}
