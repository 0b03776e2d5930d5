import t from 'tap'
import pino from 'pino'
import { createMetrics, startMetricsServer } from '../../src/metrics.js'
import { startWorker } from '../../src/worker-tasks.js'
import { build } from '../helpers/build.js'
import { deliveriesOf, recordOrderEvent, workerEnv } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { startReceiver } from '../helpers/receiver.js'
import { seedDemo } from '../helpers/fixtures.js'
import { accept, createShop, post } from '../helpers/status-update.js'
import { webhookMarket } from '../helpers/webhooks.js'
import { dispatchEvents } from '../../src/delivery/dispatch.js'

/* GET /metrics in Prometheus's text format: what it counts, and who may read it. */

const TOKEN = 'metrics-token-0123456789abcdef'

/** `name{a="x",b="y"} value` lines as [name, labels, value]; comments skipped. */
function samples (text: string): Array<{ name: string, labels: Record<string, string>, value: number }> {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((line) => {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) throw new Error(`not a sample: ${line}`)
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]))
    return { name: m[1]!, labels, value: Number(m[3]) }
  })
}

const value = (
  all: ReturnType<typeof samples>, name: string, labels: Record<string, string> = {}
): number | undefined =>
  all.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value

t.test('scraped with the metrics token: requests, items, rows, the pool and the queue', async (t) => {
  const { app, database } = await build(t, { METRICS_TOKEN: TOKEN, RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_SYNC_PER_MINUTE: '2' })
  const shop = await createShop(database)
  const key = await shop.apiKey()
  const [a, b] = await shop.orders(2)
  await post(app, key, { order_status: [accept(a), accept(b), accept(999_999)] })
  await post(app, key, { order_status: [accept(a)] })
  const sync = () => app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }, { retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }, {}] })
  await sync()
  await sync()
  t.equal((await sync()).statusCode, 429)

  t.equal((await app.inject({ url: '/metrics' })).statusCode, 401, 'no token')
  const wrong = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789abcdeX' } })
  t.equal(wrong.statusCode, 401, 'another token')
  t.equal(wrong.json().code, 'UNAUTHENTICATED')
  const res = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
  const all = samples(res.body)

  t.equal(value(all, 'oxs_status_update_items_total', { outcome: 'changed' }), 2)
  t.equal(value(all, 'oxs_status_update_items_total', { outcome: 'unchanged' }), 1)
  t.equal(value(all, 'oxs_status_update_items_total', { outcome: 'error', code: 'ORDER_NOT_FOUND' }), 1)
  t.equal(value(all, 'oxs_shipment_sync_rows_total', { outcome: 'inserted' }), 1)
  t.equal(value(all, 'oxs_shipment_sync_rows_total', { outcome: 'unchanged' }), 1)
  t.equal(value(all, 'oxs_shipment_sync_rows_total', { outcome: 'duplicate' }), 2)
  t.equal(value(all, 'oxs_shipment_sync_rows_total', { outcome: 'failed' }), 2)
  t.equal(value(all, 'oxs_rate_limit_rejections_total', { route: '/v2/shipments/outstanding/sync-data' }), 1)
  t.equal(value(all, 'oxs_http_request_duration_seconds_count', { route: '/v2/accounting/orders/update-status', method: 'POST', status_code: '200' }), 2)
  t.equal(value(all, 'oxs_http_request_duration_seconds_count', { route: '/v2/shipments/outstanding/sync-data', status_code: '429' }), 1)
  t.equal(value(all, 'oxs_db_pool_connections', { state: 'max' }), 5)
  t.ok((value(all, 'oxs_db_pool_connections', { state: 'idle' }) ?? 0) >= 1, 'idle connections')
  // Notifications are no jobs any more: the two accepts' events wait for the three notification subscriptions.
  t.equal(value(all, 'oxs_job_queue_jobs', { task: 'notify' }), undefined, 'no notify job')
  t.equal(value(all, 'oxs_webhook_events_behind'), 6, 'two events not yet queued for each of the three notification channels (no worker)')
  t.ok(value(all, 'oxs_process_resident_memory_bytes')! > 0, 'process metrics too')
  t.same(all.flatMap((s) => Object.values(s.labels)).filter((v) => /oxs_test_ak_|999999/.test(v)), [], 'nothing from a request in a label')
})

t.test('no token configured: not served on the API port; the admin port serves it without one', async (t) => {
  const { app } = await build(t)
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 404)

  const metrics = createMetrics()
  metrics.shed.inc({ reason: 'eventLoopDelay' })
  const admin = await startMetricsServer(metrics.registry, '127.0.0.1', 0)
  t.teardown(() => admin.close())
  const res = await fetch(`http://127.0.0.1:${admin.port}/metrics`)
  t.equal(res.status, 200)
  t.equal(value(samples(await res.text()), 'oxs_load_shed_total', { reason: 'eventLoopDelay' }), 1)
  t.equal((await fetch(`http://127.0.0.1:${admin.port}/other`)).status, 404)
})

t.test('the worker counts delivery attempts by transport and result', async (t) => {
  const { database } = await build(t)
  await seedDemo(database, 20)
  const metrics = createMetrics()
  const hooks = await startReceiver(t)
  const whatsapp = await startReceiver(t, () => 503)
  const config = workerEnv(database, {
    WEBHOOK_URL: hooks.url,
    WEBHOOK_SECRET: 'whsec_dGVzdC13ZWJob29rLXNlY3JldC0wMTIz',
    NOTIFY_MESSAGING_TRANSPORT: 'whatsapp-cloud',
    WHATSAPP_API_BASE_URL: whatsapp.url,
    WHATSAPP_PHONE_NUMBER_ID: '1',
    WHATSAPP_ACCESS_TOKEN: 'x'
  })
  const worker = await startWorker(config, database, database.url, pino({ level: 'silent' }), metrics)
  t.teardown(() => worker.stop())
  const [order] = (await database.sql`select o.id::int as id, o.seller_id as "sellerId" from orders o join retailers r on r.id = o.retailer_id
    where o.status = 'ORDER_REJECTED_BY_SELLER' and coalesce(r.whatsapp, r.phone) is not null order by o.id limit 1`) as unknown as Array<{ id: number, sellerId: number }>
  await recordOrderEvent(database, order!)
  await eventually(t, 'delivered, and WhatsApp tried', async () => {
    const rows = await deliveriesOf(database, { orderId: order!.id })
    return rows.filter((d) => d.status === 'DELIVERED').length === 3 && rows.some((d) => d.kind === 'notify-messaging' && d.attempts >= 1)
  })
  const all = samples(await metrics.registry.metrics())
  t.equal(value(all, 'oxs_notification_deliveries_total', { transport: 'log', result: 'delivered' }), 2, 'the seller\'s and the customer\'s channels')
  t.equal(value(all, 'oxs_notification_deliveries_total', { transport: 'operator-webhook', result: 'delivered' }), 1, 'the operator\'s endpoint')
  t.equal(value(all, 'oxs_notification_deliveries_total', { transport: 'whatsapp-cloud', result: 'failed' }), 1, 'a failed attempt, to be retried')
  t.equal(value(all, 'oxs_notification_deliveries_total', { transport: 'whatsapp-cloud', result: 'delivered' }), undefined)
})

t.test('the webhook endpoints\' backlog: endpoints by status, events not yet queued, deliveries due and for how long', async (t) => {
  const m = await webhookMarket(t, { METRICS_TOKEN: TOKEN })
  const scrape = async () => {
    const res = await m.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
    t.equal(res.statusCode, 200)
    return samples(res.body)
  }
  let all = await scrape()
  t.same([value(all, 'oxs_webhook_endpoints', { status: 'ENABLED' }), value(all, 'oxs_webhook_events_behind'),
    value(all, 'oxs_webhook_deliveries_pending', { state: 'due' }), value(all, 'oxs_webhook_oldest_due_seconds')],
  [0, 0, 0, 0], 'no endpoint: nothing behind')

  // No deliverer runs here: what the log records waits, first to be queued, then to be sent.
  const one = await m.webhooks(1, 'POST', '', { url: 'http://127.0.0.1:9/hook' })
  const two = await m.webhooks(2, 'POST', '', { url: 'http://127.0.0.1:9/other' })
  t.equal(one.status, 201)
  t.equal(two.status, 201)
  await m.place([{ orderId: 7001, seller: 1 }, { orderId: 7002, seller: 1 }, { orderId: 7003, seller: 2 }])
  all = await scrape()
  t.equal(value(all, 'oxs_webhook_endpoints', { status: 'ENABLED' }), 2)
  t.equal(value(all, 'oxs_webhook_events_behind'), 3 + 3 * 3,
    'three placements, none queued yet: for the sellers\' endpoints and the three notification channels (before their types filter)')
  t.equal(value(all, 'oxs_webhook_deliveries_pending', { state: 'due' }), 0)

  t.match(await dispatchEvents(m.database.db), { queued: 6 }, 'the endpoints\' three, and the seller\'s notification of each placement')
  await m.database.sql`update deliveries set next_attempt_at = now() - interval '90 seconds'
    where id = (select min(id) from deliveries)`
  await m.database.sql`update deliveries set next_attempt_at = now() + interval '5 minutes'
    where id = (select max(id) from deliveries)`
  all = await scrape()
  t.equal(value(all, 'oxs_webhook_events_behind'), 0, 'queued: the cursors moved')
  t.equal(value(all, 'oxs_webhook_deliveries_pending', { state: 'due' }), 5)
  t.equal(value(all, 'oxs_webhook_deliveries_pending', { state: 'scheduled' }), 1, 'a retry waiting')
  const oldest = value(all, 'oxs_webhook_oldest_due_seconds')!
  t.ok(oldest >= 90 && oldest < 150, `the oldest due delivery has waited about 90 s (${oldest})`)

  // A disabled endpoint's deliveries are not sent, so they are not counted as waiting.
  t.equal((await m.webhooks(2, 'PATCH', `/${two.json.data.id as string}`, { status: 'DISABLED' })).status, 200)
  await m.place([{ orderId: 7004, seller: 2 }])
  all = await scrape()
  t.equal(value(all, 'oxs_webhook_endpoints', { status: 'ENABLED' }), 1)
  t.equal(value(all, 'oxs_webhook_endpoints', { status: 'DISABLED' }), 1)
  t.equal(value(all, 'oxs_webhook_events_behind'), 3, 'the notification channels\' (types not applied), not the disabled endpoint\'s')
  t.match(await dispatchEvents(m.database.db), { queued: 1 }, 'the seller\'s notification; nothing for the disabled endpoint')
  await m.database.sql`update subscriptions set status = 'ENABLED' where id = ${two.json.data.id as string}`
  t.match(await dispatchEvents(m.database.db), { queued: 1 }, 'enabled again, it catches up')
  await m.database.sql`update subscriptions set status = 'DISABLED' where id = ${two.json.data.id as string}`
  all = await scrape()
  const pending = (value(all, 'oxs_webhook_deliveries_pending', { state: 'due' }) ?? 0) +
    (value(all, 'oxs_webhook_deliveries_pending', { state: 'scheduled' }) ?? 0)
  const [counts] = await m.database.sql`select count(*) filter (where s.status = 'ENABLED')::int as enabled,
      count(*) filter (where s.id = ${two.json.data.id as string})::int as disabled
    from deliveries d join subscriptions s on s.id = d.subscription_id where d.status = 'PENDING'`
  t.ok(counts!.disabled > 0, 'the disabled endpoint has deliveries pending')
  t.equal(pending, counts!.enabled, 'only the enabled subscriptions\' deliveries')

  // The database away: the scrape still answers, without the gauges it could not read.
  await m.database.close()
  const res = await m.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
  t.equal(res.statusCode, 200, 'answered')
  t.equal(value(samples(res.body), 'oxs_webhook_endpoints', { status: 'ENABLED' }), undefined, 'no stale value')
  t.ok(value(samples(res.body), 'oxs_process_resident_memory_bytes')! > 0, 'the rest is there')
})
