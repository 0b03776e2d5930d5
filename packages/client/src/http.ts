import {
  AbortError, BadRequestError, HttpError, NetworkError, PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError
} from './errors.js'
import type { Pacer } from './pace.js'
import { sleep } from './sleep.js'

/*
 * One request with retries. Every operation of the service is idempotent (a status already set is a
 * no-op, a sync sets values, reads are reads: docs/api/idempotency.md), so a request whose answer was lost may be
 * sent again: on a network error, a 5xx or a 429, with exponential backoff and full jitter, honouring
 * Retry-After, within a budget of attempts and time, and stopping at once when the caller aborts.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  attempts?: number
  /** First backoff; doubled each time (default 250 ms). */
  baseDelayMs?: number
  /** Longest backoff between attempts (default 10 s); a longer Retry-After from the service is still honoured. */
  maxDelayMs?: number
  /** No retry starts after this much time since the first attempt (default 60 s). */
  budgetMs?: number
}

export interface Transport {
  baseUrl: string
  fetch: typeof fetch
  retry: Required<RetryOptions>
  /** How long one attempt may take, answer read included. */
  timeoutMs: number
  userAgent?: string | undefined
  /** Paces GraphQL reads from extensions.cost (one per client: one credential); null when turned off. */
  pacer: Pacer | null
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT'
  path: string
  headers: Record<string, string>
  body?: string
  signal?: AbortSignal
}

export interface Answer {
  status: number
  body: unknown
  /** The service's Date header (its clock), when the response exposes it. */
  date: string | null
}

const RETRYABLE = (status: number): boolean => status === 429 || status >= 500

/** Seconds or an HTTP date, as Retry-After may say; null when absent or unreadable. */
export function retryAfterMs (header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null
  const seconds = Number(header)
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000
  const date = Date.parse(header)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/** The service's own words: the REST envelope's message, or the first GraphQL error's. */
function messageOf (status: number, body: unknown): string {
  const answer = (typeof body === 'object' && body !== null ? body : {}) as { message?: unknown, errors?: Array<{ message?: unknown }> }
  if (typeof answer.message === 'string') return answer.message
  const first = Array.isArray(answer.errors) ? answer.errors[0]?.message : undefined
  return typeof first === 'string' ? first : `HTTP ${status}`
}

function errorFor (status: number, body: unknown): HttpError {
  const message = messageOf(status, body)
  if (status === 401) return new UnauthorizedError(status, message, body)
  if (status === 413) return new PayloadTooLargeError(status, message, body)
  if (status === 429 || status >= 500) return new ServiceUnavailableError(status, message, body)
  if (status === 400) return new BadRequestError(status, message, body)
  return new HttpError(status, message, body)
}

/**
 * Sends a call, retrying what may be retried. Returns the answer of a 2xx, or of a 4xx the caller reads
 * itself (`accept`); throws a typed error otherwise.
 */
export async function send (
  transport: Transport,
  call: Call,
  accept: (status: number) => boolean = () => false
): Promise<Answer> {
  const { attempts, baseDelayMs, maxDelayMs, budgetMs } = transport.retry
  const started = Date.now()
  let lastError: Error = new NetworkError('no attempt made', null)
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (call.signal?.aborted) throw new AbortError('aborted')
    let waitMs: number | null = null
    // Each attempt has its own deadline on a controller held until the attempt ends (a combined
    // AbortSignal.any can be garbage-collected mid-request on Node 20, and then never fires).
    const attemptControl = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => { timedOut = true; attemptControl.abort() }, transport.timeoutMs)
    const onAbort = (): void => attemptControl.abort()
    call.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const response = await transport.fetch(new URL(call.path, transport.baseUrl), {
        method: call.method,
        headers: { accept: 'application/json', ...(transport.userAgent ? { 'user-agent': transport.userAgent } : {}), ...call.headers },
        body: call.body,
        signal: attemptControl.signal
      })
      const text = await response.text()
      let body: unknown = text
      try { body = text === '' ? null : JSON.parse(text) } catch { /* not JSON: kept as text */ }
      if (response.ok || accept(response.status)) return { status: response.status, body, date: response.headers.get('date') }
      lastError = errorFor(response.status, body)
      if (!RETRYABLE(response.status)) throw lastError
      waitMs = retryAfterMs(response.headers.get('retry-after'))
    } catch (err) {
      if (err instanceof HttpError) throw err
      if (call.signal?.aborted) throw new AbortError('aborted')
      const reason = timedOut ? `no answer within ${transport.timeoutMs} ms` : (err as Error).message
      lastError = new NetworkError(`${call.method} ${call.path}: ${reason}`, err)
    } finally {
      clearTimeout(timer)
      call.signal?.removeEventListener('abort', onAbort)
    }
    if (attempt === attempts) break
    // Full jitter: anywhere up to the exponential bound, so many clients do not retry in step. A
    // Retry-After the service sent is a floor, not a hint: it is waited in full (or the budget ends here).
    const backoff = Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1))
    const delay = waitMs ?? backoff
    if (Date.now() + delay - started > budgetMs) break
    await sleep(delay, call.signal)
  }
  throw lastError
}
