import { sql } from 'drizzle-orm'
import { payoutStatus } from '../db/schema.js'
import { commonConditions, isoTime, whereAll, type MoneyList } from './page.js'

/*
 * GET /v2/platform/payouts: every payout, oldest first, filtered by status, seller and creation time. A
 * payout is in its order's currency (payout_schedules has none of its own).
 */

export interface PayoutRow {
  id: string
  orderId: string
  companyId: number
  amount: string
  currency: string
  status: string
  scheduledFor: string | null
  reference: string | null
  paidAt: string | null
}

export const PAYOUT_LIST_SHAPE = { list: 'payouts', statuses: payoutStatus.enumValues, companyFilter: true } as const

export const payoutList: MoneyList<PayoutRow> = {
  name: 'payouts',
  columns: ['id', 'orderId', 'companyId', 'amount', 'currency', 'status', 'scheduledFor', 'reference', 'paidAt'],
  statement: (filter, fetch) => sql`
    select t.id::text as "id", t.order_id::text as "orderId", t.seller_id as "companyId", t.amount::text as "amount",
      o.currency_code as "currency", t.status::text as "status", to_char(t.scheduled_for, 'YYYY-MM-DD') as "scheduledFor",
      t.reference as "reference", ${isoTime(sql`t.paid_at`)} as "paidAt"
    from payout_schedules t join orders o on o.id = t.order_id
    where ${whereAll([
      ...commonConditions(filter),
      ...(filter.status !== null ? [sql`t.status = ${filter.status}::payout_status`] : []),
      ...(filter.companyId !== null ? [sql`t.seller_id = ${filter.companyId}`] : [])
    ])}
    order by t.id
    limit ${fetch}`
}
