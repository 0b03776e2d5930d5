import t from 'tap'
import { testDatabase } from './helpers/build.js'
import { seedDemo } from './helpers/fixtures.js'
import { changeOrderStatus } from '../src/status-update/change-status.js'

t.test('changeOrderStatus: the path the auto-rejection task uses', async (t) => {
  const database = await testDatabase(t)
  const summary = await seedDemo(database, 60)
  const seller = summary.sellers[0]
  const [placed] = await database.sql`select id from orders where seller_id = ${seller.companyId} and status = 'ORDER_PLACED' and payment_mode = 'ONLINE_PAID' and not is_deleted order by id limit 1`
  const orderId = Number(placed.id)
  const input = { sellerId: seller.companyId, orderId, toStatus: 'ORDER_REJECTED_BY_SELLER' as const, reason: 'Not accepted in time', credentialId: null, storeIds: null, source: 'auto-reject' as const }
  const result = await database.db.transaction((tx) => changeOrderStatus(tx, input))
  t.same(result, { ok: true, changed: true })
  const again = await database.db.transaction((tx) => changeOrderStatus(tx, input))
  t.same(again, { ok: true, changed: false })
  const [history] = await database.sql`select from_status, to_status, reason, credential_id, source from order_status_history where order_id = ${orderId} and source = 'auto-reject'`
  t.same({ ...history }, { from_status: 'ORDER_PLACED', to_status: 'ORDER_REJECTED_BY_SELLER', reason: 'Not accepted in time', credential_id: null, source: 'auto-reject' })
  const refunds = await database.sql`select amount from refunds where order_id = ${orderId}`
  t.equal(refunds.length, 1)
  // The seed schedules auto-rejections of its placed orders (effects worker); this order's is gone with the change.
  const jobs = await database.sql`select t.identifier as task_identifier, j.key, j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id order by j.id`
  t.same(jobs.filter((j) => j.task_identifier !== 'auto-reject').map((j) => j.task_identifier).sort(), ['notify', 'notify', 'notify', 'process-refund'])
  t.notOk(jobs.some((j) => j.key === `auto-reject:${orderId}`), "the order's own auto-rejection job was removed")
})
