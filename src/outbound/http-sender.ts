/*
 * The one HTTP sender for everything the service POSTs out: a seller's webhook endpoint, the operator's
 * webhook, the WhatsApp Cloud API. On undici, with the SSRF guard inside the DNS lookup of its connections
 * (as svix puts it in its client's resolver): a guarded connection is only ever opened to an address the
 * guard checked, so no send can skip it and a name cannot be re-pointed at 127.0.0.1 between the check and
 * the connect (DNS rebinding). Connections are pooled with keep-alive, so a busy worker reuses its
 * connections to an endpoint instead of paying a TCP and TLS handshake per send.
 */

import dns from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { StringDecoder } from 'node:string_decoder'
import { Agent, Client, buildConnector, type Dispatcher } from 'undici'
import { forbiddenAddressReason } from './address-policy.js'

export interface SendOptions {
  /** Development, tests and the operator's own URLs: lets the sender reach loopback and private addresses. */
  allowPrivateNetworks: boolean
  /** The whole attempt: connect, send, and read the answer (the deliverer uses 15,000). */
  timeoutMs: number
  /** Read at most this much of the answer, then drop the connection (the deliverer uses 64 KB). */
  maxAnswerBytes: number
  /** node's dns.lookup signature; injectable so tests can simulate DNS rebinding. Called with all: true. */
  lookup?: LookupFunction
  /** The worker stopping: abandons the attempt at once. */
  stop?: AbortSignal
}

export interface SendResult {
  /** A 2xx, read within the deadline. */
  delivered: boolean
  /** The HTTP status, null when no answer came. */
  status: number | null
  /** Null when delivered; else a short text for the delivery log, never a stack. */
  error: string | null
  durationMs: number
  /** The first 1,024 bytes of the answer body as UTF-8 (an incomplete last character is dropped). */
  answerHead: string
  /** From Retry-After on a 429 or 503 (delta-seconds or HTTP-date), clamped to [0, 24 h]; else null. */
  retryAfterMs: number | null
}

export interface HttpSender {
  /** POSTs `body`. Never throws for a network problem: every failure is a SendResult with delivered false. */
  send: (url: string, headers: Record<string, string>, body: string, options: SendOptions) => Promise<SendResult>
  /** Destroys the pooled connections; a send after close fails without connecting. */
  close: () => void
}

const ANSWER_HEAD_BYTES = 1024
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000
/*
 * An idle pooled connection is closed after this long: below the 5 s idle timeout of Node servers and
 * many proxies, so we rarely reuse a connection the other end is closing. A Keep-Alive: timeout= hint
 * from the server, less 2 s, wins (undici reads it).
 */
const IDLE_SOCKET_MS = 4000
/** Our deadline covers the whole attempt; undici's own header and body timeouts would only cut it shorter. */
const DEADLINE_IS_OURS = { headersTimeout: 0, bodyTimeout: 0 }

/** The SSRF guard refused the address: names the address and why, for the delivery log. */
class RefusedAddress extends Error {
  constructor (address: string, reason: string) {
    super(`address ${address} is not allowed (${reason})`)
  }
}

/** Connections made one way: through one resolver, guarded or not. */
interface Route {
  connect: buildConnector.connector
  agent: Agent
}

export function createHttpSender (): HttpSender {
  /*
   * A pool per policy and resolver: a connection opened where private networks were allowed is never
   * handed to a guarded send, so the guard at connect time covers every connection a guarded send uses.
   * The resolver is only ever injected by tests, so there are one or two routes in the service.
   */
  const routes = {
    open: new Map<LookupFunction | undefined, Route>(),
    guarded: new Map<LookupFunction | undefined, Route>()
  }
  /** The one-off connections of retries (see post), destroyed with the pools on close. */
  const oneOffs = new Set<Client>()
  let closed = false
  const routeFor = ({ allowPrivateNetworks, lookup }: SendOptions): Route => {
    const byLookup = allowPrivateNetworks ? routes.open : routes.guarded
    let route = byLookup.get(lookup)
    if (route === undefined) {
      const resolve = allowPrivateNetworks ? lookup : guardedLookup(lookup ?? systemLookup)
      const connect = notingBytesRead(buildConnector(resolve === undefined ? {} : { lookup: resolve }))
      route = { connect, agent: new Agent({ connect, keepAliveTimeout: IDLE_SOCKET_MS, ...DEADLINE_IS_OURS }) }
      byLookup.set(lookup, route)
    }
    return route
  }
  return {
    send: async (url, headers, body, options) => {
      if (closed) return failed(performance.now(), 'the sender is closed')
      return await post(routeFor, oneOffs, url, headers, body, options)
    },
    close: () => {
      closed = true
      for (const route of [...routes.open.values(), ...routes.guarded.values()]) route.agent.destroy().catch(() => {})
      for (const client of oneOffs) client.destroy().catch(() => {})
    }
  }
}

function failed (started: number, error: string): SendResult {
  return { delivered: false, status: null, error, durationMs: elapsed(started), answerHead: '', retryAfterMs: null }
}

function elapsed (started: number): number {
  return Math.round(performance.now() - started)
}

async function post (routeFor: (options: SendOptions) => Route, oneOffs: Set<Client>, raw: string,
  headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const { allowPrivateNetworks, timeoutMs, maxAnswerBytes, stop } = options
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return failed(started, 'invalid url')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed(started, 'url is not http(s)')
  if (stop?.aborted) return failed(started, 'abandoned: the worker is stopping')
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  // node connects to an IP literal without calling lookup, so the lookup guard never sees it.
  if (!allowPrivateNetworks && isIP(hostname) !== 0) {
    const reason = forbiddenAddressReason(hostname)
    if (reason !== null) return failed(started, new RefusedAddress(hostname, reason).message)
  }
  const route = routeFor(options)
  const request: Dispatcher.DispatchOptions = {
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: outgoingHeaders(headers),
    body: Buffer.from(body)
  }

  return await new Promise<SendResult>((resolve) => {
    let settled = false
    let status: number | null = null
    /** Ends the attempt in flight and drops its connection; null until undici writes the request. */
    let abort: ((err?: Error) => void) | null = null
    let oneOff: Client | null = null

    // `keepConnection` only once the answer was read to its end: the connection is back in the pool then.
    const finish = (result: Omit<SendResult, 'durationMs'>, keepConnection = false): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      stop?.removeEventListener('abort', onStop)
      if (!keepConnection) abort?.()
      if (oneOff !== null) {
        oneOffs.delete(oneOff)
        oneOff.destroy().catch(() => {})
      }
      const sent = { ...result, durationMs: elapsed(started) }
      /*
       * undici puts a connection back in its pool one event-loop turn after its answer ended (it waits for
       * a server that closes a connection it said it would keep): the result is handed back after that
       * turn, or a caller's next send would find the connection busy and open a second one.
       */
      if (keepConnection) queueMicrotask(() => setImmediate(() => resolve(sent)))
      else resolve(sent)
    }
    const fail = (error: string): void =>
      finish({ delivered: false, status, error, answerHead: '', retryAfterMs: null })

    // A timer on our own rather than AbortSignal.any: on Node 20 the combined signal is held only weakly,
    // and under GC pressure it can be collected mid-request, which then never times out.
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs)
    const onStop = (): void => fail('abandoned: the worker is stopping')
    stop?.addEventListener('abort', onStop, { once: true })

    const attempt = (fresh: boolean): void => {
      const head: Buffer[] = []
      let headBytes = 0
      let total = 0
      let retryAfterMs: number | null = null
      const conclude = (keepConnection: boolean): void => {
        const code = status ?? 0
        const delivered = code >= 200 && code < 300
        const error = delivered
          ? null
          : code >= 300 && code < 400 ? `redirect (${code}) not followed` : `HTTP ${code}`
        const answerHead = new StringDecoder('utf8').write(Buffer.concat(head))
        finish({ delivered, status, error, answerHead, retryAfterMs }, keepConnection)
      }
      const handler: Dispatcher.DispatchHandlers = {
        onConnect: (abortThis) => {
          // Timed out or stopped while waiting for a connection: the request is not sent.
          if (settled) abortThis()
          else abort = abortThis
        },
        onHeaders: (statusCode, rawHeaders) => {
          if (statusCode < 200) return true
          status = statusCode
          if (statusCode === 429 || statusCode === 503) retryAfterMs = retryAfter(headerValue(rawHeaders, 'retry-after'))
          return true
        },
        onData: (chunk) => {
          if (settled) return false
          if (headBytes < ANSWER_HEAD_BYTES) {
            const part = chunk.subarray(0, ANSWER_HEAD_BYTES - headBytes)
            head.push(part)
            headBytes += part.length
          }
          total += chunk.length
          /*
           * A receiver streaming an endless answer must not hold the worker: stop reading and drop the
           * connection. The status line already came, so a 2xx still counts as delivered (error null);
           * the size of the answer is not the receiver's acknowledgement, the status is.
           */
          if (total > maxAnswerBytes) conclude(false)
          return true
        },
        onComplete: () => conclude(true),
        onError: (err) => {
          if (settled) return
          /*
           * A pooled connection the server closed while idle fails as soon as it is used, almost always
           * before the receiver's application saw the request: one retry on a new connection saves a
           * failed delivery. At worst the receiver gets it twice, which webhook-id deduplication absorbs.
           */
          if (!fresh && status === null && wasReused(err)) {
            abort = null
            oneOff = new Client(request.origin as string, { connect: route.connect, ...DEADLINE_IS_OURS })
            oneOffs.add(oneOff)
            attempt(true)
            return
          }
          fail(describeError(err, status))
        }
      }
      // Errors, even an invalid header, come to onError rather than being thrown.
      const dispatcher: Dispatcher = oneOff ?? route.agent
      dispatcher.dispatch(request, handler)
    }

    attempt(false)
  })
}

/** What a socket had read when it failed, for errors that do not carry it (a bare ECONNRESET or EPIPE). */
const readWhenFailed = new WeakMap<Error, number>()

function notingBytesRead (connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) => connect(options, (err, socket) => {
    if (socket != null) socket.prependListener('error', (e: Error) => readWhenFailed.set(e, socket.bytesRead))
    // The callback's two shapes are (null, socket) and (error, null); this passes on whichever came.
    callback(...([err, socket] as Parameters<buildConnector.Callback>))
  })
}

/** The connection dropped before an answer had carried an earlier answer: a stale pooled connection. */
function wasReused (err: Error): boolean {
  const { code, socket } = err as Error & { code?: string, socket?: { bytesRead?: number } }
  if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET' && code !== 'EPIPE') return false
  return (socket?.bytesRead ?? readWhenFailed.get(err) ?? 0) > 0
}

const systemLookup: LookupFunction = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/**
 * Resolves every address and refuses the connection if any is forbidden, then hands the checked addresses
 * to the socket, which connects to one of them: a name cannot pass registration on a public address and
 * then be re-pointed at 127.0.0.1 (DNS rebinding).
 */
function guardedLookup (base: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    const answer = (err: NodeJS.ErrnoException | null, found: string | dns.LookupAddress[], family?: number): void => {
      if (err !== null) {
        callback(err, '')
        return
      }
      const addresses = typeof found === 'string' ? [{ address: found, family: family ?? isIP(found) }] : found
      if (!Array.isArray(addresses) || addresses.length === 0) {
        callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '')
        return
      }
      for (const { address } of addresses) {
        const reason = forbiddenAddressReason(address)
        if (reason !== null) {
          callback(new RefusedAddress(address, reason), '')
          return
        }
      }
      if (options.all === true) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    }
    try {
      base(hostname, { ...options, all: true }, answer)
    } catch (err) {
      callback(err as NodeJS.ErrnoException, '')
    }
  }
}

function outgoingHeaders (headers: Record<string, string>): Record<string, string> {
  const outgoing: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    // undici sets it from the body; a caller's could disagree with it and corrupt the connection.
    if (name.toLowerCase() !== 'content-length') outgoing[name] = value
  }
  if (!Object.keys(outgoing).some((name) => name.toLowerCase() === 'content-type')) {
    outgoing['content-type'] = 'application/json'
  }
  return outgoing
}

/** The first value of a header among undici's raw [name, value, …] pairs. */
function headerValue (raw: Buffer[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].toString('latin1').toLowerCase() === name) return raw[i + 1].toString('latin1')
  }
  return undefined
}

function retryAfter (value: string | undefined): number | null {
  if (value === undefined) return null
  const text = value.trim()
  let ms: number
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1000
  } else if (/^[A-Za-z]{3}/.test(text)) {
    // Every HTTP-date form starts with the day name; Date.parse alone would take '12' as a year.
    const at = Date.parse(text)
    if (Number.isNaN(at)) return null
    ms = at - Date.now()
  } else {
    return null
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS)
}

/** A network failure in a few words for the delivery log; `status` is set when the answer had begun. */
function describeError (err: unknown, status: number | null): string {
  if (err instanceof RefusedAddress) return err.message
  const { code, message } = (err ?? {}) as NodeJS.ErrnoException
  switch (code) {
    case 'UND_ERR_SOCKET': case 'ECONNRESET':
      if (status !== null) return 'connection dropped mid-answer'
      return code === 'ECONNRESET' ? 'connection reset by peer' : 'connection closed before an answer'
    case 'ECONNREFUSED': return 'connection refused'
    case 'EPIPE': return 'connection closed while sending'
    case 'ENOTFOUND': case 'ENODATA': return 'host does not resolve'
    case 'EAI_AGAIN': return 'DNS lookup failed for now (EAI_AGAIN)'
    case 'ETIMEDOUT': case 'UND_ERR_CONNECT_TIMEOUT': return 'connection timed out'
    case 'EHOSTUNREACH': return 'host unreachable'
    case 'ENETUNREACH': return 'network unreachable'
    // Only what the caller gave can be refused before sending: an invalid header name or value.
    case 'UND_ERR_INVALID_ARG': case 'UND_ERR_NOT_SUPPORTED': return `request not sent: ${message}`
    case 'UND_ERR_DESTROYED': case 'UND_ERR_CLOSED': return 'the sender is closed'
  }
  if (code?.startsWith('HPE_') === true || code?.startsWith('UND_ERR_RES_') === true || code === 'UND_ERR_HEADERS_OVERFLOW') {
    return `invalid HTTP answer (${code})`
  }
  if (code !== undefined && /^(ERR_SSL_|ERR_TLS_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO/.test(code)) return `TLS failed (${code})`
  const text = code ?? (typeof message === 'string' ? message.split('\n')[0] : '')
  return text === '' ? 'request failed' : text.slice(0, 200)
}
