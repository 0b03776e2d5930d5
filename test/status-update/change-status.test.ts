import t from 'tap'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { changeOrderStatus, type ChangeOrderStatusInput } from '../../src/status-update/change-status.js'
import { recordingEvents } from '../../src/events/record-events.js'
import { notificationsOf } from '../helpers/effects.js'
import { createShop, orderStatus, queuedJobs, sellerPoints } from '../helpers/status-update.js'

/* changeOrderStatus: the one-order path that the auto-rejection task (effects worker) calls. */

t.test('auto-rejection of a placed order: every reject effect, system as the author, once', async (t) => {
  const database = await testDatabase(t)
  const summary = await seedDemo(database, 60)
  const seller = summary.sellers[0]
  const [placed] = await database.sql`select id from orders where seller_id = ${seller.companyId} and status = 'ORDER_PLACED'
    and payment_mode = 'ONLINE_PAID' and not is_deleted order by id limit 1`
  const orderId = Number(placed.id)
  const input: ChangeOrderStatusInput = {
    sellerId: seller.companyId,
    orderId,
    toStatus: 'ORDER_REJECTED_BY_SELLER',
    reason: 'Not accepted in time',
    credentialId: null,
    storeIds: null,
    source: 'auto-reject',
    onlyFrom: 'ORDER_PLACED'
  }
  const change = () => database.db.transaction((tx) =>
    recordingEvents(tx, (events) => changeOrderStatus(tx, input, events)))
  t.same(await change(), { ok: true, changed: true })
  t.same(await change(), { ok: true, changed: false }, 'a second run does nothing')

  const history = await database.sql`select from_status, to_status, reason, credential_id, source from order_status_history where order_id = ${orderId} and source = 'auto-reject'`
  t.same(history.map((h) => ({ ...h })), [{ from_status: 'ORDER_PLACED', to_status: 'ORDER_REJECTED_BY_SELLER', reason: 'Not accepted in time', credential_id: null, source: 'auto-reject' }])
  const [refunds] = await database.sql`select count(*)::int as n from refunds where order_id = ${orderId}`
  t.equal(refunds.n, 1)
  // The seed schedules auto-rejections of its placed orders (effects worker); this order's went with the change.
  const jobs = (await queuedJobs(database)).filter((j) => j.task !== 'auto-reject' || j.key === `auto-reject:${orderId}`)
  t.same(jobs.map((j) => j.task), ['process-refund'], 'the refund is the one job: notifications are not jobs')
  // One event, recorded once (not by the second run); its notifications, one per channel, come from it.
  const events = await database.sql`select type::text, status::text, previous_status::text, reason, sequence::int
    from seller_events where order_id = ${orderId}`
  t.same(events.map((e) => ({ ...e })), [{ type: 'order.rejected', status: 'ORDER_REJECTED_BY_SELLER', previous_status: 'ORDER_PLACED', reason: 'Not accepted in time', sequence: events[0]?.sequence }], 'one event, recorded once')
  const notifications = await notificationsOf(database, orderId)
  t.same(notifications.map((n) => [n.channel, n.type, n.eventId]), (['seller', 'customer', 'messaging'] as const)
    .map((c) => [c, 'order.rejected', `evt_${seller.companyId}_${events[0]?.sequence}`]), 'one notification per channel, of that event')
})

t.test('onlyFrom: an order the seller accepted meanwhile is left alone', async (t) => {
  const database = await testDatabase(t)
  const shop = await createShop(database)
  const accepted = await shop.order({ status: 'ORDER_ACCEPTED' })
  const base = { sellerId: shop.sellerId, credentialId: null, storeIds: null, source: 'auto-reject' as const }
  const skipped = await database.db.transaction((tx) => recordingEvents(tx, (events) => changeOrderStatus(tx, { ...base, orderId: accepted, toStatus: 'ORDER_REJECTED_BY_SELLER', reason: 'Not accepted in time', onlyFrom: 'ORDER_PLACED' }, events)))
  t.same(skipped, { ok: true, changed: false })
  t.equal(await orderStatus(database, accepted), 'ORDER_ACCEPTED')
  const missing = await database.db.transaction((tx) => recordingEvents(tx, (events) => changeOrderStatus(tx, { ...base, orderId: 999999, toStatus: 'ORDER_REJECTED_BY_SELLER', reason: 'x', onlyFrom: 'ORDER_PLACED' }, events)))
  t.same(missing, { ok: false, error: { code: 'ORDER_NOT_FOUND', text: 'Order not found in system' } })
})

t.test('the per-order errors come back as { ok: false }', async (t) => {
  const database = await testDatabase(t)
  const shop = await createShop(database, { pointsBalance: '1.00' })
  const id = await shop.order()
  const base = { sellerId: shop.sellerId, orderId: id, credentialId: null, storeIds: null, source: 'api' as const, reason: null }
  const run = (input: Partial<ChangeOrderStatusInput>) => database.db.transaction((tx) => recordingEvents(tx, (events) => changeOrderStatus(tx, { ...base, toStatus: 'ORDER_ACCEPTED', ...input } as ChangeOrderStatusInput, events)))
  t.same(await run({ toStatus: 'SHIPPED' as never }), { ok: false, error: { code: 'INVALID_STATUS', text: 'Invalid order status' } })
  t.same(await run({ orderId: 0 }), { ok: false, error: { code: 'INVALID_ORDER_ID', text: 'Order_id must be a positive integer' } })
  t.same(await run({ toStatus: 'ORDER_REJECTED_BY_SELLER', reason: ' ' }), { ok: false, error: { code: 'REASON_REQUIRED', text: 'Reason is required when rejecting an order' } })
  t.same(await run({ storeIds: [shop.storeIds[1]] }), { ok: false, error: { code: 'ORDER_NOT_AUTHORIZED', text: 'Seller is not authorized to update this order' } })
  t.same(await run({ toStatus: 'ORDER_COMPLETED_BY_SELLER' }), { ok: false, error: { code: 'TRANSITION_NOT_ALLOWED', text: 'Cannot change order status from ORDER_PLACED to ORDER_COMPLETED_BY_SELLER' } })
  t.same(await run({}), { ok: false, error: { code: 'INSUFFICIENT_POINTS', text: 'Insufficient points to accept this order' } })
  t.equal(await sellerPoints(database, shop.sellerId), '1.00')
  await database.sql`update sellers set points_balance = 50, status = 'suspended' where id = ${shop.sellerId}`
  t.same(await run({}), { ok: false, error: { code: 'SELLER_NOT_ELIGIBLE', text: 'Seller is not eligible to accept orders' } })
  await database.sql`update sellers set status = 'active' where id = ${shop.sellerId}`
  t.same(await run({}), { ok: true, changed: true })
  t.equal(await sellerPoints(database, shop.sellerId), '48.00')
})

t.test('a storage failure is thrown, for the caller\'s transaction to handle', async (t) => {
  const database = await testDatabase(t)
  const shop = await createShop(database)
  const id = await shop.order()
  await database.sql`alter table order_status_history add constraint no_more_history check (false) not valid`
  const err = await database.db.transaction((tx) => recordingEvents(tx, (events) => changeOrderStatus(tx, {
    sellerId: shop.sellerId, orderId: id, toStatus: 'ORDER_ACCEPTED', reason: null, credentialId: null, storeIds: null, source: 'api'
  }, events))).then(() => null, (e: Error & { cause?: Error }) => e)
  t.match(err?.cause?.message, /no_more_history/, 'thrown with the database\'s reason')
  t.equal(await orderStatus(database, id), 'ORDER_PLACED', 'and nothing of the change is left')
  t.equal(await sellerPoints(database, shop.sellerId), '1000.00')
})
