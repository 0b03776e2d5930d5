import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { sellers, stores, type SellerStatus } from '../db/schema.js'
import type { OrderReader } from '../orders/order-page.js'

export interface SellerView {
  companyId: number
  name: string
  status: SellerStatus
  /** numeric, exact, as a string. */
  pointsBalance: string
  /** The stores the reader may see: all of the seller's unless its credential is narrowed. */
  stores: Array<{ id: number, name: string }>
}

/** The caller's own seller (it exists: credentials reference it by foreign key). */
export async function readSeller (tx: Tx, reader: OrderReader): Promise<SellerView> {
  const [seller] = await tx
    .select({ companyId: sellers.id, name: sellers.name, status: sellers.status, pointsBalance: sellers.pointsBalance })
    .from(sellers).where(eq(sellers.id, reader.sellerId))
  const visible = await tx.select({ id: stores.id, name: stores.name }).from(stores)
    .where(and(eq(stores.sellerId, reader.sellerId), reader.storeIds ? inArray(stores.id, reader.storeIds) : undefined))
    .orderBy(asc(stores.id))
  return { ...seller, stores: visible }
}
