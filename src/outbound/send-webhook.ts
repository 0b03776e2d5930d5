/*
 * The outbound POST to a seller's webhook endpoint. node:http / node:https rather than fetch: the SSRF
 * guard has to see the address actually connected to, which needs our own DNS lookup on the socket
 * and the socket itself. One keep-alive agent per scheme, owned by the sender, so a busy worker reuses
 * connections to the same endpoint instead of paying a TCP and TLS handshake per delivery.
 */

import dns from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction, type Socket } from 'node:net'
import { StringDecoder } from 'node:string_decoder'
import { forbiddenAddressReason } from './address-policy.js'

export interface SendOptions {
  /** Development and tests only: lets the sender reach loopback and private addresses. */
  allowPrivateNetworks: boolean
  /** The whole attempt: connect, send, and read the answer (the service uses 15,000). */
  timeoutMs: number
  /** Read at most this much of the answer, then drop the connection (the service uses 64 KB). */
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

export interface WebhookSender {
  /** Never throws for a network problem: every failure is a SendResult with delivered false. */
  send: (url: string, headers: Record<string, string>, body: string, options: SendOptions) => Promise<SendResult>
  /** Destroys the pooled connections; a send after close fails without connecting. */
  close: () => void
}

const ANSWER_HEAD_BYTES = 1024
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000
/*
 * An idle pooled connection is closed after this long: below the 5 s idle timeout of Node servers and
 * many proxies, so we rarely reuse a connection the other end is closing. A shorter Keep-Alive:
 * timeout= hint from the server wins (node's agent reads it).
 */
const IDLE_SOCKET_MS = 4000

/** The SSRF guard refused the address: names the address and why, for the delivery log. */
class RefusedAddress extends Error {
  constructor (address: string, reason: string) {
    super(`address ${address} is not allowed (${reason})`)
  }
}

export function createWebhookSender (): WebhookSender {
  const agentOptions = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' as const }
  const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) }
  let closed = false
  return {
    send: async (url, headers, body, options) => {
      if (closed) return failed(performance.now(), 'the sender is closed')
      return await post(agents, url, headers, body, options)
    },
    close: () => {
      closed = true
      agents.http.destroy()
      agents.https.destroy()
    }
  }
}

function failed (started: number, error: string, status: number | null = null): SendResult {
  return { delivered: false, status, error, durationMs: elapsed(started), answerHead: '', retryAfterMs: null }
}

function elapsed (started: number): number {
  return Math.round(performance.now() - started)
}

async function post (agents: { http: http.Agent, https: https.Agent }, raw: string, headers: Record<string, string>,
  body: string, options: SendOptions): Promise<SendResult> {
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
  const client = url.protocol === 'https:' ? https : http
  const agent = url.protocol === 'https:' ? agents.https : agents.http
  const lookup = allowPrivateNetworks ? options.lookup : guardedLookup(options.lookup ?? systemLookup)
  const outgoing = outgoingHeaders(headers, body)

  return await new Promise<SendResult>((resolve) => {
    let settled = false
    let current: http.ClientRequest | undefined
    let status: number | null = null

    // `keepConnection` only once the answer was read to its end: the socket is back in the pool then.
    const finish = (result: Omit<SendResult, 'durationMs'>, keepConnection = false): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      stop?.removeEventListener('abort', onStop)
      if (!keepConnection) current?.destroy()
      resolve({ ...result, durationMs: elapsed(started) })
    }
    const fail = (error: string): void =>
      finish({ delivered: false, status, error, answerHead: '', retryAfterMs: null })

    // A plain timer rather than AbortSignal.any: on Node 20 the combined signal can be garbage-collected
    // mid-request, and the request then never times out (see src/effects/transports/http.ts).
    const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs)
    const onStop = (): void => fail('abandoned: the worker is stopping')
    stop?.addEventListener('abort', onStop, { once: true })

    const attempt = (fresh: boolean): void => {
      let req: http.ClientRequest
      try {
        req = client.request({
          protocol: url.protocol,
          hostname,
          port: url.port,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: outgoing,
          // A retry after a stale pooled connection must not be handed another pooled one.
          agent: fresh ? false : agent,
          lookup
        })
      } catch (err) {
        // Only a header the caller gave can make request() throw (an invalid name or value).
        fail(`request not sent: ${describeError(err)}`)
        return
      }
      current = req
      let answered = false
      req.on('socket', (socket: Socket) => {
        if (!allowPrivateNetworks) guardConnectedAddress(req, socket)
      })
      req.on('error', (err) => {
        if (settled || req !== current) return
        /*
         * A pooled connection the server closed while idle fails as soon as it is used, almost always
         * before the receiver's application saw the request: one retry on a new connection saves a
         * failed delivery. At worst the receiver gets it twice, which webhook-id deduplication absorbs.
         */
        const code = (err as NodeJS.ErrnoException).code
        if (!fresh && !answered && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
          attempt(true)
          return
        }
        fail(describeError(err))
      })
      req.on('response', (res) => {
        answered = true
        status = res.statusCode ?? null
        readAnswer(res)
      })
      req.end(body)
    }

    const readAnswer = (res: http.IncomingMessage): void => {
      const head: Buffer[] = []
      let headBytes = 0
      let total = 0
      const conclude = (keepConnection: boolean): void => {
        const code = status ?? 0
        const delivered = code >= 200 && code < 300
        const error = delivered
          ? null
          : code >= 300 && code < 400 ? `redirect (${code}) not followed` : `HTTP ${code}`
        const answerHead = new StringDecoder('utf8').write(Buffer.concat(head))
        finish({ delivered, status, error, answerHead, retryAfterMs: retryAfter(code, res.headers['retry-after']) },
          keepConnection)
      }
      res.on('data', (chunk: Buffer) => {
        if (settled) return
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
      })
      res.on('end', () => conclude(true))
      // Reported through 'close' below; a listener keeps an 'aborted' answer from throwing.
      res.on('error', () => {})
      res.on('close', () => {
        // Cut off by the receiver before the answer ended: not delivered, even after a 2xx status
        // line (the receiver may have failed while answering; a retry is harmless).
        if (!res.complete) fail('connection dropped mid-answer')
      })
    }

    attempt(false)
  })
}

/**
 * The second guard: whatever resolved the name, the address connected to is checked. It also covers a
 * pooled connection opened by a send that allowed private networks and reused by one that does not.
 */
function guardConnectedAddress (req: http.ClientRequest, socket: Socket): void {
  const check = (): void => {
    const address = socket.remoteAddress
    if (address === undefined) return
    const reason = forbiddenAddressReason(address)
    if (reason !== null) req.destroy(new RefusedAddress(address, reason))
  }
  if (socket.connecting) socket.once('connect', check)
  else check()
}

const systemLookup: LookupFunction = (hostname, options, callback) => dns.lookup(hostname, options, callback)

/**
 * Resolves every address and refuses the connection if any is forbidden, so the address the socket
 * connects to is one that was checked: a name cannot pass registration on a public address and then
 * be re-pointed at 127.0.0.1 (DNS rebinding).
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

function outgoingHeaders (headers: Record<string, string>, body: string): Record<string, string> {
  const outgoing: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    // Ours is computed from the body; a caller's could disagree with it and corrupt the connection.
    if (name.toLowerCase() !== 'content-length') outgoing[name] = value
  }
  if (!Object.keys(outgoing).some((name) => name.toLowerCase() === 'content-type')) {
    outgoing['content-type'] = 'application/json'
  }
  outgoing['content-length'] = String(Buffer.byteLength(body))
  return outgoing
}

function retryAfter (status: number, value: string | undefined): number | null {
  if ((status !== 429 && status !== 503) || value === undefined) return null
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

/** A network failure in a few words for the delivery log. */
function describeError (err: unknown): string {
  if (err instanceof RefusedAddress) return err.message
  const { code, message } = (err ?? {}) as NodeJS.ErrnoException
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused'
    case 'ECONNRESET': return message === 'socket hang up' ? 'connection closed before an answer' : 'connection reset by peer'
    case 'EPIPE': return 'connection closed while sending'
    case 'ENOTFOUND': case 'ENODATA': return 'host does not resolve'
    case 'EAI_AGAIN': return 'DNS lookup failed for now (EAI_AGAIN)'
    case 'ETIMEDOUT': return 'connection timed out'
    case 'EHOSTUNREACH': return 'host unreachable'
    case 'ENETUNREACH': return 'network unreachable'
  }
  if (code?.startsWith('HPE_') === true) return `invalid HTTP answer (${code})`
  if (code !== undefined && /^(ERR_SSL_|ERR_TLS_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO/.test(code)) return `TLS failed (${code})`
  const text = code ?? (typeof message === 'string' ? message.split('\n')[0] : '')
  return text === '' ? 'request failed' : text.slice(0, 200)
}
