import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { formatCents, toCents } from '../status-update/points.js'
import { bookedKey, type PointsPlan, type PointsState } from './plan-points.js'

/*
 * The set-based statements of a points batch, on the caller's transaction. The sellers are locked in id
 * order (as the status update and the sellers batch lock them), so their balances and the entries under
 * the batch's references cannot move until the batch commits.
 */

const json = (rows: unknown[]): SQL => sql`${JSON.stringify(rows)}::json`

export async function lockAndReadPoints (
  tx: Tx, keys: Array<{ companyId: number, reference: string }>
): Promise<PointsState> {
  const ids = [...new Set(keys.map((k) => k.companyId))]
  const sellers = await tx.execute<{ id: number, balance: string }>(sql`
    select id, points_balance::text as balance from sellers where id = any(${sql.param(ids)}::int[])
    order by id for update`)
  const booked = await tx.execute<{ sellerId: number, reference: string, amount: string }>(sql`
    select l.seller_id as "sellerId", l.reference, l.amount::text as amount
    from points_ledger l
    join json_to_recordset(${json(keys.map((k) => ({ seller_id: k.companyId, reference: k.reference })))})
      as k(seller_id int, reference text) on l.seller_id = k.seller_id and l.reference = k.reference`)
  return {
    balances: new Map(sellers.map((s) => [s.id, toCents(s.balance)])),
    booked: new Map(booked.map((b) => [bookedKey(b.sellerId, b.reference), toCents(b.amount)]))
  }
}

/**
 * The entries and the balances they lead to, in one statement: the ledger and the balance move together.
 * Each balance is the last entry's balance_after, so sum(ledger) = balance holds as it held before.
 */
export async function writePoints (tx: Tx, plan: PointsPlan): Promise<void> {
  if (plan.entries.length === 0) return
  const entries = plan.entries.map((e) => ({
    seller_id: e.sellerId,
    kind: e.cents > 0n ? 'TOP_UP' : 'ADJUSTMENT',
    amount: formatCents(e.cents),
    balance_after: formatCents(e.balanceAfterCents),
    reference: e.reference
  }))
  const balances = [...plan.balances].map(([id, cents]) => ({ id, balance: formatCents(cents) }))
  await tx.execute(sql`
    with entry as (
      insert into points_ledger (seller_id, kind, amount, balance_after, reference)
      select e.seller_id, e.kind, e.amount, e.balance_after, e.reference
      from json_to_recordset(${json(entries)})
        as e(seller_id int, kind points_entry_kind, amount numeric, balance_after numeric, reference text)
      returning 1
    )
    update sellers s set points_balance = b.balance, updated_at = now()
    from json_to_recordset(${json(balances)}) as b(id int, balance numeric)
    where s.id = b.id and (select count(*) from entry) > 0`)
}
