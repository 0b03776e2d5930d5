import { once } from 'node:events'
import http from 'node:http'
import net, { type AddressInfo, type LookupFunction, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { checkEndpointUrl, forbiddenAddressReason, type LookupAll, type UrlPolicy } from '../../src/outbound/address-policy.js'
import { createHttpSender, type SendOptions } from '../../src/outbound/http-sender.js'
import { eventually } from '../helpers/eventually.js'
import { fuzzRuns, fuzzSeed, hostileString } from '../helpers/fuzz.js'
import { slowly } from '../helpers/receiver.js'

/*
 * The outbound webhook sender and its address policy, against real HTTP servers on 127.0.0.1. Sends
 * that must reach those servers allow private networks; the SSRF cases do not, and then assert that
 * the server saw no connection at all.
 */

interface Stand {
  url: string
  port: number
  /** Request paths, in the order they arrived. */
  hits: string[]
  /** TCP connections accepted. */
  connections: number
  /** Each accepted connection's remote port, in the order they were accepted. */
  remotePorts: number[]
  /** Resolves once every accepted connection has closed. */
  allClosed: () => Promise<void>
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void

async function startStand (t: Test, handle: Handler = (_req, res) => { res.end('{"ok":true}') }): Promise<Stand> {
  const sockets = new Set<Socket>()
  const stand: Stand = { url: '', port: 0, hits: [], connections: 0, remotePorts: [], allClosed: async () => {} }
  const server = http.createServer((req, res) => {
    stand.hits.push(req.url ?? '')
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')))
  })
  server.on('connection', (socket: Socket) => {
    stand.connections++
    stand.remotePorts.push(socket.remotePort ?? 0)
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  stand.port = (server.address() as AddressInfo).port
  stand.url = `http://127.0.0.1:${stand.port}`
  stand.allClosed = async () => {
    await Promise.all([...sockets].map((s) => new Promise((resolve) => s.destroyed ? resolve(null) : s.once('close', resolve))))
  }
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return stand
}

function sender (t: Test): ReturnType<typeof createHttpSender> {
  const s = createHttpSender()
  t.teardown(() => s.close())
  return s
}

const LOCAL: SendOptions = { allowPrivateNetworks: true, timeoutMs: 5000, maxAnswerBytes: 65536 }
const GUARDED: SendOptions = { ...LOCAL, allowPrivateNetworks: false }
const BODY = '{"type":"order.placed"}'

/** A fake resolver in node's dns.lookup shape: `table` maps a host name to its addresses. */
function fakeLookup (table: Record<string, string[]>): LookupFunction & { calls: string[] } {
  const calls: string[] = []
  const lookup = (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void): void => {
    calls.push(hostname)
    const addresses = (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    setImmediate(() => {
      if (addresses.length === 0) callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }))
      else if (options.all === true) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
  }
  return Object.assign(lookup as LookupFunction, { calls })
}

/**
 * How many connections `stand` had accepted before now: a probe connection is made and waited for, and a
 * server accepts connections in the order they were made, so whatever a send opened before it is counted.
 */
async function connectionsBefore (t: Test, stand: Stand): Promise<number> {
  const probe = net.connect(stand.port, '127.0.0.1')
  await once(probe, 'connect')
  const port = probe.localPort
  await eventually(t, 'the probe connection accepted', () => stand.remotePorts.includes(port ?? -1))
  probe.destroy()
  return stand.remotePorts.indexOf(port ?? -1)
}

// --- forbiddenAddressReason -------------------------------------------------------------------------

/** Each forbidden range by its first and last address, with the reason a seller would read. */
const FORBIDDEN: Array<[string, string]> = [
  ['0.0.0.0', 'unspecified'], ['0.255.255.255', 'unspecified'],
  ['10.0.0.0', 'private (RFC 1918)'], ['10.255.255.255', 'private (RFC 1918)'],
  ['100.64.0.0', 'CGNAT'], ['100.127.255.255', 'CGNAT'],
  ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
  ['169.254.0.0', 'link-local'], ['169.254.169.254', 'link-local'], ['169.254.255.255', 'link-local'],
  ['172.16.0.0', 'private (RFC 1918)'], ['172.31.255.255', 'private (RFC 1918)'],
  ['192.168.0.0', 'private (RFC 1918)'], ['192.168.255.255', 'private (RFC 1918)'],
  ['192.0.0.0', 'reserved'], ['192.0.0.255', 'reserved'],
  ['198.18.0.0', 'reserved'], ['198.19.255.255', 'reserved'],
  ['224.0.0.0', 'multicast'], ['239.255.255.255', 'multicast'],
  ['240.0.0.0', 'reserved'], ['255.255.255.254', 'reserved'], ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'], ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::', 'IPv6 unique local'], ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'IPv6 unique local'],
  ['fe80::', 'IPv6 link-local'], ['febf:ffff::1', 'IPv6 link-local'], ['fe80::1%eth0', 'IPv6 link-local'],
  ['FE80::ABCD', 'IPv6 link-local'], ['fec0::1', 'IPv6 site-local'], ['feff::1', 'IPv6 site-local'],
  ['ff00::', 'multicast'], ['ff02::1', 'multicast'], ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  // IPv6 forms carrying an IPv4: judged by that IPv4.
  ['::ffff:127.0.0.1', 'loopback'], ['::ffff:7f00:1', 'loopback'], ['::FFFF:169.254.169.254', 'link-local'],
  ['::ffff:0:10.1.2.3', 'private (RFC 1918)'],
  ['::127.0.0.1', 'loopback'], ['::10.0.0.1', 'private (RFC 1918)'], ['::2', 'unspecified'],
  ['64:ff9b::127.0.0.1', 'loopback'], ['64:ff9b::a9fe:a9fe', 'link-local'],
  ['2002:7f00:1::', 'loopback'], ['2002:c0a8:0101::1', 'private (RFC 1918)'], ['2002:a9fe:a9fe:1:2:3:4:5', 'link-local']
]

/** Public addresses, many of them one step outside a forbidden range. */
const ALLOWED = [
  '8.8.8.8', '1.1.1.1', '1.0.0.0', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255',
  '128.0.0.0', '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0',
  '192.0.1.0', '191.255.255.255', '198.17.255.255', '198.20.0.0', '223.255.255.255',
  '2606:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '::808:808',
  'fbff:ffff::1', 'fe00::1', 'fe7f:ffff::1'
]

t.test('forbiddenAddressReason names every forbidden range and allows public addresses', async (t) => {
  for (const [ip, reason] of FORBIDDEN) t.equal(forbiddenAddressReason(ip), reason, ip)
  for (const ip of ALLOWED) t.equal(forbiddenAddressReason(ip), null, ip)
  for (const text of ['', 'localhost', '127.1', '0x7f000001', '2130706433', '[::1]', '1.2.3.4.5', '::g', '01.2.3.4', ' 8.8.8.8']) {
    t.equal(forbiddenAddressReason(text), 'not an IP address', JSON.stringify(text))
  }
})

// --- checkEndpointUrl -------------------------------------------------------------------------------

const STRICT: UrlPolicy = { allowPrivateNetworks: false, requireHttps: true, lookup: async () => [{ address: '93.184.216.34', family: 4 }] }

t.test('checkEndpointUrl: syntax, scheme and credentials', async (t) => {
  t.equal(await checkEndpointUrl('https://hooks.example.com/orders?x=1', STRICT), null)
  for (const raw of ['', 'hooks.example.com/orders', '/orders', 'ftp://hooks.example.com/', 'javascript:alert(1)', 'https://', 'http//x']) {
    t.equal(await checkEndpointUrl(raw, STRICT), 'url must be an absolute http(s) URL', JSON.stringify(raw))
  }
  t.equal(await checkEndpointUrl('http://hooks.example.com/', STRICT), 'url must use https')
  t.equal(await checkEndpointUrl('http://hooks.example.com/', { ...STRICT, requireHttps: false }), null)
  t.equal(await checkEndpointUrl('https://user:secret@hooks.example.com/', STRICT), 'url must not carry credentials (user:password@)')
  t.equal(await checkEndpointUrl('https://user@hooks.example.com/', STRICT), 'url must not carry credentials (user:password@)')

  const base = 'https://hooks.example.com/'
  const exactly = base + 'a'.repeat(2000 - base.length)
  t.equal(await checkEndpointUrl(exactly, STRICT), null, '2,000 characters is fine')
  t.equal(await checkEndpointUrl(exactly + 'a', STRICT), 'url must be at most 2,000 characters')
})

t.test('checkEndpointUrl: private networks are refused unless allowed', async (t) => {
  t.equal(await checkEndpointUrl('https://localhost/hook', STRICT), null, 'an injected lookup is used for every name')
  const real: UrlPolicy = { allowPrivateNetworks: false, requireHttps: true }
  t.match(await checkEndpointUrl('https://localhost/hook', real),
    /^url host localhost resolves to (127\.0\.0\.1|::1), a loopback address: webhooks cannot be sent to private networks$/)

  const injected: UrlPolicy = { ...real, lookup: async (host) => host === 'internal.example.com' ? [{ address: '127.0.0.1', family: 4 }] : [] }
  t.equal(await checkEndpointUrl('https://internal.example.com/hook', injected),
    'url host internal.example.com resolves to 127.0.0.1, a loopback address: webhooks cannot be sent to private networks')
  t.equal(await checkEndpointUrl('https://nowhere.example.com/hook', injected), 'url host nowhere.example.com does not resolve')
  const failing: LookupAll = async (host) => { throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }) }
  t.equal(await checkEndpointUrl('https://nowhere.example.com/hook', { ...real, lookup: failing }), 'url host nowhere.example.com does not resolve')

  // Every address must be allowed: the sender may connect to any of them.
  const mixed: UrlPolicy = { ...real, lookup: async () => [{ address: '93.184.216.34', family: 4 }, { address: 'fd12::1', family: 6 }] }
  t.equal(await checkEndpointUrl('https://mixed.example.com/', mixed),
    'url host mixed.example.com resolves to fd12::1, an IPv6 unique local address: webhooks cannot be sent to private networks')

  // IP literals, however the URL spells them, are judged without a lookup.
  const noLookup: UrlPolicy = { ...real, lookup: async () => { throw new Error('no lookup for a literal') } }
  t.equal(await checkEndpointUrl('https://169.254.169.254/latest/meta-data/', noLookup),
    'url host 169.254.169.254 is a link-local address: webhooks cannot be sent to private networks')
  t.equal(await checkEndpointUrl('https://[::1]:8443/', noLookup), 'url host ::1 is a loopback address: webhooks cannot be sent to private networks')
  t.equal(await checkEndpointUrl('https://0x7f.1/', noLookup), 'url host 127.0.0.1 is a loopback address: webhooks cannot be sent to private networks')
  t.equal(await checkEndpointUrl('https://[::ffff:a00:1]/', noLookup),
    'url host ::ffff:a00:1 is a private (RFC 1918) address: webhooks cannot be sent to private networks')
  t.equal(await checkEndpointUrl('https://8.8.8.8/', noLookup), null)

  // Allowed private networks: only the syntax and scheme checks apply.
  const dev: UrlPolicy = { allowPrivateNetworks: true, requireHttps: false, lookup: failing }
  t.equal(await checkEndpointUrl('http://127.0.0.1:3000/hook', dev), null)
  t.equal(await checkEndpointUrl('http://nowhere.example.com/hook', dev), null)
  t.equal(await checkEndpointUrl('http://u:p@127.0.0.1/', dev), 'url must not carry credentials (user:password@)')
})

// --- send: answers ----------------------------------------------------------------------------------

t.test('a 2xx is delivered; the request is a POST with the headers and body given', async (t) => {
  let seen: { method?: string, headers?: http.IncomingHttpHeaders, body?: string } = {}
  const stand = await startStand(t, (req, res, body) => {
    seen = { method: req.method, headers: req.headers, body }
    res.writeHead(202, { 'content-type': 'application/json' }).end('{"received":true}')
  })
  const result = await sender(t).send(`${stand.url}/hooks/orders?seller=7`, { 'webhook-id': 'msg_1' }, BODY, LOCAL)
  t.match(result, { delivered: true, status: 202, error: null, answerHead: '{"received":true}', retryAfterMs: null })
  t.ok(result.durationMs >= 0 && result.durationMs < 5000)
  t.same(stand.hits, ['/hooks/orders?seller=7'])
  t.equal(seen.method, 'POST')
  t.equal(seen.body, BODY)
  t.equal(seen.headers?.['webhook-id'], 'msg_1')
  t.equal(seen.headers?.['content-type'], 'application/json', 'JSON unless the caller says otherwise')
  t.equal(seen.headers?.['content-length'], String(Buffer.byteLength(BODY)))

  const other = await sender(t).send(stand.url, { 'Content-Type': 'text/plain', 'Content-Length': '1' }, 'héllo', LOCAL)
  t.equal(other.delivered, true)
  t.equal(seen.headers?.['content-type'], 'text/plain')
  t.equal(seen.body, 'héllo', "the caller's content-length is replaced by the body's")
})

t.test('a 5xx or 4xx is not delivered: the status is the error', async (t) => {
  const stand = await startStand(t, (req, res) => res.writeHead(req.url === '/gone' ? 410 : 500).end('{"error":"boom"}'))
  const s = sender(t)
  t.match(await s.send(stand.url, {}, BODY, LOCAL), { delivered: false, status: 500, error: 'HTTP 500', answerHead: '{"error":"boom"}', retryAfterMs: null })
  t.match(await s.send(`${stand.url}/gone`, {}, BODY, LOCAL), { delivered: false, status: 410, error: 'HTTP 410' })
})

t.test('a redirect is a failure and is never followed', async (t) => {
  const target = await startStand(t)
  const stand = await startStand(t, (req, res) => {
    const location = req.url === '/metadata' ? 'http://169.254.169.254/latest/meta-data/' : `${target.url}/elsewhere`
    res.writeHead(req.url === '/moved' ? 308 : 302, { location }).end()
  })
  const s = sender(t)
  t.match(await s.send(`${stand.url}/metadata`, {}, BODY, { ...LOCAL, timeoutMs: 2000 }),
    { delivered: false, status: 302, error: 'redirect (302) not followed' })
  t.match(await s.send(`${stand.url}/found`, {}, BODY, LOCAL), { delivered: false, status: 302, error: 'redirect (302) not followed' })
  t.match(await s.send(`${stand.url}/moved`, {}, BODY, LOCAL), { delivered: false, status: 308, error: 'redirect (308) not followed' })
  t.equal(await connectionsBefore(t, target), 0, 'the Location was never contacted')
  t.same(target.hits, [])
})

t.test('Retry-After on a 429 or 503, in seconds or as an HTTP-date, clamped to a day', async (t) => {
  const answers: Record<string, [number, string]> = {
    '/seconds': [429, '120'],
    '/date': [429, new Date(Date.now() + 90_000).toUTCString()],
    '/unavailable': [503, '5'],
    '/huge': [429, '99999999999'],
    '/past': [503, 'Thu, 01 Jan 1970 00:00:00 GMT'],
    '/garbage': [429, 'soon'],
    '/year-looking': [429, '12 apples'],
    '/server-error': [500, '30']
  }
  const stand = await startStand(t, (req, res) => {
    const [status, retryAfter] = answers[req.url ?? '']
    res.writeHead(status, { 'retry-after': retryAfter }).end()
  })
  const s = sender(t)
  const retryAfterMs = async (path: string): Promise<number | null> => (await s.send(`${stand.url}${path}`, {}, BODY, LOCAL)).retryAfterMs
  t.equal(await retryAfterMs('/seconds'), 120_000)
  const fromDate = await retryAfterMs('/date')
  t.ok(fromDate !== null && fromDate > 85_000 && fromDate <= 90_000, `an HTTP-date 90 s ahead: ${fromDate}`)
  t.equal(await retryAfterMs('/unavailable'), 5000)
  t.equal(await retryAfterMs('/huge'), 24 * 60 * 60 * 1000)
  t.equal(await retryAfterMs('/past'), 0)
  t.equal(await retryAfterMs('/garbage'), null)
  t.equal(await retryAfterMs('/year-looking'), null)
  t.equal(await retryAfterMs('/server-error'), null, 'only on 429 and 503')
  t.match(await s.send(`${stand.url}/seconds`, {}, BODY, LOCAL), { delivered: false, status: 429, error: 'HTTP 429' })
})

t.test('a receiver that never answers times out at the deadline', async (t) => {
  const stand = await startStand(t, () => {})
  const result = await sender(t).send(stand.url, {}, BODY, { ...LOCAL, timeoutMs: 200 })
  t.match(result, { delivered: false, status: null, error: 'timed out after 200 ms', answerHead: '' })
  t.ok(result.durationMs >= 190 && result.durationMs < 2000, `${result.durationMs} ms`)
  await stand.allClosed()
  t.pass('the connection was dropped')
})

t.test('the deadline covers the answer: a 2xx whose body never ends is not delivered', async (t) => {
  const stand = await startStand(t, (_req, res) => { res.writeHead(200, { 'content-length': '100' }); res.write('{"ok":') })
  const result = await sender(t).send(stand.url, {}, BODY, { ...LOCAL, timeoutMs: 200 })
  t.match(result, { delivered: false, status: 200, error: 'timed out after 200 ms' })
})

t.test('a connection dropped mid-answer is not delivered, even after a 2xx status line', async (t) => {
  const stand = await startStand(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '1000' })
    // Dropped once the partial answer has left: the status line and a first chunk are on their way.
    res.write('{"partial":', () => res.socket?.destroy())
  })
  t.match(await sender(t).send(stand.url, {}, BODY, LOCAL), { delivered: false, status: 200, error: 'connection dropped mid-answer' })
})

t.test('a connection closed before any answer, and a refused connection', async (t) => {
  const stand = await startStand(t, (req) => req.socket.destroy())
  const s = sender(t)
  t.match(await s.send(stand.url, {}, BODY, LOCAL),
    { delivered: false, status: null, error: /^connection (closed before an answer|reset by peer)$/ })
  t.equal(stand.hits.length, 1, 'a new connection is not retried')

  const closed = http.createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const { port } = closed.address() as AddressInfo
  await new Promise((resolve) => closed.close(resolve))
  t.match(await s.send(`http://127.0.0.1:${port}/`, {}, BODY, LOCAL), { delivered: false, status: null, error: 'connection refused' })
})

t.test('an answer larger than maxAnswerBytes is cut: a 2xx is still delivered, the connection dropped', async (t) => {
  let sent = 0
  const stand = await startStand(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    // An endless answer: the sender must stop reading rather than wait for the deadline.
    const chunk = Buffer.alloc(16 * 1024, 'a')
    const more = (): void => {
      if (res.destroyed || res.socket === null) return
      sent += chunk.length
      if (res.write(chunk)) setImmediate(more)
      else res.once('drain', more)
    }
    more()
  })
  const result = await sender(t).send(stand.url, {}, BODY, { ...LOCAL, timeoutMs: 5000, maxAnswerBytes: 65536 })
  t.match(result, { delivered: true, status: 200, error: null })
  t.equal(result.answerHead, 'a'.repeat(1024), 'the first 1,024 bytes')
  t.ok(result.durationMs < 3000, `returned without waiting for the deadline (${result.durationMs} ms)`)
  await stand.allClosed()
  t.ok(sent > 65536, `the server had sent ${sent} bytes when the connection was dropped`)

  const failing = await startStand(t, (_req, res) => res.writeHead(500).end(Buffer.alloc(200_000, 'e')))
  t.match(await sender(t).send(failing.url, {}, BODY, { ...LOCAL, maxAnswerBytes: 1000 }), { delivered: false, status: 500, error: 'HTTP 500' })

  // A multi-byte character split by the 1,024-byte cut is left out rather than garbled.
  const euros = await startStand(t, (_req, res) => res.end('€'.repeat(500)))
  const head = (await sender(t).send(euros.url, {}, BODY, LOCAL)).answerHead
  t.equal(head, '€'.repeat(341))
  t.ok(Buffer.byteLength(head) <= 1024)
})

// --- send: SSRF -------------------------------------------------------------------------------------

t.test('an IP literal in a forbidden range is refused without connecting', async (t) => {
  const stand = await startStand(t)
  const s = sender(t)
  t.match(await s.send(`${stand.url}/hook`, {}, BODY, GUARDED),
    { delivered: false, status: null, error: 'address 127.0.0.1 is not allowed (loopback)' })
  t.match(await s.send(`http://0x7f.1:${stand.port}/hook`, {}, BODY, GUARDED), { error: 'address 127.0.0.1 is not allowed (loopback)' })
  t.match(await s.send('http://[::1]/', {}, BODY, GUARDED), { error: 'address ::1 is not allowed (loopback)' })
  t.match(await s.send('http://169.254.169.254/latest/meta-data/', {}, BODY, GUARDED),
    { error: 'address 169.254.169.254 is not allowed (link-local)' })
  t.match(await s.send('http://[::ffff:10.0.0.1]/', {}, BODY, GUARDED), { error: 'address ::ffff:a00:1 is not allowed (private (RFC 1918))' })
  t.equal(await connectionsBefore(t, stand), 0, 'no connection reached the server')
})

t.test('DNS rebinding: a name that resolves to a forbidden address is refused at connect time', async (t) => {
  const stand = await startStand(t)
  const s = sender(t)
  const lookup = fakeLookup({
    'rebind.example.com': ['127.0.0.1'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.7'],
    'six.example.com': ['fe80::1']
  })
  t.match(await s.send(`http://rebind.example.com:${stand.port}/hook`, {}, BODY, { ...GUARDED, lookup }),
    { delivered: false, status: null, error: 'address 127.0.0.1 is not allowed (loopback)' })
  t.match(await s.send(`http://mixed.example.com:${stand.port}/hook`, {}, BODY, { ...GUARDED, lookup }),
    { error: 'address 10.0.0.7 is not allowed (private (RFC 1918))' }, 'every address must be allowed')
  t.match(await s.send(`http://six.example.com:${stand.port}/hook`, {}, BODY, { ...GUARDED, lookup }),
    { error: 'address fe80::1 is not allowed (IPv6 link-local)' })
  t.match(await s.send(`http://nowhere.example.com:${stand.port}/hook`, {}, BODY, { ...GUARDED, lookup }),
    { error: 'host does not resolve' })
  t.same(lookup.calls, ['rebind.example.com', 'mixed.example.com', 'six.example.com', 'nowhere.example.com'], 'the injected lookup was asked')
  t.equal(await connectionsBefore(t, stand), 0, 'no connection reached the server')

  // The same made-up name with private networks allowed does connect: the lookup decides where.
  t.match(await s.send(`http://rebind.example.com:${stand.port}/hook`, {}, BODY, { ...LOCAL, lookup }), { delivered: true, status: 200 })
  t.equal(stand.hits.length, 1)
})

t.test('a connection pooled by a send that allowed private networks is never reused by a guarded send', async (t) => {
  const stand = await startStand(t)
  const s = sender(t)
  const url = `http://app.example.com:${stand.port}/`
  // Opened while private networks were allowed, then kept alive in the pool under the name app.example.com.
  const table: Record<string, string[]> = { 'app.example.com': ['127.0.0.1'] }
  const lookup = fakeLookup(table)
  t.match(await s.send(url, {}, BODY, { ...LOCAL, lookup }), { delivered: true })
  // Now the name looks public (192.0.2.1, TEST-NET-1: allowed by the policy, answers nothing here). A guarded
  // send resolves it again through the guard rather than riding the pooled connection to 127.0.0.1.
  table['app.example.com'] = ['192.0.2.1']
  t.match(await s.send(url, {}, BODY, { ...GUARDED, lookup, timeoutMs: 500 }), { delivered: false, status: null })
  t.same(lookup.calls, ['app.example.com', 'app.example.com'], 'looked up again: the pooled connection was not reused')
  // Re-pointed at 127.0.0.1 again: refused at connect time.
  table['app.example.com'] = ['127.0.0.1']
  t.match(await s.send(url, {}, BODY, { ...GUARDED, lookup }), { delivered: false, error: 'address 127.0.0.1 is not allowed (loopback)' })
  t.equal(await connectionsBefore(t, stand), 1, 'one connection: the first send\'s')
  t.equal(stand.hits.length, 1, 'the guarded sends never reached the server')
})

// --- send: the worker stopping, connections ---------------------------------------------------------

t.test('stop abandons an in-flight request at once', async (t) => {
  const stand = await startStand(t, () => {})
  const s = sender(t)
  const stop = new AbortController()
  const pending = s.send(stand.url, {}, BODY, { ...LOCAL, timeoutMs: 10_000, stop: stop.signal })
  await eventually(t, 'the request at the server', () => stand.hits.length > 0, { intervalMs: 5 })
  stop.abort()
  const result = await pending
  t.match(result, { delivered: false, status: null, error: 'abandoned: the worker is stopping' })
  t.ok(result.durationMs < 2000, `${result.durationMs} ms`)
  await stand.allClosed()

  t.match(await s.send(stand.url, {}, BODY, { ...LOCAL, stop: stop.signal }), { error: 'abandoned: the worker is stopping' })
  t.equal(stand.hits.length, 1, 'an already stopped worker sends nothing')
})

t.test('keep-alive: sends to the same endpoint share one connection; close() ends the sender', async (t) => {
  const stand = await startStand(t)
  const s = createHttpSender()
  for (let i = 0; i < 3; i++) t.match(await s.send(`${stand.url}/hook`, {}, BODY, LOCAL), { delivered: true })
  t.equal(stand.hits.length, 3)
  t.equal(stand.connections, 1, 'one connection for three sends')
  s.close()
  await stand.allClosed()
  t.match(await s.send(`${stand.url}/hook`, {}, BODY, LOCAL), { delivered: false, error: 'the sender is closed' })
  t.equal(stand.hits.length, 3)
})

t.test('a pooled connection the server dropped while idle is retried once on a new one', async (t) => {
  const perSocket = new WeakMap<Socket, number>()
  const stand = await startStand(t, (req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1
    perSocket.set(req.socket, n)
    // The race a keep-alive client meets: the server closes the idle connection as the next request arrives.
    if (n === 2) req.socket.destroy()
    else res.end('{"ok":true}')
  })
  const s = sender(t)
  t.match(await s.send(stand.url, {}, BODY, LOCAL), { delivered: true })
  t.match(await s.send(stand.url, {}, BODY, LOCAL), { delivered: true, status: 200, error: null })
  t.equal(stand.connections, 2)
  t.equal(stand.hits.length, 3)
})

t.test('an answer slower than the idle-connection timeout is still waited for', async (t) => {
  const stand = await startStand(t, (_req, res) => { slowly(4500).then(() => res.end('{"ok":true}'), () => {}) })
  t.match(await sender(t).send(stand.url, {}, BODY, { ...LOCAL, timeoutMs: 8000 }), { delivered: true, status: 200 })
})

t.test('nothing throws: bad URLs, bad headers, TLS to a plain HTTP server', async (t) => {
  const stand = await startStand(t)
  const s = sender(t)
  t.match(await s.send('not a url', {}, BODY, LOCAL), { delivered: false, error: 'invalid url' })
  t.match(await s.send('ftp://127.0.0.1/', {}, BODY, LOCAL), { delivered: false, error: 'url is not http(s)' })
  t.match(await s.send(stand.url, { 'x-bad': 'a\r\nInjected: 1' }, BODY, LOCAL), { delivered: false, error: /^request not sent: / })
  t.match(await s.send(stand.url, { 'bad name': 'x' }, BODY, LOCAL), { delivered: false, error: /^request not sent: / })
  t.match(await s.send(stand.url.replace('http:', 'https:'), {}, BODY, LOCAL), { delivered: false, status: null, error: /^TLS failed \(/ })
  t.equal(stand.hits.length, 0)
})

// --- fuzz -------------------------------------------------------------------------------------------

/** The forbidden IPv4 ranges written out again as numbers, independent of the BlockLists. */
const V4_RANGES: Array<[number, number, string]> = ([
  ['0.0.0.0', 8, 'unspecified'], ['10.0.0.0', 8, 'private (RFC 1918)'], ['100.64.0.0', 10, 'CGNAT'],
  ['127.0.0.0', 8, 'loopback'], ['169.254.0.0', 16, 'link-local'], ['172.16.0.0', 12, 'private (RFC 1918)'],
  ['192.168.0.0', 16, 'private (RFC 1918)'], ['192.0.0.0', 24, 'reserved'], ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'], ['255.255.255.255', 32, 'broadcast'], ['240.0.0.0', 4, 'reserved']
] as Array<[string, number, string]>).map(([base, bits, reason]) => {
  const start = v4Number(base)
  return [start, start + 2 ** (32 - bits) - 1, reason]
})

function v4Number (ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0)
}

function v4Text (n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.')
}

function expectedV4Reason (ip: string): string | null {
  const n = v4Number(ip)
  return V4_RANGES.find(([start, end]) => n >= start && n <= end)?.[2] ?? null
}

const hex = (n: number): string => n.toString(16)

/** Random IPv4s, weighted towards the edges of the forbidden ranges where an off-by-one would show. */
const ipv4 = fc.oneof(
  fc.ipV4(),
  fc.tuple(fc.constantFrom(...V4_RANGES.flatMap(([start, end]) => [start, end + 1])), fc.integer({ min: -3, max: 3 }))
    .map(([edge, delta]) => v4Text(Math.min(Math.max(edge + delta, 0), 2 ** 32 - 1)))
)

t.test('fuzz: random IPv4s agree with an independent range check, in every IPv6 form that embeds them', async (t) => {
  let checked = 0
  fc.assert(fc.property(ipv4, (ip) => {
    const expected = expectedV4Reason(ip)
    const n = v4Number(ip)
    const hi = hex(n >>> 16)
    const lo = hex(n & 0xffff)
    const forms = [ip, `::ffff:${ip}`, `::ffff:${hi}:${lo}`, `64:ff9b::${ip}`, `2002:${hi}:${lo}::1`, `::ffff:0:${ip}`]
    // ::0.0.0.1 is ::1, the IPv6 loopback, whatever the IPv4 reading would say.
    if (n > 1) forms.push(`::${ip}`)
    for (const form of forms) {
      const actual = forbiddenAddressReason(form)
      if (actual !== expected) throw new Error(`${form}: ${actual} but the range table says ${expected}`)
    }
    checked++
  }), { seed: fuzzSeed(2501), numRuns: fuzzRuns(5000) })
  t.ok(checked >= 1, `${checked} addresses`)
})

t.test('fuzz: random text and URLs never make the policy throw', async (t) => {
  const policies: UrlPolicy[] = [
    STRICT,
    { allowPrivateNetworks: true, requireHttps: false },
    {
      allowPrivateNetworks: false,
      requireHttps: false,
      // A resolver with every kind of answer, chosen by the name: public, private, nothing, failure, nonsense.
      lookup: async (host) => {
        switch (host.length % 5) {
          case 0: return [{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1111', family: 6 }]
          case 1: return [{ address: '93.184.216.34', family: 4 }, { address: '192.168.1.1', family: 4 }]
          case 2: return []
          case 3: throw new Error('EAI_AGAIN')
          default: return [{ address: 'not-an-address', family: 4 }]
        }
      }
    }
  ]
  const url = fc.oneof(
    hostileString,
    fc.webUrl({ withQueryParameters: true, withFragments: true, validSchemes: ['http', 'https', 'ftp'] }),
    fc.tuple(fc.constantFrom('http://', 'https://', 'https://u:p@', 'HTTPS://', 'http:/'), fc.oneof(fc.ipV4(), fc.ipV4Extended(),
      fc.ipV6().map((ip) => `[${ip}]`), fc.domain(), hostileString), fc.constantFrom('', ':443', ':0', ':99999', '/x?y#z'))
      .map((parts) => parts.join(''))
  )
  let refused = 0
  await fc.assert(fc.asyncProperty(url, fc.constantFrom(...policies.keys()), async (raw, which) => {
    const policy = policies[which]
    const message = await checkEndpointUrl(raw, policy)
    if (message === null) {
      const parsed = new URL(raw)
      if (raw.length > 2000 || !['http:', 'https:'].includes(parsed.protocol) || parsed.username !== '') {
        throw new Error(`accepted ${JSON.stringify(raw)}`)
      }
      if (policy.requireHttps && parsed.protocol !== 'https:') throw new Error(`accepted plain http ${raw}`)
      const host = parsed.hostname.replace(/^\[|\]$/g, '')
      if (!policy.allowPrivateNetworks && forbiddenAddressReason(host) !== null && forbiddenAddressReason(host) !== 'not an IP address') {
        throw new Error(`accepted a forbidden literal ${raw}`)
      }
    } else {
      refused++
      if (typeof message !== 'string' || !message.startsWith('url ')) throw new Error(`odd message ${JSON.stringify(message)}`)
    }
    const reason = forbiddenAddressReason(raw)
    if (reason !== null && typeof reason !== 'string') throw new Error('odd reason')
  }), { seed: fuzzSeed(2502), numRuns: fuzzRuns(4000) })
  t.ok(refused > 0, `${refused} refused`)

  fc.assert(fc.property(fc.oneof(hostileString, fc.ipV6(), fc.ipV4Extended(), fc.string()), (text) => {
    const reason = forbiddenAddressReason(text)
    if (reason !== null && typeof reason !== 'string') throw new Error('odd reason')
  }), { seed: fuzzSeed(2503), numRuns: fuzzRuns(4000) })
})

t.test('fuzz: random IPv6s agree with an independent prefix check', async (t) => {
  const prefixes: Array<[number, number, string]> = [[0xfe00, 0xfc00, 'fc00::/7'], [0xffc0, 0xfe80, 'fe80::/10'], [0xff00, 0xff00, 'ff00::/8']]
  fc.assert(fc.property(fc.ipV6(), (ip) => {
    const reason = forbiddenAddressReason(ip)
    if (reason === 'not an IP address') throw new Error(`${ip} not taken as an address`)
    const first = parseInt(ip.startsWith('::') ? '0' : ip.split(':')[0], 16)
    const hit = prefixes.find(([mask, value]) => (first & mask) === value)
    if (hit !== undefined && reason === null) throw new Error(`${ip} is in ${hit[2]} but allowed`)
  }), { seed: fuzzSeed(2504), numRuns: fuzzRuns(3000) })
  t.pass()
})
