import { sql } from 'drizzle-orm'
import { refundStatus } from '../db/schema.js'
import { commonConditions, isoTime, whereAll, type MoneyList } from './page.js'

/* GET /v2/platform/refunds: every refund, oldest first, filtered by status, seller and creation time. */

export interface RefundRow {
  id: string
  orderId: string
  companyId: number
  amount: string
  currency: string
  status: string
  reference: string | null
  createdAt: string
  settledAt: string | null
}

export const REFUND_LIST_SHAPE = { list: 'refunds', statuses: refundStatus.enumValues, companyFilter: true } as const

export const refundList: MoneyList<RefundRow> = {
  name: 'refunds',
  columns: ['id', 'orderId', 'companyId', 'amount', 'currency', 'status', 'reference', 'createdAt', 'settledAt'],
  statement: (filter, fetch) => sql`
    select t.id::text as "id", t.order_id::text as "orderId", t.seller_id as "companyId", t.amount::text as "amount",
      t.currency as "currency", t.status::text as "status", t.reference as "reference",
      ${isoTime(sql`t.created_at`)} as "createdAt", ${isoTime(sql`t.settled_at`)} as "settledAt"
    from refunds t
    where ${whereAll([
      ...commonConditions(filter),
      ...(filter.status !== null ? [sql`t.status = ${filter.status}::refund_status`] : []),
      ...(filter.companyId !== null ? [sql`t.seller_id = ${filter.companyId}`] : [])
    ])}
    order by t.id
    limit ${fetch}`
}
