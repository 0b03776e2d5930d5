import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import { jobTraceArguments, removeJobs } from '../effects/enqueue.js'
import { autoRejectJobKey, TASKS } from '../effects/jobs.js'
import type { Actor, PlannedChange } from './plan-change.js'
import { formatCents } from './points.js'
import { isActionable, type TargetStatus } from './state-machine.js'

/*
 * Writes decided changes and every one of their effects (docs/api/status-updates.md) with a fixed number of set-based
 * statements, whether there is one change or a thousand: the cost of a batch grows with its rows, not
 * with round trips. The caller holds the locks (order-locks.ts: seller, orders, daily deals of rejected
 * orders) and owns the transaction, so a change and its effects commit together or not at all.
 *
 * Effects that must happen once per order are guarded by the database, not by the state check alone:
 * points_ledger UNIQUE (order_id, kind), refunds UNIQUE (order_id), order_effects PRIMARY KEY
 * (order_id, kind) for the daily-deal quantity, payout moves only from ON_HOLD.
 */

/** Days after completion at which a prepaid order's payout is scheduled (the seed uses the same). */
export const PAYOUT_DELAY_DAYS = 7
export const DEAL_QUANTITY_RETURNED = 'DEAL_QUANTITY_RETURNED'

const json = (rows: unknown[]): SQL => sql`${JSON.stringify(rows)}::json`
const bigintArray = (ids: number[]): SQL => sql`${`{${ids.join(',')}}`}::bigint[]`

export async function applyChanges (tx: Tx, changes: PlannedChange[], actor: Actor): Promise<void> {
  if (changes.length === 0) return
  const accepted = changes.filter((c) => c.toStatus === 'ORDER_ACCEPTED')
  const rejected = changes.filter((c) => c.toStatus === 'ORDER_REJECTED_BY_SELLER')
  const completed = changes.filter((c) => c.toStatus === 'ORDER_COMPLETED_BY_SELLER')
  // Cancelling (the marketplace) undoes what a rejection undoes, and gives an acceptance's points back.
  const cancelled = changes.filter((c) => c.toStatus === 'CANCELLED')
  const undone = [...rejected, ...cancelled]

  // The statements are independent of each other: they are sent together (postgres.js pipelines them
  // on the transaction's connection), so a change costs one round trip of latency, not ten.
  const writes: Array<Promise<unknown>> = [
    updateOrders(tx, changes),
    insertHistory(tx, changes, actor),
    movePoints(tx, changes.filter((c) => c.points !== null), actor.sellerId),
    removeAutoRejectJobs(tx, [...accepted, ...undone]),
    recordRefunds(tx, undone, actor.sellerId),
    returnDealQuantity(tx, undone),
    movePayouts(tx, completed, 'SCHEDULED'),
    // A rejected or cancelled prepaid order will never be paid out (the seed models it the same way).
    movePayouts(tx, undone, 'CANCELLED')
  ]
  // Wait for every statement before reporting a failure: the caller then rolls back a savepoint, which
  // must not overtake statements still queued on the connection.
  const results = await Promise.allSettled(writes)
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed) throw failed.reason
}

async function updateOrders (tx: Tx, changes: PlannedChange[]): Promise<void> {
  // An order changed twice in one batch (accept, then complete) ends in its last status.
  const last = new Map<number, TargetStatus>()
  for (const c of changes) last.set(c.order.id, c.toStatus)
  const rows = [...last].map(([id, status]) => ({ id, status, actionable: isActionable(status) }))
  await tx.execute(sql`
    update orders o set status = c.status::order_status, is_actionable = c.actionable, updated_at = now()
    from json_to_recordset(${json(rows)}) as c(id bigint, status text, actionable boolean)
    where o.id = c.id`)
}

async function insertHistory (tx: Tx, changes: PlannedChange[], actor: Actor): Promise<void> {
  const rows = changes.map((c) => ({
    order_id: c.order.id,
    from_status: c.fromStatus,
    to_status: c.toStatus,
    reason: c.reason
  }))
  await tx.execute(sql`
    insert into order_status_history (order_id, from_status, to_status, reason, credential_id, source)
    select c.order_id, c.from_status::order_status, c.to_status::order_status, c.reason, ${actor.credentialId}::int, ${actor.source}::change_source
    from json_to_recordset(${json(rows)}) as c(order_id bigint, from_status text, to_status text, reason text)`)
}

/**
 * One ledger entry per order whose change moves points (an acceptance's deduction, a cancellation's
 * give-back) and the seller's balance moved by exactly their sum, in one statement: the ledger and the
 * balance cannot disagree. A second entry of a kind for an order violates points_ledger_order_kind_key;
 * a balance below zero violates sellers_points_balance_non_negative.
 */
async function movePoints (tx: Tx, moving: PlannedChange[], sellerId: number): Promise<void> {
  if (moving.length === 0) return
  const rows = moving.map((c) => ({
    order_id: c.order.id,
    kind: c.toStatus === 'CANCELLED' ? 'ORDER_CANCELLATION_REFUND' : 'ORDER_ACCEPTANCE',
    amount: formatCents(c.points!.cents),
    balance_after: formatCents(c.points!.balanceAfterCents)
  }))
  await tx.execute(sql`
    with entry as (
      insert into points_ledger (seller_id, order_id, kind, amount, balance_after)
      select ${sellerId}::int, e.order_id, e.kind::points_entry_kind, e.amount, e.balance_after
      from json_to_recordset(${json(rows)}) as e(order_id bigint, kind text, amount numeric, balance_after numeric)
      returning amount
    )
    update sellers set points_balance = points_balance + (select sum(amount) from entry), updated_at = now()
    where id = ${sellerId}::int`)
}

/** The seller has acted: the order's pending auto-rejection, if any, must not fire. */
async function removeAutoRejectJobs (tx: Tx, changes: PlannedChange[]): Promise<void> {
  if (changes.length === 0) return
  await removeJobs(tx, [...new Set(changes.map((c) => autoRejectJobKey(c.order.id)))])
}

/** A refund row for each rejected or cancelled order paid online, and a job to process it (effects worker). */
async function recordRefunds (tx: Tx, undone: PlannedChange[], sellerId: number): Promise<void> {
  const rows = undone.filter((c) => c.order.paymentMode === 'ONLINE_PAID')
    .map((c) => ({ order_id: c.order.id, amount: c.order.orderTotalFinal, currency: c.order.currencyCode }))
  if (rows.length === 0) return
  await tx.execute(sql`
    with refund as (
      insert into refunds (order_id, seller_id, amount, currency)
      select r.order_id, ${sellerId}::int, r.amount, r.currency
      from json_to_recordset(${json(rows)}) as r(order_id bigint, amount numeric, currency text)
      on conflict (order_id) do nothing
      returning id
    ), specs as (
      select array_agg(row(${TASKS.processRefund}::text, json_build_object('refundId', refund.id ${jobTraceArguments()}), null, null, null, null, null, null)::graphile_worker.job_spec) as jobs
      from refund
      having count(*) > 0
    )
    select count(*) from specs, lateral graphile_worker.add_jobs(specs.jobs)`)
}

/**
 * Gives the grabbed daily-deal quantity of rejected or cancelled orders back, once per order
 * (order_effects). The deals are locked by the caller beforehand (lockDailyDeals), in id order.
 */
async function returnDealQuantity (tx: Tx, undone: PlannedChange[]): Promise<void> {
  if (undone.length === 0) return
  const ids = [...new Set(undone.map((c) => c.order.id))]
  await tx.execute(sql`
    with marked as (
      insert into order_effects (order_id, kind)
      select distinct oi.order_id, ${DEAL_QUANTITY_RETURNED}::text from order_items oi
      where oi.order_id = any(${bigintArray(ids)}) and oi.deal_id is not null
      on conflict do nothing
      returning order_id
    ), given_back as (
      select oi.deal_id, sum(oi.quantity) as quantity
      from order_items oi join marked m on m.order_id = oi.order_id
      where oi.deal_id is not null
      group by oi.deal_id
    )
    update daily_deals d set grabbed_quantity = greatest(d.grabbed_quantity - g.quantity, 0), updated_at = now()
    from given_back g where d.id = g.deal_id`)
}

/** A prepaid order's payout moves on from ON_HOLD only, so it moves at most once. */
async function movePayouts (tx: Tx, changes: PlannedChange[], to: 'SCHEDULED' | 'CANCELLED'): Promise<void> {
  const ids = changes.filter((c) => c.order.paymentMode === 'PREPAID').map((c) => c.order.id)
  if (ids.length === 0) return
  await tx.execute(sql`
    update payout_schedules set status = ${to}::payout_status, updated_at = now(),
      scheduled_for = case when ${to}::text = 'SCHEDULED' then current_date + ${PAYOUT_DELAY_DAYS}::int else scheduled_for end
    where order_id = any(${bigintArray(ids)}) and status = 'ON_HOLD'`)
}
