// Fault timing: a fault injected at a chosen moment of work in flight, an outage of a set length sampled.

/*
 * The two places where time itself is what a fault test varies, not a state it waits for: where in a
 * batch's life its backends are terminated (swept over several moments), and how long an outage lasts
 * while requests keep coming. Allowed timers (eslint.config.js); every other wait is eventually().
 */

/** Runs `fault` `ms` after the call: the moment it lands in the work the test started just before. */
export async function injectAfter<T> (ms: number, fault: () => Promise<T>): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, ms))
  return await fault()
}

/** Runs `probe` again and again, `everyMs` apart, until `ms` have passed since the call: an outage, sampled. */
export async function probeFor (ms: number, everyMs: number, probe: () => Promise<void>): Promise<void> {
  const started = Date.now()
  while (Date.now() - started < ms) {
    await probe()
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
