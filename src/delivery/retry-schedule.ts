/*
 * When an attempt that failed is tried again: the Standard Webhooks specification's example schedule,
 * counted from each failure: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h after the first attempt
 * (sent at once). Ten attempts in all, about three and a half days; then the delivery is given up and the
 * next event of its order may go. Each wait gets ±10 % jitter, so the retries of an endpoint that came back
 * do not all arrive in the same second. A 429 or 503 with Retry-After is retried when it says instead
 * (it still counts as an attempt, so a receiver cannot hold a delivery forever).
 */

const SECOND = 1000
const MINUTE = 60 * SECOND
const HOUR = 60 * MINUTE

/** The wait after attempt n fails (index n - 1); after the last, none. */
export const RETRY_WAITS_MS: readonly number[] = [
  5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR
]

export const MAX_ATTEMPTS = RETRY_WAITS_MS.length + 1

/** How long to wait after attempt `attempt` (1-based) failed, or null to give up. */
export function retryWaitMs (attempt: number, retryAfterMs: number | null, random: () => number = Math.random):
number | null {
  if (attempt >= MAX_ATTEMPTS) return null
  if (retryAfterMs !== null) return retryAfterMs
  const wait = RETRY_WAITS_MS[attempt - 1]
  return Math.round(wait * (0.9 + 0.2 * random()))
}
