/* What the HTTP transports (webhook, whatsapp-cloud) share: one POST within a deadline, and how a failure reads. */

export interface HttpAnswer {
  status: number
  ok: boolean
  /** The answer's body, or '' when it could not be read in time. */
  text: string
}

/**
 * POSTs and reads the answer within `timeoutMs`, or until `stop` (the worker stopping) aborts it. A
 * failure throws an Error whose message is fit for last_error.
 *
 * The deadline is a timer on a controller of our own, held until the request ends. Not
 * `AbortSignal.any([AbortSignal.timeout(ms), stop])`: on Node 20 that combined signal is held only
 * weakly, so under GC pressure it can be collected mid-request and the request then never times out
 * (a receiver that does not answer held a job forever; test/effects-transports.test.ts reproduces it).
 */
export async function postWithDeadline (url: string, init: { headers: Record<string, string>, body: string },
  what: string, timeoutMs: number, stop?: AbortSignal): Promise<HttpAnswer> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), timeoutMs)
  const onStop = (): void => controller.abort()
  if (stop?.aborted) controller.abort()
  stop?.addEventListener('abort', onStop, { once: true })
  try {
    const response = await fetch(url, { method: 'POST', ...init, signal: controller.signal })
    // Read whole (the connection goes back to the pool), within the same deadline; the status is the answer.
    const text = await response.text().catch(() => '')
    return { status: response.status, ok: response.ok, text }
  } catch (err) {
    throw new Error(describeFetchError(err, what, timeoutMs, stop))
  } finally {
    clearTimeout(timer)
    stop?.removeEventListener('abort', onStop)
  }
}

/** Why a fetch failed, in a few words for last_error (no stack, no secrets). */
function describeFetchError (err: unknown, what: string, timeoutMs: number, stop?: AbortSignal): string {
  if (stop?.aborted) return `${what} request abandoned: the worker is stopping`
  const e = err as { name?: string, message?: string, cause?: { code?: string, message?: string } }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `${what} timed out after ${timeoutMs} ms`
  return `${what} request failed: ${e.cause?.code ?? e.cause?.message ?? e.message ?? String(err)}`
}
