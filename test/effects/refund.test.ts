import t from 'tap'
import type { JobHelpers } from 'graphile-worker'
import { build } from '../helpers/build.js'
import { createShop, post, reject } from '../helpers/status-update.js'
import { captureLogger, startTestWorker } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { processRefundTask } from '../../src/effects/tasks/process-refund.js'
import { createPaymentGateway, type PaymentGateway, type RefundRequest } from '../../src/effects/refunds/gateway.js'

const attempt = (attempts: number, maxAttempts = 3) =>
  ({ job: { attempts, max_attempts: maxAttempts } }) as unknown as JobHelpers

t.test('a rejected online-paid order: its refund is processed by the worker through the manual gateway', async (t) => {
  const { app, database } = await build(t)
  const shop = await createShop(database)
  await startTestWorker(t, database)
  const orderId = await shop.order({ paymentMode: 'ONLINE_PAID', total: '250.50' })
  const res = await post(app, await shop.apiKey(), { order_status: [reject(orderId)] })
  t.equal(res.statusCode, 200)
  await eventually(t, 'refund settled', async () => (await database.sql`select status from refunds where order_id = ${orderId}`)[0]?.status === 'MANUAL')
  t.match((await database.sql`select amount, status, gateway, gateway_reference, last_error from refunds where order_id = ${orderId}`)[0],
    { amount: '250.50', status: 'MANUAL', gateway: 'manual', gateway_reference: null, last_error: null })
  await eventually(t, 'job gone', async () => (await database.sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'process-refund'`)[0].n === 0)
})

t.test('process-refund is idempotent per refund, retries through the gateway with one idempotency key, and fails visibly', async (t) => {
  const { database } = await build(t)
  const shop = await createShop(database)
  const orderId = await shop.order({ paymentMode: 'ONLINE_PAID', status: 'ORDER_REJECTED_BY_SELLER', total: '99.90' })
  const [{ id: refundId }] = await database.sql`insert into refunds (order_id, seller_id, amount) values (${orderId}, ${shop.sellerId}, '99.90') returning id`
  const { logger, lines } = captureLogger()

  const requests: RefundRequest[] = []
  let failFirst = true
  const gateway: PaymentGateway = {
    name: 'test-gateway',
    refund: async (r) => {
      requests.push(r)
      if (failFirst) { failFirst = false; throw new Error('gateway unavailable') }
      return { status: 'SUCCEEDED', reference: `re_${r.idempotencyKey}` }
    }
  }
  const task = processRefundTask({ db: database.db, gateway, logger })
  await t.rejects(async () => task({ refundId }, attempt(1)), { message: 'gateway unavailable' })
  t.match((await database.sql`select status, gateway, last_error from refunds where id = ${refundId}`)[0], { status: 'PROCESSING', gateway: 'test-gateway', last_error: 'gateway unavailable' })
  await task({ refundId }, attempt(2))
  t.match((await database.sql`select status, gateway_reference, last_error from refunds where id = ${refundId}`)[0], { status: 'SUCCEEDED', gateway_reference: `re_refund-${refundId}`, last_error: null })
  t.same(requests.map((r) => r.idempotencyKey), [`refund-${refundId}`, `refund-${refundId}`], 'the same idempotency key on the retry')
  t.match(requests[0], { refundId, orderId, sellerId: shop.sellerId, amount: '99.90', currency: 'INR' })
  await task({ refundId }, attempt(1))
  t.equal(requests.length, 2, 'a settled refund is never sent again')

  // A gateway that always fails: FAILED after the last attempt, logged at error level.
  const order2 = await shop.order({ paymentMode: 'ONLINE_PAID', status: 'ORDER_REJECTED_BY_SELLER' })
  const [{ id: refund2 }] = await database.sql`insert into refunds (order_id, seller_id, amount) values (${order2}, ${shop.sellerId}, '100.00') returning id`
  const broken = processRefundTask({ db: database.db, gateway: { name: 'down', refund: async () => { throw new Error('HTTP 502 from gateway') } }, logger })
  await t.rejects(async () => broken({ refundId: refund2 }, attempt(1, 2)))
  t.equal((await database.sql`select status from refunds where id = ${refund2}`)[0].status, 'PROCESSING')
  await t.rejects(async () => broken({ refundId: refund2 }, attempt(2, 2)))
  t.match((await database.sql`select status, last_error from refunds where id = ${refund2}`)[0], { status: 'FAILED', last_error: 'HTTP 502 from gateway' })
  t.ok(lines.some((l) => l.level === 50 && l.refundId === refund2 && l.msg === 'refund failed for good: finance must act'))

  await task({ refundId: 424242 }, attempt(1))
  t.ok(lines.some((l) => l.level === 40 && l.refundId === 424242), 'a job for a refund that does not exist only warns')
  t.equal(createPaymentGateway({ REFUND_GATEWAY: 'manual' }).name, 'manual')
})
