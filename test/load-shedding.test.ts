import t from 'tap'
import { build } from './helpers/build.js'
import { credential, seedDemo } from './helpers/fixtures.js'

/*
 * Load shedding: past the event-loop or heap bound the process answers 503 OVERLOADED at once, in each
 * endpoint's shape, keeps answering liveness, reports not ready, and recovers by itself.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('past the heap bound every request is shed in its own envelope; liveness still answers', async (t) => {
  const { app, database } = await build(t, { SHED_HEAP_USED_BYTES: '1', METRICS_TOKEN: 'metrics-token-0123456789abcdef' })
  await seedDemo(database, 10)
  const key = await credential(database, 1, 'api-key')
  const token = await credential(database, 1, 'access-token')
  await pause(250) // the first samples
  const rest = await app.inject({ method: 'POST', url: '/v2/accounting/orders/update-status', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: { order_status: [{ Order_id: 1, Order_Status: 'ORDER_ACCEPTED' }] } })
  t.equal(rest.statusCode, 503)
  t.equal(rest.headers['retry-after'], '5')
  t.same(rest.json(), { error: true, status: false, statusCode: 503, message: 'Service temporarily overloaded; retry shortly', code: 'OVERLOADED' })
  const gql = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: { query: '{ seller { name } }' } })
  t.equal(gql.statusCode, 503)
  t.same(gql.json(), { data: null, errors: [{ message: 'Service temporarily overloaded; retry shortly', extensions: { code: 'OVERLOADED' } }] })
  t.equal((await app.inject({ url: '/health/live' })).statusCode, 200, 'alive')
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 503)
  t.same(ready.json(), { status: 'unavailable', reason: 'overloaded' }, 'not ready: traffic goes elsewhere')
  const metrics = await app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456789abcdef' } })
  t.equal(metrics.statusCode, 200, 'metrics are still read')
  t.match(metrics.body, /oxs_load_shed_total\{reason="heapUsedBytes"\} 2/)
})

t.test('an event loop held up sheds load, then recovers without a restart', async (t) => {
  const { app, database } = await build(t, { SHED_EVENT_LOOP_DELAY_MS: '100' })
  await seedDemo(database, 10)
  const key = await credential(database, 1, 'api-key')
  const sync = () => app.inject({ method: 'PUT', url: '/v2/shipments/outstanding/sync-data', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }] })
  t.equal((await sync()).statusCode, 200, 'fine at first')
  // under-pressure samples the loop's delay every 100 ms from a timer, as the mean of a delay histogram it
  // then resets, and a reset drops the histogram's next measurement (it restarts from that tick). So one long
  // stretch is missed whenever the sampler's timer runs before the histogram's after it, and a request sent
  // later than a sample lasts sees the next, calm one. Hold the loop the way a runaway computation does, in
  // back-to-back stretches with one turn of the loop between (each stretch is a measurement; every sample
  // holds several, or none at all, which under-pressure reads as an infinite delay), then send the request
  // at once; on a loaded machine, again a few times.
  const holdLoop = async (ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end;) {
      const stretch = Date.now() + 150
      while (Date.now() < stretch) { /* a synchronous stretch */ }
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const delay = () => (app as unknown as { memoryUsage: () => { eventLoopDelay: number } }).memoryUsage().eventLoopDelay
  let shed: Awaited<ReturnType<typeof sync>>
  let seen = 0
  let tries = 0
  do {
    await holdLoop(600)
    seen = Math.max(seen, delay())
    shed = await sync()
  } while (shed.statusCode !== 503 && ++tries < 5)
  t.ok(seen > 100, `the sampler saw the stretches (${seen.toFixed(0)} ms)`)
  t.equal(shed.statusCode, 503, 'shed right after')
  t.equal(shed.json().code, 'OVERLOADED')
  let recovered = 0
  for (let tries = 0; tries < 50 && recovered === 0; tries++) {
    await pause(100)
    if ((await sync()).statusCode === 200) recovered = tries + 1
  }
  t.ok(recovered > 0, `recovered once the loop runs freely again (after ${recovered * 100} ms)`)
  t.equal((await app.inject({ url: '/health/ready' })).statusCode, 200)
})
