import t from 'tap'
import { MAX_ATTEMPTS, RETRY_WAITS_MS, retryWaitMs } from '../../src/delivery/retry-schedule.js'

// The Standard Webhooks example schedule: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
t.test('the waits after each failed attempt, with ±10 % jitter; given up after the tenth', async (t) => {
  const s = 1000
  t.same(RETRY_WAITS_MS, [5 * s, 300 * s, 1800 * s, 7200 * s, 18000 * s, 36000 * s, 50400 * s, 72000 * s, 86400 * s])
  t.equal(MAX_ATTEMPTS, 10)
  RETRY_WAITS_MS.forEach((wait, i) => {
    t.equal(retryWaitMs(i + 1, null, () => 0), Math.round(wait * 0.9), `after attempt ${i + 1}: at least -10 %`)
    t.equal(retryWaitMs(i + 1, null, () => 1), Math.round(wait * 1.1), `after attempt ${i + 1}: at most +10 %`)
  })
  t.equal(retryWaitMs(10, null), null, 'the tenth failure gives up')
  t.equal(retryWaitMs(3, 42_000), 42_000, 'Retry-After instead of the schedule')
  t.equal(retryWaitMs(10, 42_000), null, 'but not past the last attempt')
})
