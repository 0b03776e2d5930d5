import { sql } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { commonConditions, isoTime, whereAll, type MoneyList } from './page.js'

/*
 * GET /v2/platform/sellers/{companyId}/ledger: one seller's points entries, oldest first, filtered by
 * creation time; each with the balance it left. The seller is the path's, so companyId is no filter.
 */

export interface LedgerRow {
  id: string
  kind: string
  amount: string
  balanceAfter: string
  orderId: string | null
  reference: string | null
  createdAt: string
}

export const LEDGER_LIST_SHAPE = { list: 'ledger', statuses: [], companyFilter: false } as const

/** The ledger of one seller: filter.companyId is the path's. */
export const ledgerList: MoneyList<LedgerRow> = {
  name: 'ledger',
  columns: ['id', 'kind', 'amount', 'balanceAfter', 'orderId', 'reference', 'createdAt'],
  statement: (filter, fetch) => sql`
    select t.id::text as "id", t.kind::text as "kind", t.amount::text as "amount", t.balance_after::text as "balanceAfter",
      t.order_id::text as "orderId", t.reference as "reference", ${isoTime(sql`t.created_at`)} as "createdAt"
    from points_ledger t
    where t.seller_id = ${filter.companyId} and ${whereAll(commonConditions(filter))}
    order by t.id
    limit ${fetch}`
}

export async function sellerExists (tx: Tx, companyId: number): Promise<boolean> {
  const rows = await tx.execute<{ one: number }>(sql`select 1 as "one" from sellers where id = ${companyId}`)
  return rows.length > 0
}
