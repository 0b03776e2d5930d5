import t, { type Test } from 'tap'
import { credential } from '../helpers/fixtures.js'
import { storesOf } from '../helpers/platform-market.js'
import { verifyingReceiver, webhookMarket, type WebhookMarket } from '../helpers/webhooks.js'
import { eventually } from '../helpers/eventually.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'

/*
 * An endpoint made by an API key narrowed to some stores keeps that scope: the real deliverer sends it the
 * events of those stores' orders and the events of no order (as the feed shows a narrowed reader), never
 * another store's; a replay, by `after` or by `eventIds`, queues nothing outside it, and an id outside it is
 * EVENT_NOT_FOUND exactly as one not in the log. (Which credential sees which endpoint on every route is
 * test/routes/seller-route-scopes.test.ts.)
 */

const STORE_A = storesOf(1)[0]
/** Private networks allowed explicitly: the receivers listen on 127.0.0.1. */
const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }

async function narrowedHooks (m: WebhookMarket) {
  const key = await credential(m.database, 1, 'api-key', { storeIds: [STORE_A] })
  return async (method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number, json: any }> => {
    const res = await m.app.inject({
      method,
      url: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { payload: body as object })
    })
    return { status: res.statusCode, json: res.json() }
  }
}

/** The store of each of seller 1's events, by sequence (null: an event of no order). */
async function storeOfEvents (m: WebhookMarket): Promise<Map<number, number | null>> {
  const rows = await m.database.sql<Array<{ sequence: string, store_id: number | null }>>`
    select sequence::text as sequence, store_id from seller_events where seller_id = 1`
  return new Map(rows.map((r) => [Number(r.sequence), r.store_id]))
}

t.test('a narrowed key\'s endpoint is delivered its stores\' orders\' events and those of no order, only', async (t: Test) => {
  const m = await webhookMarket(t, ENV)
  const narrowed = await narrowedHooks(m)
  let wholeSecret = ''
  const whole = await verifyingReceiver(t, () => [wholeSecret])
  let narrowedSecret = ''
  const inStore = await verifyingReceiver(t, () => [narrowedSecret])
  // An endpoint that answers 410: disabling it records webhook.endpoint_disabled, an event of no order.
  const gone = await verifyingReceiver(t, () => [], () => 410)
  const madeWhole = await m.webhooks(1, 'POST', '', { url: whole.url })
  t.equal(madeWhole.status, 201)
  wholeSecret = madeWhole.json.data.secret
  const madeNarrowed = await narrowed('POST', '', { url: inStore.url })
  t.equal(madeNarrowed.status, 201)
  narrowedSecret = madeNarrowed.json.data.secret
  t.equal((await narrowed('POST', '', { url: gone.url })).status, 201)
  await m.deliverer()

  await m.place([
    { orderId: 5001, seller: 1, storeIndex: 0 }, { orderId: 5002, seller: 1, storeIndex: 1 },
    { orderId: 5003, seller: 1, storeIndex: 0 }, { orderId: 5004, seller: 1, storeIndex: 1 },
    { orderId: 9001, seller: 2 }
  ])
  await m.sellerUpdate(1, [5001, 5002, 5003, 5004].map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
  await eventually(t, 'the 410 endpoint disabled', async () =>
    (await m.database.sql`select 1 from seller_events where seller_id = 1 and type = 'webhook.endpoint_disabled'`).length === 1)

  const wholeFeed = (await m.follow(await m.token(1))).events
  const narrowedFeed = (await m.follow(await m.token(1, { storeIds: [STORE_A] }))).events
  await eventually(t, () => `every event at the whole seller's endpoint (${new Set(whole.delivered.map((d) => d.id)).size} of ${wholeFeed.length})`, () =>
    new Set(whole.delivered.map((d) => d.id)).size >= wholeFeed.length)
  await eventually(t, () => `every in-store event at the narrowed endpoint (${new Set(inStore.delivered.map((d) => d.id)).size} of ${narrowedFeed.length})`, () =>
    new Set(inStore.delivered.map((d) => d.id)).size >= narrowedFeed.length)
  t.same(whole.unverified, [])
  t.same(inStore.unverified, [])

  const stores = await storeOfEvents(m)
  const sent = [...new Set(inStore.delivered.map((d) => d.id))].sort()
  t.same(sent, narrowedFeed.map((e) => e.id).sort(), 'the narrowed endpoint gets exactly what a narrowed reader\'s feed shows')
  t.same([...new Set(inStore.delivered.map((d) => stores.get(d.sequence)))].sort(), [STORE_A, null],
    'events of store A\'s orders and of no order')
  t.same([...new Set(inStore.delivered.map((d) => d.orderId))].sort(), ['5001', '5003', null])
  t.ok(inStore.delivered.some((d) => d.type === 'webhook.endpoint_disabled'), 'the event of no order goes too')
  t.same([...new Set(whole.delivered.map((d) => d.id))].sort(), wholeFeed.map((e) => e.id).sort(),
    'the whole seller\'s endpoint gets every event of the seller')
  t.ok(whole.delivered.some((d) => d.orderId === '5002'), 'store B reaches the whole seller\'s endpoint')

  // Another round, after both are caught up: still only store A's.
  const before = inStore.delivered.length
  await m.place([{ orderId: 5005, seller: 1, storeIndex: 1 }, { orderId: 5006, seller: 1, storeIndex: 0 }])
  await eventually(t, 'order 5006 at the narrowed endpoint', () => inStore.delivered.some((d) => d.orderId === '5006'))
  await eventually(t, 'order 5005 at the whole seller\'s endpoint', () => whole.delivered.some((d) => d.orderId === '5005'))
  t.same(inStore.delivered.slice(before).map((d) => d.orderId), ['5006'])
  const [{ n }] = await m.database.sql`select count(*)::int as n from deliveries
    where subscription_id = ${madeNarrowed.json.data.id}::uuid and order_id in (5002, 5004, 5005)`
  t.equal(n, 0, 'nothing of store B was ever queued for it')
})

t.test('a replay queues nothing outside the endpoint\'s scope; an id outside it is EVENT_NOT_FOUND', async (t: Test) => {
  const m = await webhookMarket(t, ENV)
  const narrowed = await narrowedHooks(m)
  const N = (await narrowed('POST', '', { url: 'http://127.0.0.1:9/n' })).json.data.id as string
  const W = (await m.webhooks(1, 'POST', '', { url: 'http://127.0.0.1:9/w' })).json.data.id as string
  await m.place([
    { orderId: 6001, seller: 1, storeIndex: 0 }, { orderId: 6002, seller: 1, storeIndex: 1 },
    { orderId: 6003, seller: 1, storeIndex: 0 }
  ])
  await m.sellerUpdate(1, [6001, 6002].map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })))
  const feed = (await m.follow(await m.token(1))).events
  const inA = feed.filter((e) => e.order?.orderId === '6001' || e.order?.orderId === '6003')
  const inB = feed.filter((e) => e.order?.orderId === '6002')
  t.equal(inA.length, 3)
  t.equal(inB.length, 2)
  const queuedFor = async (id: string) => (await m.database.sql<Array<{ sequence: string }>>`
    select sequence::text as sequence from deliveries where subscription_id = ${id}::uuid order by sequence`)
    .map((r) => r.sequence)

  // after: the endpoint's stores' events only (no deliverer runs here: every row is the replay's).
  const after = await narrowed('POST', `/${N}/replay`, { after: '0' })
  t.equal(after.status, 200)
  t.same(after.json.data, { queued: 3, through: inA[2].sequence })
  t.same(await queuedFor(N), inA.map((e) => e.sequence))
  // One replay at a time per endpoint: the last one's rows are taken as delivered before each next one.
  const settle = () => m.database.sql`update deliveries set status = 'DELIVERED' where replay and status = 'PENDING'`
  await settle()
  const afterB = await narrowed('POST', `/${N}/replay`, { after: inA[2].sequence })
  t.same(afterB.json.data, { queued: 0, through: null }, 'after the last of its stores\' events: nothing, though store B\'s follow')

  // eventIds: one outside the scope is not found, like one not in the log, and nothing of the request is queued.
  for (const ids of [[inB[0].id], [inA[0].id, inB[1].id], ['evt_1_999999']]) {
    const refused = await narrowed('POST', `/${N}/replay`, { eventIds: ids })
    t.equal(refused.status, 400, `replay of ${ids.join(', ')}`)
    t.equal(refused.json.code, 'EVENT_NOT_FOUND')
    t.match(refused.json.message, ids.at(-1)!, 'names the id')
  }
  t.same(await queuedFor(N), inA.map((e) => e.sequence), 'nothing more queued')
  await settle()
  const one = await narrowed('POST', `/${N}/replay`, { eventIds: [inA[1].id] })
  t.same(one.json.data, { queued: 1, through: inA[1].sequence })

  // The whole seller's endpoint replays store B's events as ever.
  const wholeReplay = await m.webhooks(1, 'POST', `/${W}/replay`, { eventIds: [inB[0].id, inB[1].id] })
  t.same(wholeReplay.json.data, { queued: 2, through: inB[1].sequence })
  await settle()
  const wholeAfter = await m.webhooks(1, 'POST', `/${W}/replay`, { after: '0' })
  t.equal(wholeAfter.json.data.queued, feed.length)
})
