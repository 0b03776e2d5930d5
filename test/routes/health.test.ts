import t from 'tap'
import { build } from '../helpers/build.js'

t.test('liveness and readiness', async (t) => {
  const { app, database } = await build(t)
  const live = await app.inject({ url: '/health/live' })
  t.equal(live.statusCode, 200)
  t.same(live.json(), { status: 'ok' })
  t.match(live.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'every response carries a request id')

  const ready = await app.inject({ url: '/health/ready', headers: { 'x-request-id': 'abc-123' } })
  t.equal(ready.statusCode, 200)
  t.same(ready.json(), { status: 'ready' })
  t.equal(ready.headers['x-request-id'], 'abc-123', 'an incoming request id is kept')

  await database.close()
  const down = await app.inject({ url: '/health/ready' })
  t.equal(down.statusCode, 503)
  t.same(down.json(), { status: 'unavailable', reason: 'database unreachable' })
})

t.test('unknown routes answer the envelope', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/v2/nothing-here' })
  t.equal(res.statusCode, 404)
  t.same(res.json(), { error: true, status: false, statusCode: 404, message: 'Route GET /v2/nothing-here not found', code: 'NOT_FOUND' })
})
