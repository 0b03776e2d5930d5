import t from 'tap'
import { originMatcher } from '../../src/plugins/cors.js'
import { build } from '../helpers/build.js'

/* CORS: allowed origins from CORS_ORIGINS (and the service's own), preflights, and what a refused origin sees. */

const preflight = (origin: string, method = 'POST', headers = 'authorization, content-type') => ({
  method: 'OPTIONS' as const,
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers }
})

t.test('an allowed origin: preflight answered with the methods and the credential headers; answers readable', async (t) => {
  const { app } = await build(t, { CORS_ORIGINS: 'https://erp.example.com, http://localhost:*' })
  for (const url of ['/v2/graphql', '/v2/accounting/orders/update-status', '/v2/shipments/outstanding/sync-data']) {
    const res = await app.inject({ url, ...preflight('https://erp.example.com', 'PUT', 'x-api-key, content-type, idempotency-key') })
    t.equal(res.statusCode, 204, url)
    t.equal(res.headers['access-control-allow-origin'], 'https://erp.example.com')
    t.match(res.headers['access-control-allow-methods'], /POST/)
    t.match(res.headers['access-control-allow-methods'], /PUT/)
    for (const h of ['authorization', 'x-api-key', 'content-type', 'idempotency-key']) t.match(res.headers['access-control-allow-headers'], h)
    t.equal(res.headers.vary, 'Origin', 'caches keep answers per origin')
  }
  const answer = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { origin: 'http://localhost:5173', 'content-type': 'application/json' }, payload: { query: '{ seller { name } }' } })
  t.equal(answer.statusCode, 401, 'CORS does not replace the credential')
  t.equal(answer.headers['access-control-allow-origin'], 'http://localhost:5173', 'any port of a :* origin')
  t.match(answer.headers['access-control-expose-headers'], /x-request-id/)
  t.match(answer.headers['access-control-expose-headers'], /retry-after/)
})

t.test('a refused origin gets no CORS headers; OPTIONS without CORS is still 204 with Allow', async (t) => {
  const { app } = await build(t, { CORS_ORIGINS: 'https://erp.example.com' })
  const refused = await app.inject({ url: '/v2/graphql', ...preflight('https://evil.example.net') })
  t.equal(refused.headers['access-control-allow-origin'], undefined, 'the browser will refuse the call')
  t.equal(refused.headers['access-control-allow-methods'], undefined)
  const refusedCall = await app.inject({ method: 'POST', url: '/v2/graphql', headers: { origin: 'https://evil.example.net', 'content-type': 'application/json' }, payload: { query: '{ seller { name } }' } })
  t.equal(refusedCall.headers['access-control-allow-origin'], undefined)
  const lookalike = await app.inject({ url: '/v2/graphql', ...preflight('https://erp.example.com.evil.net') })
  t.equal(lookalike.headers['access-control-allow-origin'], undefined, 'a prefix is not a match')

  const plain = await app.inject({ method: 'OPTIONS', url: '/v2/accounting/orders/update-status' })
  t.equal(plain.statusCode, 204)
  t.equal(plain.headers.allow, 'POST, OPTIONS')
  t.equal((await app.inject({ method: 'OPTIONS', url: '/nope' })).statusCode, 404)
})

t.test('the service\'s own origin (its explorers) is always allowed; defaults by environment', async (t) => {
  const production = await build(t, { ORDER_EXCHANGE_ENV: 'production' })
  const own = await production.app.inject({ url: '/v2/graphql', headers: { host: 'api.example.com', origin: 'http://api.example.com', 'access-control-request-method': 'POST' }, method: 'OPTIONS' })
  t.equal(own.headers['access-control-allow-origin'], 'http://api.example.com')
  const local = await production.app.inject({ url: '/v2/graphql', ...preflight('http://localhost:5173') })
  t.equal(local.headers['access-control-allow-origin'], undefined, 'production: no origin by default')
  const testing = await build(t)
  const dev = await testing.app.inject({ url: '/v2/graphql', ...preflight('http://localhost:5173') })
  t.equal(dev.headers['access-control-allow-origin'], 'http://localhost:5173', 'testing: local dev servers by default')
  const none = await build(t, { CORS_ORIGINS: 'none' })
  t.equal((await none.app.inject({ url: '/v2/graphql', ...preflight('http://localhost:5173') })).headers['access-control-allow-origin'], undefined, 'CORS_ORIGINS=none')
})

t.test('origin patterns', async (t) => {
  const match = originMatcher(['https://erp.example.com', 'http://localhost:*', 'https://a.example.com/'])
  t.ok(match('https://erp.example.com'))
  t.ok(match('https://a.example.com'), 'a trailing slash in config is ignored')
  t.ok(match('http://localhost:3000'))
  t.ok(match('http://localhost'))
  t.notOk(match('https://localhost:3000'), 'the scheme counts')
  t.notOk(match('http://localhost.evil.net:3000'))
  t.notOk(match('https://erp.example.com:8443'), 'an exact origin includes its port')
  t.notOk(match('null'))
})
