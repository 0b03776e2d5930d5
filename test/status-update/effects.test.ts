import t from 'tap'
import { build } from '../helpers/build.js'
import { OrderErrors } from '../../src/status-update/texts.js'
import { accept, complete, createShop, failed, ok, orderStatus, post, queuedJobs, reject, sellerPoints } from '../helpers/status-update.js'
import type { TestDatabase as Database } from '../helpers/build.js'
import { notificationsOf } from '../helpers/effects.js'
import { readEventBodies } from '../../src/events/event-body.js'
import { notificationOf, type Notification } from '../../src/effects/notification.js'
import { whatsappRecipient } from '../../src/effects/transports/whatsapp-cloud.js'
import type { NotificationChannel } from '../../src/effects/jobs.js'

/*
 * The effects of each move (docs/api/status-updates.md), each checked in the database, and checked absent
 * where they must not happen.
 */

/** The notifications of an order as the deliverer would send them now: its deliveries' events, per channel. */
async function notificationsSent (database: Database, orderId: number): Promise<Notification[]> {
  const deliveries = await notificationsOf(database, orderId)
  const events = deliveries.map((d) => {
    const [, sellerId, sequence] = /^evt_(\d+)_(\d+)$/.exec(d.eventId)!
    return { sellerId: Number(sellerId), sequence }
  })
  const bodies = await readEventBodies(database.db, events)
  return deliveries.map((d, i) => notificationOf(bodies.get(`${events[i].sellerId}:${events[i].sequence}`)!,
    d.channel as NotificationChannel, 'the seller')!)
}

async function jobsFor (database: Database, orderId: number) {
  return (await queuedJobs(database)).filter((j) => j.payload.orderId === orderId)
}

t.test('accept: points through the ledger, auto-rejection job removed, history, notifications', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, { pointsBalance: '1000.00', takeRate: '0.0250' })
  const key = await shop.apiKey()
  const id = await shop.order({ total: '1234.55', autoRejectJob: true })
  const untouched = await shop.order({ autoRejectJob: true })
  const [before] = await database.sql`select updated_at from orders where id = ${id}`

  t.same(await post(app, key, { order_status: [accept(id)] }), { statusCode: 200, body: ok(1) })

  // 2.5 % of 1234.55 = 30.86375 → 30.86
  const ledger = await database.sql`select kind, amount, balance_after from points_ledger where order_id = ${id}`
  t.same(ledger.map((r) => ({ ...r })), [{ kind: 'ORDER_ACCEPTANCE', amount: '-30.86', balance_after: '969.14' }])
  t.equal(await sellerPoints(database, shop.sellerId), '969.14')
  const [sum] = await database.sql`select sum(amount)::text as total from points_ledger where seller_id = ${shop.sellerId}`
  t.equal(sum.total, '969.14', 'the ledger sums to the balance')

  const [order] = await database.sql`select status, is_actionable, updated_at from orders where id = ${id}`
  t.equal(order.status, 'ORDER_ACCEPTED')
  t.equal(order.is_actionable, true)
  t.ok(order.updated_at > before.updated_at, 'updated_at moved')

  const [cred] = await database.sql`select id from credentials where seller_id = ${shop.sellerId}`
  const history = await database.sql`select from_status, to_status, reason, credential_id, source, changed_at from order_status_history where order_id = ${id}`
  t.equal(history.length, 1)
  t.match({ ...history[0] }, { from_status: 'ORDER_PLACED', to_status: 'ORDER_ACCEPTED', reason: null, credential_id: cred.id, source: 'api', changed_at: String })

  const jobs = await queuedJobs(database)
  t.notOk(jobs.some((j) => j.key === `auto-reject:${id}`), 'the order\'s auto-rejection job is gone')
  t.ok(jobs.some((j) => j.key === `auto-reject:${untouched}`), 'another order\'s job stays')

  const [event] = await database.sql`select sequence from seller_events where order_id = ${id}`
  const eventId = `evt_${shop.sellerId}_${event.sequence}`
  t.same((await notificationsOf(database, id)).map((n) => ({ ...n })), ['seller', 'customer', 'messaging'].map((channel) => ({
    channel, type: 'order.accepted', status: 'PENDING', attempts: 0, eventId
  })), 'one notification per channel, of the change\'s one event')
  t.notOk((await jobsFor(database, id)).some((j) => j.task !== 'auto-reject'), 'no job for them: notifications are deliveries')
  const sent = await notificationsSent(database, id)
  t.match(sent.find((n) => n.channel === 'messaging'), {
    eventId,
    eventType: 'order.accepted',
    channel: 'messaging',
    occurredAt: String,
    order: { orderId: String(id), orderStatus: 'ORDER_ACCEPTED', companyId: shop.sellerId, reason: null },
    retailer: { whatsapp: '+919800000001' }
  })
  t.equal(whatsappRecipient(sent.find((n) => n.channel === 'messaging')!), '919800000001', 'the message goes to the retailer\'s whatsapp')
})

t.test('reject paid online: refund once with its job, deal quantity back, reason in the messages', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database, {}, { whatsapp: null, phone: '+919811111111' })
  const key = await shop.apiKey()
  const id = await shop.order({ paymentMode: 'ONLINE_PAID', total: '480.25', dealQuantity: 7, autoRejectJob: true })
  await shop.order({ dealQuantity: 5 })

  t.same(await post(app, key, { order_status: [reject(id, 'Out of stock')] }), { statusCode: 200, body: ok(1) })

  const refunds = await database.sql`select id, amount, currency, status, seller_id from refunds where order_id = ${id}`
  t.same(refunds.map((r) => ({ ...r, id: undefined })), [{ id: undefined, amount: '480.25', currency: 'INR', status: 'PENDING', seller_id: shop.sellerId }])
  const jobs = await queuedJobs(database)
  t.same(jobs.filter((j) => j.task === 'process-refund').map((j) => j.payload), [{ refundId: refunds[0].id }])
  t.notOk(jobs.some((j) => j.key === `auto-reject:${id}`), 'auto-rejection job removed')

  const [deal] = await database.sql`select grabbed_quantity from daily_deals where id = ${shop.dealId}`
  t.equal(deal.grabbed_quantity, '5.000', 'the 7 grabbed by the rejected order are back; the other order\'s 5 stay')
  const effects = await database.sql`select kind from order_effects where order_id = ${id}`
  t.same(effects.map((e) => e.kind), ['DEAL_QUANTITY_RETURNED'])

  const [order] = await database.sql`select status, is_actionable from orders where id = ${id}`
  t.same({ ...order }, { status: 'ORDER_REJECTED_BY_SELLER', is_actionable: false })
  const [h] = await database.sql`select reason from order_status_history where order_id = ${id}`
  t.equal(h.reason, 'Out of stock')
  const sent = await notificationsSent(database, id)
  t.same(sent.map((n) => n.channel), ['seller', 'customer', 'messaging'])
  t.ok(sent.every((n) => n.order.reason === 'Out of stock' && n.eventType === 'order.rejected'), 'every message carries the reason')
  t.equal(whatsappRecipient(sent.find((n) => n.channel === 'messaging')!), '919811111111', 'no whatsapp: the phone')
  const [ledger] = await database.sql`select count(*)::int as n from points_ledger where order_id = ${id}`
  t.equal(ledger.n, 0, 'no points move on a rejection')
})

t.test('reject cash on delivery: no refund; reject prepaid: no refund, payout cancelled', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const cod = await shop.order({ paymentMode: 'CASH_ON_DELIVERY' })
  const prepaid = await shop.order({ paymentMode: 'PREPAID', status: 'ORDER_ACCEPTED' })
  t.same((await post(app, key, { order_status: [reject(cod), reject(prepaid)] })).body, ok(2))
  const [refunds] = await database.sql`select count(*)::int as n from refunds`
  t.equal(refunds.n, 0, 'no refund row')
  t.notOk((await queuedJobs(database)).some((j) => j.task === 'process-refund'), 'no refund job')
  const [payout] = await database.sql`select status, scheduled_for from payout_schedules where order_id = ${prepaid}`
  t.same({ ...payout }, { status: 'CANCELLED', scheduled_for: null })
  const effects = await database.sql`select order_id from order_effects`
  t.same(effects, [], 'no deal lines, nothing given back')
})

t.test('complete: a prepaid order\'s payout is scheduled; others have none to move', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const prepaid = await shop.order({ paymentMode: 'PREPAID', status: 'ORDER_ACCEPTED', total: '250.00' })
  const delivered = await shop.order({ paymentMode: 'PREPAID', status: 'DELIVERED' })
  const cod = await shop.order({ paymentMode: 'CASH_ON_DELIVERY', status: 'ORDER_ACCEPTED' })
  const acceptedPrepaid = await shop.order({ paymentMode: 'PREPAID' })
  const items = [complete(prepaid), complete(delivered), complete(cod), accept(acceptedPrepaid)]
  t.same((await post(app, key, { order_status: items })).body, ok(4))
  const payouts = await database.sql`select order_id, status, amount, scheduled_for = current_date + 7 as in_a_week from payout_schedules order by order_id`
  t.same(payouts.map((p) => ({ ...p, order_id: Number(p.order_id) })), [
    { order_id: prepaid, status: 'SCHEDULED', amount: '250.00', in_a_week: true },
    { order_id: delivered, status: 'SCHEDULED', amount: '100.00', in_a_week: true },
    { order_id: acceptedPrepaid, status: 'ON_HOLD', amount: '100.00', in_a_week: null }
  ])
  const notifications = await notificationsOf(database)
  const byType: Record<string, number> = {}
  for (const n of notifications) byType[n.type] = (byType[n.type] ?? 0) + 1
  t.same(byType, { 'order.accepted': 3, 'order.completed': 9 }, 'three channels for each of the four changes')
  t.equal(await orderStatus(database, cod), 'ORDER_COMPLETED_BY_SELLER')
})

/** Every row the status update writes, counted, and the values it changes. */
async function fingerprint (database: Database) {
  await notificationsOf(database) // the deliveries the log's events make (dispatch): none twice
  const [row] = await database.sql`select
    (select count(*) from graphile_worker.jobs)::int as jobs,
    (select count(*) from seller_events)::int as events,
    (select count(*) from deliveries)::int as deliveries,
    (select count(*) from order_status_history)::int as history,
    (select count(*) from points_ledger where kind = 'ORDER_ACCEPTANCE')::int as ledger,
    (select count(*) from refunds)::int as refunds,
    (select count(*) from order_effects)::int as effects,
    (select string_agg(grabbed_quantity::text, ',' order by id) from daily_deals) as deals,
    (select string_agg(status || coalesce(scheduled_for::text, ''), ',' order by id) from payout_schedules) as payouts,
    (select string_agg(points_balance::text, ',' order by id) from sellers) as points,
    (select string_agg(status || updated_at::text, ',' order by id) from orders) as orders`
  return { ...row }
}

t.test('a whole batch retried: the same answer, nothing done twice, no new jobs', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const batch = [
    accept(await shop.order({ autoRejectJob: true })),
    reject(await shop.order({ paymentMode: 'ONLINE_PAID', dealQuantity: 3 })),
    complete(await shop.order({ paymentMode: 'PREPAID', status: 'ORDER_ACCEPTED' })),
    reject(await shop.order({ paymentMode: 'PREPAID', status: 'ORDER_ACCEPTED' }))
  ]
  t.same((await post(app, key, { order_status: batch })).body, ok(4))
  const first = await fingerprint(database)
  t.match(first, { jobs: 1, events: 4, deliveries: 4 * 3, history: 4, ledger: 1, refunds: 1, effects: 1 })
  t.same((await post(app, key, { order_status: batch })).body, ok(4, [], batch.map((i) => i.Order_id as number)), 'the retry succeeds, every order reported unchanged')
  t.same(await fingerprint(database), first, 'and changes nothing')
})

t.test('a mixed batch: valid, invalid status, unknown, another seller\'s, reasonless rejection', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const other = await createShop(database)
  const key = await shop.apiKey()
  const [a, b, c, d] = await shop.orders(4)
  const theirs = await other.order()
  const res = await post(app, key, {
    order_status: [accept(a), { Order_id: b, Order_Status: 'SHIPPED' }, accept(123456789), reject(theirs), reject(c, null), reject(d, 'Price mismatch')]
  })
  t.same(res, {
    statusCode: 400,
    body: {
      error: true,
      status: false,
      statusCode: 400,
      message: 'Invalid order status',
      code: 'INVALID_STATUS',
      data: {
        successful: 2,
        failed: 4,
        errors: [
          failed(1, b, OrderErrors.invalidStatus), failed(2, 123456789, OrderErrors.notFound),
          failed(3, theirs, OrderErrors.notFound), failed(4, c, OrderErrors.reasonRequired)
        ],
        unchangedOrderIds: []
      }
    }
  })
  t.same(
    [
      await orderStatus(database, a),
      await orderStatus(database, b),
      await orderStatus(database, c),
      await orderStatus(database, d),
      await orderStatus(database, theirs)
    ],
    ['ORDER_ACCEPTED', 'ORDER_PLACED', 'ORDER_PLACED', 'ORDER_REJECTED_BY_SELLER', 'ORDER_PLACED']
  )
})

t.test('once-guards in the database: a second deduction, refund or deal return cannot happen', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  // Rows as if an earlier attempt had already applied the effect (e.g. data repaired by hand).
  const deducted = await shop.order()
  await database.sql`insert into points_ledger (seller_id, order_id, kind, amount, balance_after) values (${shop.sellerId}, ${deducted}, 'ORDER_ACCEPTANCE', '-2.00', '998.00')`
  const refunded = await shop.order({ paymentMode: 'ONLINE_PAID' })
  await database.sql`insert into refunds (order_id, seller_id, amount) values (${refunded}, ${shop.sellerId}, '100.00')`
  const returned = await shop.order({ dealQuantity: 4 })
  await database.sql`insert into order_effects (order_id, kind) values (${returned}, 'DEAL_QUANTITY_RETURNED')`
  const fine = await shop.order()

  const res = await post(app, key, {
    order_status: [accept(deducted), reject(refunded), reject(returned), accept(fine)]
  })
  t.same(res.body, ok(3, [failed(0, deducted, OrderErrors.storageFailure)]), 'a second deduction is refused by the ledger\'s UNIQUE')
  t.equal(await orderStatus(database, deducted), 'ORDER_PLACED', 'and that order did not change')
  t.equal(await sellerPoints(database, shop.sellerId), '998.00', 'only the other acceptance was deducted')
  const [refunds] = await database.sql`select count(*)::int as n from refunds where order_id = ${refunded}`
  t.equal(refunds.n, 1)
  t.notOk((await queuedJobs(database)).some((j) => j.task === 'process-refund'), 'no job for a refund already recorded')
  const [deal] = await database.sql`select grabbed_quantity from daily_deals where id = ${shop.dealId}`
  t.equal(deal.grabbed_quantity, '4.000', 'quantity already given back is not given back again')
  t.equal(await orderStatus(database, returned), 'ORDER_REJECTED_BY_SELLER')
})

t.test('an auto-rejection job already running is not deleted, but loses its key and any retry', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const running = await shop.order({ autoRejectJob: true })
  const stuck = await shop.order({ autoRejectJob: true })
  await database.sql`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'worker-1' where key = ${`auto-reject:${running}`}`
  await database.sql`update graphile_worker._private_jobs set locked_at = now() - interval '5 hours', locked_by = 'dead' where key = ${`auto-reject:${stuck}`}`
  t.same((await post(app, key, { order_status: [accept(running), reject(stuck)] })).body, ok(2))
  const jobs = (await queuedJobs(database)).filter((j) => j.task === 'auto-reject')
  t.same(jobs.map((j) => ({ key: j.key, orderId: j.payload.orderId })), [{ key: null, orderId: running }], 'the running one stays, keyless; the stuck one is gone')
  const [row] = await database.sql`select attempts = max_attempts as exhausted from graphile_worker._private_jobs where locked_by = 'worker-1'`
  t.ok(row.exhausted, 'and will not be retried')
})
