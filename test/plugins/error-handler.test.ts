import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import pino from 'pino'
import { Type } from '@sinclair/typebox'
import { buildApp } from '../../src/app.js'
import { loggerOptions } from '../../src/logger.js'
import { RequestError } from '../../src/errors.js'
import { testConfig, testDatabase } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'

async function appWithProbes (t: Test, env: Record<string, string> = {}) {
  const database = await testDatabase(t)
  const lines: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const logger = pino(loggerOptions({ LOG_LEVEL: 'info' }) as pino.LoggerOptions, sink)
  const app = await buildApp({ config: testConfig(database, env), database, logger })
  t.teardown(() => app.close())
  app.post('/probe/echo', async (req) => ({ got: req.body }))
  app.post('/probe/typed', { schema: { body: Type.Object({ n: Type.Integer() }) } }, async () => ({ ok: true }))
  app.get('/probe/boom', async () => { throw new Error('connection to db.internal:5432 failed, password=hunter2') })
  app.get('/probe/coded', async () => { throw new RequestError.BadRequest('Something specific was wrong') })
  app.get('/probe/auth', { onRequest: app.requireCredential('api-key', 'authorization') }, async () => ({ ok: true }))
  await app.ready()
  return { app, database, logs: () => lines.join('') }
}

t.test('bad bodies become the envelope with a safe message', async (t) => {
  const { app } = await appWithProbes(t, { BODY_LIMIT_BYTES: '2048' })
  const json = { 'content-type': 'application/json' }
  const invalid = await app.inject({ method: 'POST', url: '/probe/echo', headers: json, payload: '{"order_status": [' })
  t.equal(invalid.statusCode, 400)
  t.same(invalid.json(), { error: true, status: false, statusCode: 400, message: 'Invalid JSON format', code: 'INVALID_JSON' })

  const empty = await app.inject({ method: 'POST', url: '/probe/echo', headers: json, payload: '' })
  t.same(empty.json(), { error: true, status: false, statusCode: 400, message: 'Invalid JSON format', code: 'INVALID_JSON' })

  const big = await app.inject({ method: 'POST', url: '/probe/echo', headers: json, payload: JSON.stringify({ x: 'y'.repeat(5000) }) })
  t.equal(big.statusCode, 413)
  t.same(big.json(), { error: true, status: false, statusCode: 413, message: 'Request body is larger than the limit of 2048 bytes', code: 'PAYLOAD_TOO_LARGE' })

  const media = await app.inject({ method: 'POST', url: '/probe/echo', headers: { 'content-type': 'text/xml' }, payload: '<a/>' })
  t.equal(media.statusCode, 415)
  t.equal(media.json().message, 'Content-Type must be application/json')

  const typed = await app.inject({ method: 'POST', url: '/probe/typed', headers: json, payload: { n: 'x' } })
  t.equal(typed.statusCode, 400)
  t.match(typed.json().message, /^Invalid request: body\/n must be integer/)

  const coded = await app.inject({ url: '/probe/coded' })
  t.same(coded.json(), { error: true, status: false, statusCode: 400, message: 'Something specific was wrong', code: 'BAD_REQUEST' })
})

t.test('a 5xx says nothing of its cause; the log has it, with the request id', async (t) => {
  const { app, logs } = await appWithProbes(t)
  const res = await app.inject({ url: '/probe/boom', headers: { 'x-request-id': 'req-boom-1' } })
  t.equal(res.statusCode, 500)
  t.same(res.json(), { error: true, status: false, statusCode: 500, message: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' })
  t.notMatch(res.body, /hunter2|db\.internal|at /)
  t.match(logs(), /"reqId":"req-boom-1".*hunter2/, 'details are in the log')
})

t.test('GraphQL-route errors use the GraphQL error shape', async (t) => {
  const { app, database } = await appWithProbes(t)
  // The route authenticates before it reads the body: with a token, a parse error is a GraphQL body.
  const { sellerId } = await createSeller(database)
  const token = await credential(database, sellerId, 'access-token')
  const res = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, payload: '{bad' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { data: null, errors: [{ message: 'Invalid JSON format', extensions: { code: 'INVALID_JSON' } }] })
  const anonymous = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { 'content-type': 'application/json' }, payload: '{bad' })
  t.equal(anonymous.statusCode, 401)
  t.same(anonymous.json(), { data: null, errors: [{ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } }] })
})

t.test('secrets never reach the log', async (t) => {
  const { app, logs } = await appWithProbes(t)
  const secret = 'oxs_test_ak_abcdefghijkl_' + 'S'.repeat(43)
  await app.inject({ url: '/probe/auth', headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret } })
  app.log.info({ headers: { authorization: `Bearer ${secret}`, 'x-api-key': secret } }, 'explicit header log')
  t.match(logs(), /explicit header log/)
  t.notMatch(logs(), /SSSSSSSSSS/, 'neither header value is logged')
  t.match(logs(), /\[redacted\]/)
})
