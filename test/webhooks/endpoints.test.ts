import { randomBytes, randomUUID } from 'node:crypto'
import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { webhookMarket, type WebhookMarket } from '../helpers/webhooks.js'
import { loadConfig } from '../../src/config.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { MAX_ENDPOINTS, WebhookText } from '../../src/webhooks/texts.js'

/*
 * The seller's webhook endpoints (REST /v2/webhooks/endpoints) one route at a time: what each answers, its
 * validation, the limit of ten per seller (concurrent creations included), that another seller's endpoint
 * is exactly the 404 of one that does not exist on every route and is left untouched, that only the
 * seller's API key opens them, the signing secret at rest (encrypted, bound to its endpoint) and out of the
 * logs, production without WEBHOOK_SECRETS_KEY, and the address policy of a URL at registration (SSRF).
 */

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'

const PUBLIC_URL = 'https://93.184.216.34/hook'
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const REFUSED = 'webhooks cannot be sent to private networks'

const failure = (statusCode: number, code: string, message: string) =>
  ({ error: true, status: false, statusCode, message, code })
const NOT_FOUND = failure(404, 'WEBHOOK_ENDPOINT_NOT_FOUND', WebhookText.notFound)
const UNAUTHORIZED = failure(401, 'UNAUTHENTICATED', 'Unauthorized')
const TOO_MANY = failure(409, 'TOO_MANY_WEBHOOK_ENDPOINTS', WebhookText.tooMany)

/** Every route on one endpoint id: method, path after the id, a body that is valid for it. */
const ID_ROUTES: Array<[Method, string, unknown?]> = [
  ['PATCH', '', { description: 'changed' }],
  ['PATCH', '', { url: 'https://93.184.216.34/elsewhere' }],
  ['PATCH', '', { status: 'DISABLED' }],
  ['PATCH', '', { types: ['order.placed'] }],
  ['DELETE', ''],
  ['POST', '/rotate-secret'],
  ['POST', '/test'],
  ['GET', '/deliveries'],
  ['GET', '/deliveries?status=FAILED&after=0&limit=1'],
  ['POST', '/replay', { after: '0' }],
  ['POST', '/replay', { eventIds: ['evt_1_1'] }]
]

async function create (t: Test, m: WebhookMarket, seller: number, body: Record<string, unknown> = {}) {
  const res = await m.webhooks(seller, 'POST', '', { url: PUBLIC_URL, ...body })
  t.equal(res.status, 201, `seller ${seller} creates an endpoint`)
  return res.json.data as Record<string, any> & { id: string, secret: string }
}

/** The endpoint's row, every column, and its cursor (subscription_cursors). */
async function endpointRow (m: WebhookMarket, id: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await m.database.sql`select * from subscriptions where id = ${id}::uuid`
  if (row === undefined) return undefined
  const cursors = await m.database.sql`select seller_id, last_sequence::text from subscription_cursors
    where subscription_id = ${id}::uuid order by seller_id`
  return { ...row, cursors: [...cursors] }
}

/** The sellers' endpoints (not the operator's endpoint nor the notification channels every database has). */
async function countEndpoints (m: WebhookMarket, seller?: number): Promise<number> {
  const [{ n }] = seller === undefined
    ? await m.database.sql`select count(*)::int as n from subscriptions where kind = 'seller-webhook'`
    : await m.database.sql`select count(*)::int as n from subscriptions where seller_id = ${seller}`
  return n as number
}

/** `n` delivery attempts of the endpoint straight into the log (the deliverer's rows), succeeded alternately. */
async function insertAttempts (m: WebhookMarket, id: string, seller: number, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    await m.database.sql`insert into delivery_attempts
      (subscription_id, delivery_id, seller_id, sequence, type, attempt, succeeded, http_status, error, duration_ms, answer_head)
      values (${id}::uuid, ${i}, ${seller}, ${i}, 'order.placed', 1, ${i % 2 === 1}, ${i % 2 === 1 ? 200 : 500},
        ${i % 2 === 1 ? null : 'HTTP 500'}, ${10 + i}, ${`answer ${i}`})`
  }
}

/** Without the secret: what GET and PATCH show of a created endpoint. */
function view (created: Record<string, unknown>): Record<string, unknown> {
  const { secret: _secret, ...rest } = created
  return rest
}

t.test('create, list, patch each field, rotate, delete: the secret is shown once only', async (t) => {
  const m = await webhookMarket(t)
  const res = await m.webhooks(1, 'POST', '', { url: PUBLIC_URL, types: ['order.placed', 'order.accepted'], description: 'ERP' })
  t.equal(res.status, 201)
  t.match(res.json, {
    error: false,
    status: true,
    statusCode: 201,
    message: WebhookText.created,
    data: { url: PUBLIC_URL, types: ['order.placed', 'order.accepted'], description: 'ERP', status: 'ENABLED', disabledReason: null }
  })
  const created = res.json.data
  t.match(created.id, UUID)
  t.match(created.secret, SECRET, 'whsec_ + base64')
  t.equal(Buffer.from(created.secret.slice('whsec_'.length), 'base64').length, 32, 'of 32 bytes')
  t.equal(created.createdAt, created.updatedAt)
  const plain = await create(t, m, 1)
  t.match(plain, { types: null, description: '', status: 'ENABLED' }, 'types and description default to every type and none')
  t.not(plain.secret, created.secret, 'each endpoint its own secret')

  const list = await m.webhooks(1, 'GET')
  t.equal(list.status, 200)
  t.match(list.json, { error: false, status: true, statusCode: 200, message: WebhookText.listed })
  t.same(list.json.data.endpoints, [view(created), view(plain)], 'oldest first, as created, without the secret')
  t.same((await m.webhooks(2, 'GET')).json.data.endpoints, [], 'another seller lists none of them')

  let current = view(created)
  const patch = async (body: Record<string, unknown>, expected: Record<string, unknown>, what: string) => {
    const patched = await m.webhooks(1, 'PATCH', `/${created.id}`, body)
    t.equal(patched.status, 200, what)
    t.match(patched.json, { error: false, status: true, statusCode: 200, message: WebhookText.updated })
    const { updatedAt, ...rest } = patched.json.data
    const { updatedAt: before, ...was } = current
    t.same(rest, { ...was, ...expected }, `${what}: that field alone changed`)
    t.ok(updatedAt >= (before as string), `${what}: updatedAt moves on`)
    t.notOk('secret' in patched.json.data, `${what}: no secret`)
    t.notOk(JSON.stringify(patched.json).includes(created.secret.slice(6)))
    current = patched.json.data
  }
  await patch({ url: 'https://93.184.216.34/v2/hook?x=1' }, { url: 'https://93.184.216.34/v2/hook?x=1' }, 'url')
  await patch({ types: ['order.cancelled'] }, { types: ['order.cancelled'] }, 'types')
  await patch({ types: null }, { types: null }, 'types null: every type')
  await patch({ description: 'Warehouse ✓ ünïcode' }, { description: 'Warehouse ✓ ünïcode' }, 'description')
  await patch({ description: '' }, { description: '' }, 'description emptied')
  await patch({ status: 'DISABLED' }, { status: 'DISABLED', disabledReason: 'disabled by the seller' }, 'disabled')
  const disabledTest = await m.webhooks(1, 'POST', `/${created.id}/test`)
  t.same(disabledTest, { status: 409, json: failure(409, 'WEBHOOK_ENDPOINT_DISABLED', WebhookText.disabled) }, 'no test event to a disabled endpoint')
  await patch({ status: 'DISABLED' }, { status: 'DISABLED', disabledReason: 'disabled by the seller' }, 'disabled again')
  await patch({ status: 'ENABLED' }, { status: 'ENABLED', disabledReason: null }, 'enabled')
  await patch({ description: 'both', types: ['order.placed'] }, { description: 'both', types: ['order.placed'] }, 'two fields')
  const upper = await m.webhooks(1, 'PATCH', `/${created.id.toUpperCase()}`, { description: 'upper-case id' })
  t.equal(upper.status, 200, 'the id in upper case is the same endpoint')
  t.equal(upper.json.data.id, created.id)

  const tested = await m.webhooks(1, 'POST', `/${created.id}/test`)
  t.equal(tested.status, 200)
  t.match(tested.json, { message: WebhookText.testQueued, data: { eventId: /^evt_1_\d+$/, sequence: /^\d+$/ } })

  const rotated = await m.webhooks(1, 'POST', `/${created.id}/rotate-secret`)
  t.equal(rotated.status, 200)
  t.equal(rotated.json.message, WebhookText.rotated)
  t.same(Object.keys(rotated.json.data), ['secret'])
  t.match(rotated.json.data.secret, SECRET)
  t.not(rotated.json.data.secret, created.secret)
  const after = JSON.stringify((await m.webhooks(1, 'GET')).json)
  for (const secret of [created.secret, rotated.json.data.secret, plain.secret]) {
    t.notOk(after.includes(secret.slice(6)), 'the list never shows a secret')
  }

  const deleted = await m.webhooks(1, 'DELETE', `/${created.id}`)
  const success = { error: false, status: true, statusCode: 200 }
  t.same(deleted, { status: 200, json: { ...success, message: WebhookText.deleted, data: { id: created.id } } })
  for (const [method, path, body] of ID_ROUTES) {
    t.same(await m.webhooks(1, method, `/${created.id}${path}`, body), { status: 404, json: NOT_FOUND }, `deleted: ${method} ${path} is 404`)
  }
  t.same((await m.webhooks(1, 'GET')).json.data.endpoints.map((e: any) => e.id), [plain.id])
  const [{ n }] = await m.database.sql`select count(*)::int as n from deliveries where subscription_id = ${created.id}::uuid`
  t.equal(n, 0, 'its queue went with it')
})

t.test('validation: every refused body is a 400 and changes nothing', async (t) => {
  const m = await webhookMarket(t)
  const endpoint = await create(t, m, 1, { description: 'kept' })
  const before = await endpointRow(m, endpoint.id)
  const refused = async (method: Method, path: string, body: unknown, what: string, code?: string,
    message?: string | RegExp) => {
    const res = await m.webhooks(1, method, path, body)
    t.equal(res.status, 400, what)
    t.match(res.json, {
      error: true, status: false, statusCode: 400, message: message ?? String, code: code ?? String
    }, what)
    return res
  }
  const id = `/${endpoint.id}`
  await refused('PATCH', id, {}, 'an empty patch', 'INVALID_WEBHOOK_REQUEST', WebhookText.emptyPatch)
  for (const [method, path] of [['POST', ''], ['PATCH', id]] as Array<[Method, string]>) {
    const url = method === 'POST' ? { url: PUBLIC_URL } : {}
    await refused(method, path, { ...url, types: ['order.placed', 'order.nope'] }, `${method}: an unknown type`, 'BAD_REQUEST')
    await refused(method, path, { ...url, types: [] }, `${method}: no type`, 'BAD_REQUEST')
    await refused(method, path, { ...url, types: ['order.placed', 'order.placed'] }, `${method}: a type twice`, 'BAD_REQUEST')
    await refused(method, path, { ...url, types: 'order.placed' }, `${method}: types not an array`, 'BAD_REQUEST')
    for (const c of ['\u0000', '\u0007', '\n', '\r', '\u001f', '\u007f']) {
      await refused(method, path, { ...url, description: `ERP${c}x` }, `${method}: a control character ${JSON.stringify(c)} in the description`, 'BAD_REQUEST')
    }
    await refused(method, path, { ...url, description: 'd'.repeat(501) }, `${method}: a description of 501 characters`, 'BAD_REQUEST')
    await refused(method, path, { ...url, description: 5 }, `${method}: a description not a string`, 'BAD_REQUEST')
    const long = `https://93.184.216.34/${'a'.repeat(2001 - 'https://93.184.216.34/'.length)}`
    t.equal(long.length, 2001)
    await refused(method, path, { url: long }, `${method}: a url of 2,001 characters`, 'BAD_REQUEST', /2000/)
    await refused(method, path, { url: '' }, `${method}: an empty url`, 'BAD_REQUEST')
    await refused(method, path, { url: 'https://93.184.216.34/a\nb' }, `${method}: a control character in the url`, 'BAD_REQUEST')
    for (const bad of ['not a url', '/relative', 'ftp://93.184.216.34/', 'javascript:alert(1)', 'file:///etc/passwd']) {
      await refused(method, path, { url: bad }, `${method}: url ${bad}`, 'INVALID_WEBHOOK_URL', 'url must be an absolute http(s) URL')
    }
    await refused(method, path, { url: 'https://user:pw@93.184.216.34/' }, `${method}: credentials in the url`, 'INVALID_WEBHOOK_URL',
      'url must not carry credentials (user:password@)')
    await refused(method, path, null, `${method}: a null body`)
    await refused(method, path, [{ url: PUBLIC_URL }], `${method}: an array body`)
    await refused(method, path, { url: 42 }, `${method}: url not a string`, 'BAD_REQUEST')
  }
  await refused('POST', '', {}, 'create without url', 'BAD_REQUEST')
  await refused('POST', '', { types: ['order.placed'] }, 'create without url', 'BAD_REQUEST')
  await refused('PATCH', id, { status: 'PAUSED' }, 'an unknown status', 'BAD_REQUEST')
  await refused('PATCH', id, { status: 'enabled' }, 'a status in lower case', 'BAD_REQUEST')
  await refused('PATCH', id, { disabledReason: 'mine' }, 'disabledReason is not the seller\'s to set')
  await refused('POST', `${id}/replay`, {}, 'a replay of nothing')
  await refused('POST', `${id}/replay`, { after: 'x' }, 'a replay after no sequence')
  await refused('POST', `${id}/replay`, { after: '-1' }, 'a replay after a negative sequence')
  await refused('POST', `${id}/replay`, { after: '1'.repeat(19) }, 'a replay after a sequence of 19 digits')
  await refused('POST', `${id}/replay`, { eventIds: [] }, 'a replay of no event')
  await refused('POST', `${id}/replay`, { eventIds: ['evt_1_1', 'evt_1_1'] }, 'a replay of one event twice')
  await refused('POST', `${id}/replay`, { eventIds: ['evt_2_1'] }, 'another seller\'s event id', 'EVENT_NOT_FOUND')
  t.same(await endpointRow(m, endpoint.id), before, 'the endpoint is as it was')
  t.equal(await countEndpoints(m), 1, 'nothing was created')

  // The boundaries themselves are accepted.
  const longest = `https://93.184.216.34/${'a'.repeat(2000 - 'https://93.184.216.34/'.length)}`
  t.equal((await m.webhooks(1, 'PATCH', id, { url: longest })).status, 200, 'a url of 2,000 characters')
  t.equal((await m.webhooks(1, 'PATCH', id, { description: 'd'.repeat(500) })).status, 200, 'a description of 500 characters')
  t.equal((await m.webhooks(1, 'PATCH', id, { description: 'tab\u00a0nbsp \u2028 line separator' })).status, 200, 'printable beyond ASCII')

  // Properties the schemas do not know (additionalProperties: false) must be refused, not silently dropped.
  const unknownCreate = await m.webhooks(1, 'POST', '', { url: PUBLIC_URL, secret: 'whsec_mine', extra: 1 })
  t.equal(unknownCreate.status, 400, 'create with an unknown property is a 400')
  const unknownPatch = await m.webhooks(1, 'PATCH', id, { description: 'with extra', extra: 1 })
  t.equal(unknownPatch.status, 400, 'a patch with an unknown property is a 400')
  const onlyUnknown = await m.webhooks(1, 'PATCH', id, { secret: 'whsec_mine' })
  t.equal(onlyUnknown.status, 400, 'a patch of an unknown property alone is a 400')
  t.equal(onlyUnknown.json.code, 'BAD_REQUEST', 'as an unknown property')
  const both = await m.webhooks(1, 'POST', `${id}/replay`, { after: '0', eventIds: ['evt_1_1'] })
  t.equal(both.status, 400, 'a replay with both after and eventIds is a 400')
})

t.test('at most ten endpoints per seller, concurrent creations included', async (t) => {
  const m = await webhookMarket(t)
  const ids: string[] = []
  for (let i = 0; i < MAX_ENDPOINTS; i++) ids.push((await create(t, m, 1, { description: `#${i}` })).id)
  t.same(await m.webhooks(1, 'POST', '', { url: PUBLIC_URL }), { status: 409, json: TOO_MANY }, 'the eleventh is refused')
  t.equal(await countEndpoints(m, 1), MAX_ENDPOINTS)
  await create(t, m, 2)
  t.equal(await countEndpoints(m, 2), 1, 'the limit is per seller')
  t.equal((await m.webhooks(1, 'DELETE', `/${ids[3]}`)).status, 200)
  await create(t, m, 1)
  t.same(await m.webhooks(1, 'POST', '', { url: PUBLIC_URL }), { status: 409, json: TOO_MANY }, 'full again')
  t.equal((await m.webhooks(1, 'GET')).json.data.endpoints.length, MAX_ENDPOINTS)

  await m.apiKey(4)
  const concurrent = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    m.webhooks(4, 'POST', '', { url: `${PUBLIC_URL}/${i}` })))
  t.same(concurrent.map((r) => r.status).sort(), [...Array(10).fill(201), 409, 409], 'twelve at once: ten made, two refused')
  for (const r of concurrent.filter((r) => r.status === 409)) t.same(r.json, TOO_MANY)
  t.equal(await countEndpoints(m, 4), MAX_ENDPOINTS, 'exactly ten in the database')
  const again = await Promise.all(Array.from({ length: 4 }, () => m.webhooks(4, 'POST', '', { url: PUBLIC_URL })))
  t.same(again.map((r) => r.status), [409, 409, 409, 409])
  t.equal(await countEndpoints(m, 4), MAX_ENDPOINTS)
})

t.test('deliveries: the query is validated, pages follow endCursor, status filters', async (t) => {
  const m = await webhookMarket(t)
  const a = await create(t, m, 1)
  const b = await create(t, m, 1)
  await insertAttempts(m, a.id, 1, 7)
  await insertAttempts(m, b.id, 1, 2)
  const deliveries = (query: string) => m.webhooks(1, 'GET', `/${a.id}/deliveries${query}`)

  const all = await deliveries('')
  t.equal(all.status, 200)
  t.equal(all.json.message, WebhookText.attempts)
  t.equal(all.json.data.attempts.length, 7, 'only this endpoint\'s attempts')
  t.match(all.json.data.attempts[0], {
    id: /^\d+$/, eventId: 'evt_1_1', type: 'order.placed', attempt: 1, succeeded: true, httpStatus: 200, error: null, durationMs: 11, answer: 'answer 1'
  })
  t.match(all.json.data.attempts[1], { eventId: 'evt_1_2', succeeded: false, httpStatus: 500, error: 'HTTP 500', answer: 'answer 2' })
  const ids = all.json.data.attempts.map((x: any) => x.id)
  t.same(all.json.data.pageInfo, { hasNext: false, endCursor: ids[6] })

  const paged: string[] = []
  const sizes: number[] = []
  let after = '0'
  for (let page = 0; page < 10; page++) {
    const res = await deliveries(`?limit=3&after=${after}`)
    t.equal(res.status, 200)
    paged.push(...res.json.data.attempts.map((x: any) => x.id))
    sizes.push(res.json.data.attempts.length)
    after = res.json.data.pageInfo.endCursor
    if (!res.json.data.pageInfo.hasNext) break
  }
  t.same(sizes, [3, 3, 1], 'three pages')
  t.same(paged, ids, 'every attempt once, in order')
  const succeeded = await deliveries('?status=SUCCEEDED')
  t.same(succeeded.json.data.attempts.map((x: any) => x.eventId), ['evt_1_1', 'evt_1_3', 'evt_1_5', 'evt_1_7'])
  const failed = await deliveries('?status=FAILED&limit=2')
  t.same(failed.json.data.attempts.map((x: any) => x.eventId), ['evt_1_2', 'evt_1_4'])
  t.equal(failed.json.data.pageInfo.hasNext, true)
  const rest = await deliveries(`?status=FAILED&limit=2&after=${failed.json.data.pageInfo.endCursor}`)
  t.same(rest.json.data.attempts.map((x: any) => x.eventId), ['evt_1_6'])
  t.same(rest.json.data.pageInfo.hasNext, false)
  const beyond = await deliveries(`?after=${'9'.repeat(18)}`)
  t.same(beyond.json.data, { attempts: [], pageInfo: { hasNext: false, endCursor: '9'.repeat(18) } }, 'past the end: empty, the cursor stays')
  t.equal((await deliveries('?limit=1')).json.data.attempts.length, 1)
  t.equal((await deliveries('?limit=100')).json.data.attempts.length, 7)

  for (const query of ['?limit=0', '?limit=101', '?limit=abc', '?limit=-1', '?limit=1.5', '?limit=', '?limit=01', '?limit=1&limit=2',
    '?status=other', '?status=succeeded', '?status=', '?status=PENDING', '?after=-1', '?after=abc', '?after=01', `?after=${'1'.repeat(19)}`,
    '?after=1e3']) {
    const res = await deliveries(query)
    t.equal(res.status, 400, `${query} is a 400`)
    t.match(res.json, { error: true, status: false, statusCode: 400, message: /^Invalid request: querystring/, code: 'BAD_REQUEST' })
  }
})

t.test('another seller\'s endpoint: on every route the same 404 as none at all, and nothing of it changes', async (t) => {
  const m = await webhookMarket(t)
  const mine = await create(t, m, 1, { types: ['order.placed'], description: 'seller 1' })
  const theirs = await create(t, m, 2, { description: 'seller 2' })
  await insertAttempts(m, mine.id, 1, 3)
  const before = await endpointRow(m, mine.id)
  const [events] = await m.database.sql`select count(*)::int as n from seller_events`
  for (const [method, path, body] of ID_ROUTES) {
    const route = `${method} :id${path}`
    const foreign = await m.webhooks(2, method, `/${mine.id}${path}`, body)
    t.same(foreign, { status: 404, json: NOT_FOUND }, `${route}: seller 1's endpoint is not found for seller 2`)
    t.same(await m.webhooks(2, method, `/${mine.id.toUpperCase()}${path}`, body), foreign, `${route}: its id in upper case`)
    t.same(await m.webhooks(2, method, `/${randomUUID()}${path}`, body), foreign, `${route}: the same as a random UUID`)
    t.same(await m.webhooks(2, method, `/not-a-uuid${path}`, body), foreign, `${route}: the same as an id that is no UUID`)
    t.same(await m.webhooks(2, method, `/${mine.id.slice(0, -1)}g${path}`, body), foreign, `${route}: the same as a near-UUID`)
  }
  // Ids Fastify's router refuses before any route runs (app.ts frameworkErrors): the REST 404 of a path
  // that names no route — the same for every seller, so it tells nothing either.
  for (const [method, path, body] of [ID_ROUTES[0], ID_ROUTES[4], ID_ROUTES[7]]) {
    for (const [what, id] of [['an id of 101 characters', 'a'.repeat(101)], ['a bad percent-encoding', '%zz']]) {
      const odd = await m.webhooks(2, method, `/${id}${path}`, body)
      t.equal(odd.status, 404, `${method} :id${path}: 404 for ${what}`)
      t.match(odd.json, { error: true, status: false, statusCode: 404, code: 'NOT_FOUND' }, 'in the REST envelope')
    }
  }
  t.same(await endpointRow(m, mine.id), before, 'seller 1\'s endpoint is unchanged (secret, url, types, status, cursor…)')
  const [queued] = await m.database.sql`select count(*)::int as n from deliveries`
  t.equal(queued.n, 0, 'nothing was queued')
  const [eventsAfter] = await m.database.sql`select count(*)::int as n from seller_events`
  t.equal(eventsAfter.n, events.n, 'no test event was recorded')
  t.same((await m.webhooks(2, 'GET')).json.data.endpoints.map((e: any) => e.id), [theirs.id], 'seller 2 lists its own alone')
  const own = await m.webhooks(1, 'GET', `/${mine.id}/deliveries`)
  t.equal(own.json.data.attempts.length, 3, 'seller 1 still reads its deliveries')
  // And the routes do work for the owner, so the 404s above were not for some other reason.
  t.equal((await m.webhooks(1, 'PATCH', `/${mine.id}`, { description: 'still mine' })).status, 200)
  t.equal((await m.webhooks(1, 'POST', `/${mine.id}/rotate-secret`)).status, 200)
  t.equal((await m.webhooks(1, 'POST', `/${mine.id}/replay`, { after: '0' })).status, 200)
  t.equal((await m.webhooks(1, 'DELETE', `/${mine.id}`)).status, 200)
})

t.test('only the seller\'s API key as a Bearer token opens the routes', async (t) => {
  const m = await webhookMarket(t)
  const endpoint = await create(t, m, 1)
  const before = await endpointRow(m, endpoint.id)
  const apiKey = await m.apiKey(1)
  const credentials: Record<string, Record<string, string>> = {
    'no credential': {},
    'an access token': { authorization: `Bearer ${await m.token(1)}` },
    'the platform key': { authorization: `Bearer ${m.platform}` },
    'the API key in X-Api-Key': { 'x-api-key': apiKey },
    'the API key without Bearer': { authorization: apiKey },
    'Basic with the API key': { authorization: `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}` },
    'a made-up key': { authorization: `Bearer ${apiKey.slice(0, -4)}XXXX` },
    'an empty Bearer': { authorization: 'Bearer ' }
  }
  const routes: Array<[Method, string, unknown?]> = [['POST', '', { url: PUBLIC_URL }], ['GET', ''],
    ...ID_ROUTES.map(([method, path, body]): [Method, string, unknown?] => [method, `/${endpoint.id}${path}`, body])]
  for (const [what, headers] of Object.entries(credentials)) {
    for (const [method, path, body] of routes) {
      const res = await m.app.inject({
        method, url: `${WEBHOOK_ENDPOINTS_PATH}${path}`, headers, ...(body === undefined ? {} : { payload: body as object })
      })
      t.same({ status: res.statusCode, json: res.json() }, { status: 401, json: UNAUTHORIZED }, `${what}: ${method} ${path || '/'} is 401`)
    }
  }
  t.same(await endpointRow(m, endpoint.id), before, 'the endpoint is unchanged')
  t.equal(await countEndpoints(m), 1, 'nothing was created')
})

t.test('the secret at rest: encrypted, bound to its endpoint, the previous one kept for the rotation', async (t) => {
  const m = await webhookMarket(t)
  const a = await create(t, m, 1)
  const b = await create(t, m, 1)
  const box = SecretBox.of(m.config)!
  const row = (await endpointRow(m, a.id))!
  const sealed = row.secret as Buffer
  t.ok(Buffer.isBuffer(sealed), 'bytea')
  const key = Buffer.from(a.secret.slice('whsec_'.length), 'base64')
  t.notOk(sealed.includes(Buffer.from(a.secret)), 'the column holds not the secret text')
  t.notOk(sealed.includes(Buffer.from(a.secret.slice('whsec_'.length))), 'nor its base64')
  t.notOk(sealed.includes(key), 'nor its 32 bytes')
  t.equal(sealed.length, 1 + 12 + 16 + a.secret.length, 'version, IV, tag, ciphertext')
  const [text] = await m.database.sql`select w::text as text, encode(w.secret, 'escape') as escaped from subscriptions w where id = ${a.id}::uuid`
  for (const shown of [text.text, text.escaped] as string[]) {
    t.notOk(shown.includes(a.secret.slice('whsec_'.length)) || shown.includes(key.toString('hex')), 'the row as text shows no secret')
  }
  t.equal(box.open(a.id, sealed), a.secret, 'SecretBox.open recovers it')

  t.throws(() => box.open(b.id, sealed), 'opened for another endpoint id: refused (AAD)')
  await m.database.sql`update subscriptions set secret = ${sealed} where id = ${b.id}::uuid`
  const copied = (await endpointRow(m, b.id))!.secret as Buffer
  t.throws(() => box.open(b.id, copied), 'copied onto another endpoint\'s row: does not open')
  const otherKey = SecretBox.of(loadConfig({ WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64') }))!
  t.throws(() => otherKey.open(a.id, sealed), 'another WEBHOOK_SECRETS_KEY does not open it')
  const tampered = Buffer.from(sealed)
  tampered[tampered.length - 1] ^= 1
  t.throws(() => box.open(a.id, tampered), 'a changed byte does not open')
  t.throws(() => box.open(a.id, sealed.subarray(0, 20)), 'a truncated value does not open')

  const rotated = (await m.webhooks(1, 'POST', `/${a.id}/rotate-secret`)).json.data.secret
  const after = (await endpointRow(m, a.id))!
  t.equal(box.open(a.id, after.secret as Buffer), rotated, 'the new secret, sealed')
  t.equal(box.open(a.id, after.previous_secret as Buffer), a.secret, 'the previous one, still sealed, for the overlap')
  const hours = (new Date(after.previous_secret_until as string).getTime() - Date.now()) / 3_600_000
  t.ok(hours > 23.9 && hours <= 24, `the previous secret signs for 24 hours (${hours.toFixed(3)})`)
  t.notOk((after.secret as Buffer).includes(Buffer.from(rotated)))
})

t.test('no secret in the logs: not of the endpoint, not the API key', async (t) => {
  const { app, database, logs } = await build(t, {}, { captureLogs: true })
  const { sellerId } = await createSeller(database)
  const key = await credential(database, sellerId, 'api-key')
  const call = async (method: Method, path: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { payload: body as object })
    })
    return res.json()
  }
  const created = await call('POST', '', { url: PUBLIC_URL, description: 'logged?' })
  t.equal(created.statusCode, 201)
  const id = created.data.id
  const rotated = await call('POST', `/${id}/rotate-secret`)
  t.equal(rotated.statusCode, 200)
  await call('GET', '')
  await call('PATCH', `/${id}`, { description: 'again' })
  await call('POST', `/${id}/test`)
  await call('GET', `/${id}/deliveries`)
  await call('PATCH', `/${id}`, { url: 'https://127.0.0.1:99999/' })
  await call('POST', `/${randomUUID()}/rotate-secret`)
  const text = logs()
  t.match(text, /webhook endpoint created/, 'the logs were captured')
  t.match(text, new RegExp(id), 'the endpoint id is logged')
  for (const secret of [created.data.secret, rotated.data.secret] as string[]) {
    t.notOk(text.includes(secret.slice('whsec_'.length, 'whsec_'.length + 16)), 'no part of a secret is logged')
  }
  t.notOk(text.includes(key), 'nor the API key')
  t.notMatch(text, /"level":(50|60)/, 'no error was logged')
})

t.test('production without WEBHOOK_SECRETS_KEY: endpoints cannot be made (503 WEBHOOKS_NOT_CONFIGURED)', async (t) => {
  t.equal(SecretBox.of(loadConfig({ ORDER_EXCHANGE_ENV: 'production' })), null, 'production has no box without the key')
  t.ok(SecretBox.of(loadConfig({})) instanceof SecretBox, 'testing has the development key')
  const { app, database } = await build(t, { ORDER_EXCHANGE_ENV: 'production' })
  const { sellerId } = await createSeller(database)
  const live = await credential(database, sellerId, 'api-key', { environment: 'production' })
  const inject = async (key: string, method: Method, path: string, body?: unknown) => {
    const res = await app.inject({
      method,
      url: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { payload: body as object })
    })
    return { status: res.statusCode, json: res.json(), retryAfter: res.headers['retry-after'] }
  }
  const created = await inject(live, 'POST', '', { url: PUBLIC_URL })
  t.same({ status: created.status, json: created.json },
    { status: 503, json: failure(503, 'WEBHOOKS_NOT_CONFIGURED', WebhookText.notConfigured) })
  const [{ n }] = await database.sql`select count(*)::int as n from subscriptions where kind = 'seller-webhook'`
  t.equal(n, 0, 'nothing stored')
  const list = await inject(live, 'GET', '')
  t.same([list.status, list.json.data], [200, { endpoints: [] }], 'listing still answers')
  const testingKey = await credential(database, sellerId, 'api-key')
  t.equal((await inject(testingKey, 'POST', '', { url: PUBLIC_URL })).status, 401, 'a testing key on production: 401')
})

t.test('production with WEBHOOK_SECRETS_KEY: the secret sealed under that key, https to public addresses only', async (t) => {
  const secretsKey = randomBytes(32).toString('base64')
  const { app, database, config } = await build(t, { ORDER_EXCHANGE_ENV: 'production', WEBHOOK_SECRETS_KEY: secretsKey })
  const { sellerId } = await createSeller(database)
  const live = await credential(database, sellerId, 'api-key', { environment: 'production' })
  const post = async (url: string) => {
    const res = await app.inject({ method: 'POST', url: WEBHOOK_ENDPOINTS_PATH, headers: { authorization: `Bearer ${live}` }, payload: { url } })
    return { status: res.statusCode, json: res.json() }
  }
  t.match(await post('http://93.184.216.34/'), { status: 400, json: { code: 'INVALID_WEBHOOK_URL', message: 'url must use https' } })
  t.match(await post('https://127.0.0.1/'), { status: 400, json: { code: 'INVALID_WEBHOOK_URL', message: /loopback/ } })
  const created = await post(PUBLIC_URL)
  t.equal(created.status, 201)
  const [row] = await database.sql`select secret from subscriptions where id = ${created.json.data.id}::uuid`
  t.equal(SecretBox.of(config)!.open(created.json.data.id, row.secret), created.json.data.secret, 'sealed under WEBHOOK_SECRETS_KEY')
  t.throws(() => SecretBox.of(loadConfig({}))!.open(created.json.data.id, row.secret), 'not under the development key')
})

/** Each URL refused at registration with private networks off, and the reason its message must name. */
const PRIVATE_URLS: Array<[string, string | RegExp]> = [
  ['http://93.184.216.34/hook', 'url must use https'],
  ['https://localhost/', /^url host localhost resolves to (127\.0\.0\.1|::1), a loopback address: webhooks cannot be sent to private networks$/],
  ['https://127.0.0.1/', `url host 127.0.0.1 is a loopback address: ${REFUSED}`],
  ['https://127.1.2.3:8443/x', `url host 127.1.2.3 is a loopback address: ${REFUSED}`],
  ['https://[::1]/', `url host ::1 is a loopback address: ${REFUSED}`],
  ['https://169.254.169.254/latest/meta-data/', `url host 169.254.169.254 is a link-local address: ${REFUSED}`],
  ['https://10.0.0.1/', `url host 10.0.0.1 is a private (RFC 1918) address: ${REFUSED}`],
  ['https://192.168.1.1/', `url host 192.168.1.1 is a private (RFC 1918) address: ${REFUSED}`],
  ['https://172.16.0.1/', `url host 172.16.0.1 is a private (RFC 1918) address: ${REFUSED}`],
  ['https://172.31.255.255/', `url host 172.31.255.255 is a private (RFC 1918) address: ${REFUSED}`],
  ['https://100.64.0.1/', `url host 100.64.0.1 is a CGNAT address: ${REFUSED}`],
  ['https://224.0.0.1/', `url host 224.0.0.1 is a multicast address: ${REFUSED}`],
  ['https://0.0.0.0/', `url host 0.0.0.0 is an unspecified address: ${REFUSED}`],
  ['https://[fd00::1]/', `url host fd00::1 is an IPv6 unique local address: ${REFUSED}`],
  ['https://[fe80::1]/', `url host fe80::1 is an IPv6 link-local address: ${REFUSED}`],
  ['https://[::]/', `url host :: is an unspecified address: ${REFUSED}`],
  ['https://255.255.255.255/', `url host 255.255.255.255 is a broadcast address: ${REFUSED}`],
  // The spellings a URL parser turns into the addresses above.
  ['https://2130706433/', `url host 127.0.0.1 is a loopback address: ${REFUSED}`],
  ['https://0x7f.1/', `url host 127.0.0.1 is a loopback address: ${REFUSED}`],
  ['https://[::ffff:127.0.0.1]/', /^url host ::ffff:7f00:1 is a loopback address: /],
  ['https://[::ffff:169.254.169.254]/', /is a link-local address: /],
  ['https://[64:ff9b::a9fe:a9fe]/', /is a link-local address: /],
  ['https://[2002:a00:1::]/', /is a private \(RFC 1918\) address: /],
  ['https://LOCALHOST./', /^url host localhost\. (resolves to .*a loopback address|does not resolve)/],
  ['https://no-such-host.invalid/', 'url host no-such-host.invalid does not resolve']
]

t.test('an empty body with Content-Type: application/json is no body on a route that takes none', async (t) => {
  const m = await webhookMarket(t)
  const endpoint = await create(t, m, 1)
  const send = async (seller: number, method: 'POST' | 'DELETE', path: string, payload?: string) => {
    const res = await m.app.inject({
      method,
      url: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
      headers: { authorization: `Bearer ${await m.apiKey(seller)}`, 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload })
    })
    return { status: res.statusCode, code: res.statusCode < 300 ? null : res.json().code }
  }
  for (const [method, tail] of [['POST', '/test'], ['POST', '/rotate-secret']] as const) {
    t.same(await send(1, method, `/${endpoint.id}${tail}`), { status: 200, code: null }, `${method} ${tail}: done`)
    t.same(await send(1, method, `/${endpoint.id}${tail}`, '  '), { status: 200, code: null }, `${method} ${tail}, blank: done`)
    t.same(await send(2, method, `/${endpoint.id}${tail}`), { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' }, `${method} ${tail}: another seller 404`)
  }
  t.same(await send(2, 'DELETE', `/${endpoint.id}`), { status: 404, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' }, 'DELETE by another seller: 404, not 400')
  t.same(await send(1, 'DELETE', `/${endpoint.id}`), { status: 200, code: null }, 'DELETE: done')
  // A route that takes a body still refuses an empty one, and a body that is not JSON stays invalid.
  t.same(await send(1, 'POST', ''), { status: 400, code: 'INVALID_JSON' }, 'POST (create) with no body: INVALID_JSON')
  t.same(await send(1, 'POST', `/${endpoint.id}/test`, '{'), { status: 400, code: 'INVALID_JSON' }, 'a broken body is still refused')
})

t.test('registration refuses private and non-https URLs when private networks are off (SSRF)', async (t) => {
  const m = await webhookMarket(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })
  const endpoint = await create(t, m, 1)
  const before = await endpointRow(m, endpoint.id)
  for (const [url, reason] of PRIVATE_URLS) {
    for (const [method, path] of [['POST', ''], ['PATCH', `/${endpoint.id}`]] as Array<[Method, string]>) {
      const res = await m.webhooks(1, method, path, { url })
      t.equal(res.status, 400, `${method} ${url}: 400`)
      t.match(res.json, { error: true, status: false, statusCode: 400, code: 'INVALID_WEBHOOK_URL', message: reason }, `${method} ${url}: ${String(reason)}`)
    }
  }
  t.same(await endpointRow(m, endpoint.id), before, 'the endpoint still points where it did')
  t.equal(await countEndpoints(m), 1, 'nothing was created')
  // A public address is accepted, by IPv4 and IPv6 literal.
  t.equal((await m.webhooks(1, 'PATCH', `/${endpoint.id}`, { url: 'https://[2606:4700:4700::1111]/hook' })).status, 200)
  t.equal((await m.webhooks(1, 'POST', '', { url: 'https://8.8.8.8:8443/hook' })).status, 201)
})

t.test('private networks are an explicit opt-in: off by default in every environment, testing included', async (t) => {
  const off = await webhookMarket(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '' })
  t.equal(off.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS, undefined, 'the switch is unset')
  t.equal(off.config.ORDER_EXCHANGE_ENV, 'testing')
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/', 'https://10.0.0.1/', 'https://127.0.0.1:8443/admin']) {
    t.match(await off.webhooks(1, 'POST', '', { url }), { status: 400, json: { code: 'INVALID_WEBHOOK_URL' } }, `unset: ${url} refused`)
  }
  const on = await webhookMarket(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/', 'https://10.0.0.1/']) {
    t.equal((await on.webhooks(1, 'POST', '', { url })).status, 201, `opted in: ${url}`)
  }
  t.match(await on.webhooks(1, 'POST', '', { url: 'ftp://127.0.0.1/' }), { status: 400, json: { code: 'INVALID_WEBHOOK_URL' } })
})
