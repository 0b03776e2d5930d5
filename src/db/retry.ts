/*
 * PostgreSQL may abort one of two transactions that wait on each other (deadlock, 40P01) or that cannot
 * be serialized (40001). Both are safe to run again from the start when the work is idempotent; anything
 * else is a real failure and is thrown at once.
 */

const RETRYABLE_CODES = new Set(['40001', '40P01'])

export function isRetryableConflict (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  // Drizzle wraps the driver's error (DrizzleQueryError): its code is on the cause.
  const { code, cause } = err as { code?: unknown, cause?: unknown }
  return RETRYABLE_CODES.has(code as string) || (cause !== undefined && cause !== err && isRetryableConflict(cause))
}

export interface RetryOptions {
  /** Runs in all, the first included. */
  attempts?: number
  /** First pause; doubled each time, with jitter so two retrying transactions drift apart. */
  baseDelayMs?: number
  onRetry?: (err: unknown, attempt: number) => void
}

export async function retryOnConflict<T> (work: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 5
  const baseDelayMs = options.baseDelayMs ?? 20
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err
      options.onRetry?.(err, attempt)
      const delay = baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random())
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}
