import t from 'tap'
import fc from 'fast-check'
import { build } from '../helpers/build.js'
import { createSeller, credential, platformKey } from '../helpers/fixtures.js'
import {
  assertDeepBodies, codeUnits, DEEP_OUTCOMES, DEEP_SLOT, fuzzRuns,
  fuzzSeed, hostileString, listen, responseProblem, send,
  type FuzzRequest, type FuzzResponse
} from '../helpers/fuzz.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { forbiddenAddressReason } from '../../src/outbound/address-policy.js'
import { EVENT_TYPES } from '../../src/events/event-types.js'
import { MAX_ENDPOINTS, WebhookText } from '../../src/webhooks/texts.js'

/*
 * The webhook endpoint routes fuzzed over real HTTP from a fixed seed, as two sellers (A and B) and as
 * callers with no or the wrong credential: every route and some that are not, ids of A's, of B's, random,
 * near-UUIDs, huge, percent-encoded and unicode, query strings and bodies of every shape (hostile text,
 * unknown properties, private URLs, invalid JSON, other content types), any method. Every answer is a 2xx
 * or 4xx in the REST envelope, fast, with nothing internal in it; B never reaches A's endpoints (each such
 * request answers as a random UUID does, for a sample of them sent twice); no URL to a private address is
 * stored (private networks are off); and afterwards no seller has more than ten endpoints, A's endpoints
 * that only B aimed at are exactly as they were, and the database holds what the answers said. An answer
 * outside the REST envelope, or a 2xx for a body the schema refuses, fails the run.
 */

type G = fc.GeneratorValue
const pick = <T>(g: G, items: readonly T[]): T => items[g(fc.nat, items.length - 1)]
const coin = (g: G, percent: number): boolean => g(fc.nat, 99) < percent

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const NOT_FOUND = { error: true, status: false, statusCode: 404, message: WebhookText.notFound, code: 'WEBHOOK_ENDPOINT_NOT_FOUND' }
/** Database or driver text that must never reach an answer. */
const SQL_TEXT = /syntax error|violates .*constraint|invalid input (syntax|value)|relation "|column "|Failed query|duplicate key|PostgresError|out of range for type|at character \d/i
/** Framework answers that bypass the service's error handler (not the REST envelope): a known deviation. */
const FRAMEWORK_CODES = new Set(['FST_ERR_MAX_PARAM_LENGTH', 'FST_ERR_BAD_URL'])

const PUBLIC_URLS = ['https://93.184.216.34/hook', 'https://8.8.8.8:8443/x?y=1', 'https://[2606:4700:4700::1111]/']
const PRIVATE_URLS = [
  'https://127.0.0.1/', 'https://10.1.2.3/', 'https://[::1]/', 'https://169.254.169.254/latest', 'http://93.184.216.34/',
  'https://localhost/', 'https://[::ffff:10.0.0.1]/', 'https://0x7f000001/', 'https://no-such-host.invalid/', 'https://[fd12::1]/',
  'https://100.64.1.1/', 'https://224.0.0.251/', 'https://0.0.0.0:443/', 'https://user:pw@93.184.216.34/', 'ftp://93.184.216.34/'
]
const SUFFIXES = ['', '/rotate-secret', '/test', '/deliveries', '/replay'] as const
const RIGHT_METHOD: Record<string, FuzzRequest['method']> = {
  '': 'PATCH', '/rotate-secret': 'POST', '/test': 'POST', '/deliveries': 'GET', '/replay': 'POST'
}
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const

function value (g: G): unknown {
  return g(() => fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString, fc.integer(), fc.constant(null)))
}

function url (g: G): unknown {
  const kind = g(fc.nat, 99)
  if (kind < 35) return pick(g, PUBLIC_URLS)
  if (kind < 60) return pick(g, PRIVATE_URLS)
  if (kind < 75) return `${pick(g, PUBLIC_URLS)}${g(() => fc.oneof(hostileString, codeUnits))}`
  if (kind < 80) return `https://93.184.216.34/${'p'.repeat(g(fc.integer, { min: 1970, max: 2010 }))}`
  if (kind < 85) return `https://${g(() => fc.oneof(fc.domain().map((d) => `${d}.invalid`), fc.ipV4(), fc.ipV6().map((ip) => `[${ip}]`)))}/`
  if (kind < 95) return g(() => hostileString)
  return value(g)
}

function types (g: G): unknown {
  const kind = g(fc.nat, 99)
  if (kind < 55) return g(() => fc.subarray([...EVENT_TYPES], { minLength: 1 }))
  if (kind < 65) return null
  if (kind < 70) return []
  if (kind < 75) return ['order.placed', 'order.placed']
  if (kind < 85) return [...g(() => fc.subarray([...EVENT_TYPES])), g(() => fc.oneof(fc.constantFrom('order.nope', 'ORDER.PLACED', '', '*'), hostileString))]
  return value(g)
}

function description (g: G): unknown {
  const kind = g(fc.nat, 99)
  if (kind < 40) return g(() => fc.string({ maxLength: 60 }))
  if (kind < 75) return g(() => fc.oneof(hostileString, codeUnits))
  if (kind < 85) return 'd'.repeat(g(fc.integer, { min: 495, max: 505 }))
  return value(g)
}

/** An object with some of the fields, sometimes an unknown or prototype-named one. */
function fields (g: G, all: Record<string, (g: G) => unknown>, required: string[] = []): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  for (const [key, make] of Object.entries(all)) {
    if (required.includes(key) ? !coin(g, 5) : coin(g, 45)) body[key] = make(g)
  }
  if (coin(g, 8)) body[pick(g, ['extra', 'secret', 'id', 'sellerId', 'disabledReason', 'constructor', 'prototype'])] = value(g)
  return body
}

function eventId (g: G, sellers: number[]): unknown {
  if (coin(g, 60)) return `evt_${pick(g, sellers)}_${g(fc.integer, { min: 1, max: 12 })}`
  return g(() => fc.oneof(hostileString, fc.constantFrom('evt_1_0', 'evt_1_01', 'evt__1', `evt_1_${'9'.repeat(19)}`, 'evt_99999999999_1'), fc.integer()))
}

function body (g: G, suffix: string, collection: boolean, sellers: number[]): { text?: string, contentType?: string } {
  const kind = g(fc.nat, 99)
  let object: unknown
  if (collection) object = fields(g, { url, types, description }, ['url'])
  else if (suffix === '') object = fields(g, { url, types, description, status: (g) => coin(g, 80) ? pick(g, ['ENABLED', 'DISABLED']) : value(g) })
  else if (suffix === '/replay') {
    object = coin(g, 45)
      ? fields(g, { after: (g) => coin(g, 70) ? String(g(fc.integer, { min: 0, max: 20 })) : value(g) }, ['after'])
      : fields(g, { eventIds: (g) => coin(g, 85) ? Array.from({ length: g(fc.integer, { min: 0, max: 6 }) }, () => eventId(g, sellers)) : value(g) }, ['eventIds'])
    if (coin(g, 8)) (object as Record<string, unknown>).after = '0'
  } else object = coin(g, 70) ? undefined : value(g)
  if (kind < 78) return object === undefined ? {} : { text: JSON.stringify(object), contentType: 'application/json' }
  if (kind < 86) {
    const text = JSON.stringify(object ?? { url: PUBLIC_URLS[0] })
    return { text: text.slice(0, g(fc.nat, text.length)) + pick(g, ['', ',', '}}', ' x', '\u0000']), contentType: 'application/json' }
  }
  if (kind < 90) return { text: JSON.stringify(value(g)), contentType: 'application/json' }
  if (kind < 94) return { text: JSON.stringify(object ?? {}), contentType: pick(g, ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', '']) }
  if (kind < 96) return { text: '', contentType: 'application/json' }
  if (kind < 97) return { text: JSON.stringify({ url: PUBLIC_URLS[0], description: 'x'.repeat(1_100_000) }), contentType: 'application/json' }
  const depth = g(fc.integer, { min: 100, max: 50_000 })
  return { text: `{"url": ${'['.repeat(depth)}${']'.repeat(depth)}}`, contentType: 'application/json' }
}

/** Kept under Node's 16 KB header limit: a longer request line is Node's own 431, before the app. */
function query (g: G): string {
  if (coin(g, 40)) return ''
  const pairs = Array.from({ length: g(fc.integer, { min: 1, max: 4 }) }, () => {
    const key = pick(g, ['status', 'after', 'limit', 'status', 'after', 'limit', 'foo', '__proto__', 'limit[]', 'constructor'])
    const v = coin(g, 60)
      ? pick(g, ['SUCCEEDED', 'FAILED', '0', '1', '50', '100', '101', '0', '-1', 'abc', '', '1e2', '9'.repeat(18), '9'.repeat(19), 'succeeded'])
      : coin(g, 85) ? encodeURIComponent(g(() => hostileString).replace(/[\ud800-\udfff]/g, '').slice(0, 2000)) : pick(g, ['%zz', '%', '%E0%A4%A', '&', '=='])
    return coin(g, 5) ? key : `${key}=${v}`
  })
  return `?${pairs.join('&')}`
}

/** A path segment for an id based on `id` (a real one): itself or a near, encoded or hostile variant. */
function idSegment (g: G, id: string): { segment: string, same: boolean } {
  const kind = g(fc.nat, 99)
  if (kind < 55) return { segment: id, same: true }
  if (kind < 62) return { segment: id.toUpperCase(), same: true }
  if (kind < 68) return { segment: [...id].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join(''), same: true }
  if (kind < 82) {
    const i = g(fc.nat, id.length - 1)
    const near = pick(g, [
      `${id.slice(0, i)}g${id.slice(i + 1)}`, `${id.slice(0, i)}${id.slice(i + 1)}`, `${id}0`, id.replaceAll('-', ''), `{${id}}`,
      `urn:uuid:${id}`, `${id}%20`, `%20${id}`, `${id}%00`, ` ${id}`.replace(' ', '%09'), `${id};x`, `${id}.json`, id.replaceAll('-', '%2D'),
      `${id.slice(0, -1)}\uff10`, `${id.slice(0, -1)}%C2%A0`, `${id}%2F..`, id.replace(/[0-9]/, '\u0660')
    ])
    // Some spellings decode back to the id itself: those are the same endpoint.
    return { segment: near, same: near === id.replaceAll('-', '%2D') }
  }
  return { segment: id, same: true }
}

function otherSegment (g: G): string {
  const kind = g(fc.nat, 99)
  if (kind < 40) return g(fc.uuid)
  if (kind < 55) return pick(g, ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'not-a-uuid', '1', '0', '-1', 'null', 'undefined', '..', '.', '%2e%2e', '%2F', '%00', '%zz', '%', '%E0%A4%A', '%C0%AF'])
  if (kind < 70) return 'a'.repeat(pick(g, [99, 100, 101, 1000, 10_000]))
  if (kind < 85) return encodeURIComponent(g(() => fc.oneof(hostileString, codeUnits)).replace(/[\ud800-\udfff]/g, '').slice(0, 300))
  return pick(g, ['\u0661\u0662\u0663', '０１２３', 'é', '\u200b', '🙂', 'ﬁ']) + g(fc.uuid)
}

const KNOWN_KEYS: Record<string, string[]> = {
  'POST collection': ['url', 'types', 'description'], 'PATCH ': ['url', 'types', 'description', 'status'], 'POST /replay': ['after', 'eventIds']
}

/** What a body the route answered with a 2xx had that its schema refuses (additionalProperties: false), or null. */
function unknownKeys (method: string, collection: boolean, suffix: string, text: string | undefined): string | null {
  const known = KNOWN_KEYS[`${method} ${collection ? 'collection' : suffix}`]
  if (known === undefined || text === undefined) return null
  let body: unknown
  try { body = JSON.parse(text) } catch { return null }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  const keys = Object.keys(body)
  if (keys.some((k) => !known.includes(k))) return 'an unknown property'
  if (suffix === '/replay' && keys.length > 1) return 'both after and eventIds'
  return null
}

/** The text as PostgreSQL stores it: each lone surrogate replaced by U+FFFD. */
function wellFormed (text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
}

function checkEnvelope (res: FuzzResponse): string | null {
  if (res.text === '') return null
  const body = res.json
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'not an object'
  for (const key of ['error', 'status', 'statusCode', 'message']) if (!(key in body)) return `no ${key}`
  if (body.statusCode !== res.status) return `statusCode ${body.statusCode} on a ${res.status}`
  if (body.error !== (res.status >= 400) || body.status !== (res.status < 400)) return 'error/status flags do not match'
  if (res.status >= 400 && typeof body.code !== 'string') return 'an error without a code'
  if (typeof body.message !== 'string' || SQL_TEXT.test(body.message)) return `message ${JSON.stringify(body.message).slice(0, 300)}`
  return null
}

t.test('fuzzed webhook endpoint routes: the envelope, no 5xx, no cross-seller access, at most ten each', async (t) => {
  const { app, database, logs } = await build(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }, { captureLogs: true })
  const a = (await createSeller(database, { name: 'Seller A' })).sellerId
  const b = (await createSeller(database, { name: 'Seller B' })).sellerId
  const keys = new Map([[a, await credential(database, a, 'api-key')], [b, await credential(database, b, 'api-key')]])
  const wrong: Array<Record<string, string>> = [
    {}, { authorization: `Bearer ${await credential(database, a, 'access-token')}` },
    { authorization: `Bearer ${await platformKey(database)}` }, { 'x-api-key': keys.get(a)! }, { authorization: keys.get(a)! },
    { authorization: 'Bearer oxs_test_ak_00000000000000000000000000000000' }, { authorization: 'Bearer' }
  ]
  const base = await listen(app)
  const direct = async (seller: number, method: FuzzRequest['method'], path: string, json?: unknown) => send(base, {
    method,
    path: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
    headers: { authorization: `Bearer ${keys.get(seller)}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json)
  })

  // A's endpoints that only B's requests aim at, with attempts and a disabled one; each seller's live ones.
  const frozen: string[] = []
  for (const [i, extra] of [{}, { types: ['order.placed'] }, { description: 'frozen' }].entries()) {
    const res = await direct(a, 'POST', '', { url: `${PUBLIC_URLS[0]}/${i}`, ...extra })
    frozen.push(res.json.data.id)
  }
  await direct(a, 'PATCH', `/${frozen[2]}`, { status: 'DISABLED' })
  await direct(a, 'POST', `/${frozen[0]}/test`)
  for (const id of frozen) {
    await database.sql`insert into delivery_attempts (subscription_id, delivery_id, seller_id, sequence, type, attempt, succeeded, duration_ms, answer_head)
      values (${id}::uuid, 1, ${a}, 1, 'order.placed', 1, true, 5, 'ok')`
  }
  const live = new Map<number, Set<string>>([[a, new Set()], [b, new Set()]])
  for (let i = 0; i < 2; i++) live.get(b)!.add((await direct(b, 'POST', '', { url: PUBLIC_URLS[1] })).json.data.id)
  // Events in both logs, so that replays find something.
  for (const seller of [a, b]) {
    const id = seller === a ? frozen[0] : [...live.get(b)!][0]
    for (let i = 0; i < (seller === a ? 4 : 5); i++) await direct(seller, 'POST', `/${id}/test`)
  }
  // What B's requests must leave as it is (taken after A's own tests above queued theirs: a test's empty body
  // with Content-Type: application/json is no body, so they are queued).
  const frozenRows = await database.sql`select * from subscriptions where id = any(${frozen}::uuid[]) order by id`
  const cursorsOf = () => database.sql`select subscription_id::text, seller_id, last_sequence::text from subscription_cursors
    where subscription_id = any(${frozen}::uuid[]) order by subscription_id, seller_id`
  const frozenCursors = await cursorsOf()
  const [frozenQueue] = await database.sql`select count(*)::int as n from deliveries where subscription_id = any(${frozen}::uuid[])`
  t.ok(frozenQueue.n >= 5, `A's own tests were queued (${frozenQueue.n as number})`)

  const seen = new Map<string, number>()
  const deviations = new Map<string, number>()
  let crossSeller = 0
  let compared = 0
  let surrogates = 0
  await fc.assert(fc.asyncProperty(fc.gen(), async (g) => {
    // Who calls: A, B, or someone without a valid API key.
    const who = g(fc.nat, 99)
    const seller = who < 45 ? a : who < 85 ? b : null
    const headers: Record<string, string> = seller === null ? { ...pick(g, wrong) } : { authorization: `Bearer ${keys.get(seller)}` }
    if (seller !== null && coin(g, 3)) headers.authorization = headers.authorization.replace('Bearer ', pick(g, ['bearer ', 'BEARER  ', 'Bearer\t']))

    // Where: the collection, or one endpoint (A's frozen ones only from B), with a route suffix.
    let path: string
    let method: FuzzRequest['method']
    let target: { id: string, owner: number, same: boolean } | null = null
    let suffix = ''
    const collection = coin(g, 25)
    if (collection) {
      path = pick(g, ['', '', '', '', '', '', '/', '//', '?x=1'])
      method = coin(g, 85) ? pick(g, ['POST', 'GET']) : pick(g, METHODS)
    } else {
      suffix = coin(g, 95) ? pick(g, SUFFIXES) : pick(g, ['/unknown', '/deliveries/x', '/', '/test/', '/rotate-secret/../test'])
      method = coin(g, 90) ? (RIGHT_METHOD[suffix] ?? 'GET') : pick(g, METHODS)
      if (suffix === '' && method === 'PATCH' && coin(g, 25)) method = 'DELETE'
      const mine = seller === null ? [] : [...live.get(seller)!]
      const choice = g(fc.nat, 99)
      let segment: string
      if (choice < 40 && mine.length > 0) {
        const id = pick(g, mine)
        const s = idSegment(g, id)
        segment = s.segment
        target = s.same ? { id, owner: seller!, same: true } : null
      } else if (choice < 70 && seller !== a) {
        const id = pick(g, [...frozen, ...live.get(a)!])
        const s = idSegment(g, id)
        segment = s.segment
        target = { id, owner: a, same: s.same }
      } else if (choice < 80 && seller === a && live.get(b)!.size > 0) {
        const id = pick(g, [...live.get(b)!])
        const s = idSegment(g, id)
        segment = s.segment
        target = { id, owner: b, same: s.same }
      } else segment = otherSegment(g)
      path = `/${segment}${suffix}${suffix === '/deliveries' || coin(g, 10) ? query(g) : ''}`
    }
    const { text, contentType } = method === 'GET' || method === 'OPTIONS' ? {} : body(g, suffix, collection, [a, b])
    if (contentType !== undefined && contentType !== '') headers['content-type'] = contentType
    const request: FuzzRequest = { method, path: `${WEBHOOK_ENDPOINTS_PATH}${path}`, headers, body: text }
    const res = await send(base, request)
    const shown = () => `${request.method} ${request.path.slice(0, 300)} as ${seller ?? 'nobody'} ${(text ?? '').slice(0, 300)}\n→ ${res.status} ${res.text.slice(0, 300)}`
    const fail = (why: string): never => { throw new Error(`${why}\n${shown()}`) }

    const problem = responseProblem(res)
    if (problem !== null) fail(problem)
    if (res.status < 200 || (res.status >= 300 && res.status < 400)) fail(`status ${res.status}`)
    if (FRAMEWORK_CODES.has(res.json?.code)) {
      deviations.set(`${res.status} ${res.json.code}`, (deviations.get(`${res.status} ${res.json.code}`) ?? 0) + 1)
      if (seller !== null && target !== null && target.owner !== seller) crossSeller++
      return
    }
    const envelope = checkEnvelope(res)
    if (envelope !== null) fail(envelope)
    const label = `${res.status} ${res.json?.code ?? res.json?.message ?? ''}`
    seen.set(label, (seen.get(label) ?? 0) + 1)
    const ok = res.status < 300
    // An OPTIONS preflight (204, no body) answers without calling the route.
    const called = ok && !(method === 'OPTIONS' && res.status === 204 && res.text === '')
    if (called && seller === null) fail('a request without a valid API key succeeded')
    if (res.status === 401 && seller !== null && !/\t|BEARER {2}/.test(headers.authorization)) fail('a valid API key was refused')

    // Another seller's endpoint: never touched, and the answer is the one a random UUID gets.
    if (seller !== null && target !== null && target.owner !== seller) {
      crossSeller++
      if (called) fail('reached another seller\'s endpoint')
      if (res.status === 404 && res.json.code === 'WEBHOOK_ENDPOINT_NOT_FOUND') {
        if (JSON.stringify(res.json) !== JSON.stringify(NOT_FOUND)) fail('a not-found body of its own')
      }
      if (target.same && coin(g, 20)) {
        const segment = path.split(/[/?]/)[1]
        const other = g(fc.uuid)
        const again = await send(base, { ...request, path: request.path.replace(segment, other) })
        compared++
        // A "Route … not found" names the path it was sent: the same but for the id.
        if (again.status !== res.status || again.text.split(other).join(segment) !== res.text) fail(`a random UUID answers otherwise: ${again.status} ${again.text.slice(0, 300)}`)
      }
    }

    if (!called || seller === null) return
    const unknown = unknownKeys(method, collection, suffix, text)
    if (unknown !== null) deviations.set(`2xx with ${unknown}`, (deviations.get(`2xx with ${unknown}`) ?? 0) + 1)
    const data = res.json.data
    const mine = live.get(seller)!
    if (collection && method === 'POST') {
      if (res.status !== 201) fail('a create that is not a 201')
      if (!UUID.test(data.id) || !SECRET.test(data.secret)) fail('a created endpoint without id or secret')
      const sent = JSON.parse(text!)
      if (data.url !== sent.url) {
        // A lone surrogate passes the schema and is stored as U+FFFD (UTF-8 has no such code point): noted below.
        if (data.url !== wellFormed(sent.url)) fail('another url stored than sent')
        surrogates++
      }
      const stored = new URL(data.url)
      const host = stored.hostname.replace(/^\[|\]$/g, '')
      if (stored.protocol !== 'https:') fail('a non-https url stored with private networks off')
      if (forbiddenAddressReason(host) !== 'not an IP address' && forbiddenAddressReason(host) !== null) fail('a private address stored')
      mine.add(data.id)
      if (mine.size + (seller === a ? frozen.length : 0) > MAX_ENDPOINTS) fail('more than ten endpoints')
    } else if (collection && method === 'GET') {
      const ids = data.endpoints.map((e: any) => e.id)
      const expected = [...mine, ...(seller === a ? frozen : [])]
      if (ids.length !== expected.length || !expected.every((id) => ids.includes(id))) fail(`the list is not the seller's: ${ids}`)
      if (JSON.stringify(data).includes('whsec_')) fail('a secret in the list')
    } else if (!collection && method === 'DELETE' && suffix === '') {
      if (!mine.delete(data.id)) fail('deleted an endpoint not among the seller\'s')
    } else if (!collection && target === null && method !== 'OPTIONS' && method !== 'GET') {
      // A success on an id that is not one of the seller's own: only when the segment decodes to one of them.
      if (data?.id !== undefined && !mine.has(data.id)) fail('a success on an unknown id')
    }
  // Never fewer than the full size: at half, the seed no longer reaches a disabled endpoint, nor 300 requests
  // aimed at another seller's endpoints, which the checks below want.
  }), { seed: fuzzSeed(2525), numRuns: fuzzRuns(3000, 3000), endOnFailure: true })

  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`)
  t.comment(`requests at another seller's endpoint: ${crossSeller}, of them sent again with a random UUID: ${compared}`)
  t.comment(`known deviations: ${JSON.stringify(Object.fromEntries(deviations))}`)
  t.comment(`urls stored with a lone surrogate replaced by U+FFFD: ${surrogates}`)
  const successes = [`201 ${WebhookText.created}`, ...[WebhookText.listed, WebhookText.updated, WebhookText.deleted,
    WebhookText.rotated, WebhookText.testQueued, WebhookText.attempts, WebhookText.replayQueued].map((text) => `200 ${text}`)]
  for (const answer of [...successes, '404 WEBHOOK_ENDPOINT_NOT_FOUND', '400 BAD_REQUEST', '400 INVALID_WEBHOOK_URL',
    '400 INVALID_WEBHOOK_REQUEST', '400 INVALID_JSON', '401 UNAUTHENTICATED', '409 TOO_MANY_WEBHOOK_ENDPOINTS', '409 WEBHOOK_ENDPOINT_DISABLED',
    '413 PAYLOAD_TOO_LARGE', '415 UNSUPPORTED_MEDIA_TYPE', '400 EVENT_NOT_FOUND']) {
    t.ok(seen.has(answer), `the fuzz reached ${answer}`)
  }
  t.ok(crossSeller > 300 && compared > 50, 'many requests aimed at another seller\'s endpoints')
  const framework = [...deviations].filter(([k]) => k.includes('FST_ERR'))
  t.same(framework, [], 'every answer is in the REST envelope')
  const accepted = [...deviations].filter(([k]) => k.startsWith('2xx'))
  t.same(accepted, [], 'no body the schema refuses is accepted')

  const counts = await database.sql`select seller_id, count(*)::int as n from subscriptions
    where kind = 'seller-webhook' group by seller_id`
  t.ok(counts.every((c) => c.n <= MAX_ENDPOINTS), `at most ten endpoints per seller: ${JSON.stringify(counts)}`)
  const stored = async (seller: number) => (await database.sql`select id::text as id from subscriptions where seller_id = ${seller}`).map((r) => r.id).sort()
  t.same(await stored(a), [...frozen, ...live.get(a)!].sort(), 'A\'s endpoints are what the answers said')
  t.same(await stored(b), [...live.get(b)!].sort(), 'B\'s endpoints are what the answers said')
  t.same(await database.sql`select * from subscriptions where id = any(${frozen}::uuid[]) order by id`, frozenRows,
    'A\'s endpoints that B aimed at are exactly as they were')
  t.same(await cursorsOf(), frozenCursors, 'and so are their cursors')
  const [queue] = await database.sql`select count(*)::int as n from deliveries where subscription_id = any(${frozen}::uuid[])`
  t.equal(queue.n, frozenQueue.n, 'nothing was queued for them')
  const [attempts] = await database.sql`select count(*)::int as n from delivery_attempts where subscription_id = any(${frozen}::uuid[])`
  t.equal(attempts.n, frozen.length, 'their attempt log is as it was')
  const private_ = (await database.sql`select url from subscriptions where kind = 'seller-webhook'`).filter((r) => {
    const host = new URL(r.url as string).hostname.replace(/^\[|\]$/g, '')
    const reason = forbiddenAddressReason(host)
    return !(r.url as string).startsWith('https:') || (reason !== null && reason !== 'not an IP address')
  })
  t.same(private_, [], 'no stored url is http:// or a private address')
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})

t.test('deep bodies on every webhook endpoint route, with and without Idempotency-Key: 400 JSON_TOO_DEEP past 64 levels, never a 5xx', async (t) => {
  const { app, database, logs } = await build(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' }, { captureLogs: true })
  const { sellerId } = await createSeller(database)
  const headers = { authorization: `Bearer ${await credential(database, sellerId, 'api-key')}` }
  const base = await listen(app)
  const created = await send(base, {
    method: 'POST',
    path: WEBHOOK_ENDPOINTS_PATH,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ url: PUBLIC_URLS[0], types: [EVENT_TYPES[0]] })
  })
  t.equal(created.status, 201, created.text)
  const one = `${WEBHOOK_ENDPOINTS_PATH}/${created.json.data.id as string}`
  const seen = await assertDeepBodies(base, [
    { method: 'POST', path: WEBHOOK_ENDPOINTS_PATH, headers, template: `{"url":"${PUBLIC_URLS[0]}","types":${DEEP_SLOT}}` },
    { method: 'PATCH', path: one, headers, template: `{"description":${DEEP_SLOT}}` },
    { method: 'POST', path: `${one}/replay`, headers, template: `{"after":${DEEP_SLOT}}` },
    { method: 'POST', path: `${one}/test`, headers, template: DEEP_SLOT },
    { method: 'POST', path: `${one}/rotate-secret`, headers, template: DEEP_SLOT }
  ], fuzzSeed(6406))
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(seen))}`)
  for (const outcome of DEEP_OUTCOMES) t.ok(seen.has(outcome), `reached ${outcome}`)
  t.notMatch(logs(), /"level":(50|60)/, 'no error was logged')
})
