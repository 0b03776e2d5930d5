// Waiting in tests for a state to hold, polled: how a test waits, never a fixed pause (eslint.config.js).
import type { Test } from 'tap'

export interface EventuallyOptions {
  /** How long the state may take to come about; past it the wait fails. */
  timeoutMs?: number
  /** The pause between two looks. */
  intervalMs?: number
}

/** What `eventually` throws when the state did not come about in time. */
export class TimedOut extends Error {
  override name = 'TimedOut'
}

/**
 * Looks at `check` until it returns a truthy value, and returns that value: the state a test waits for
 * (rows written, a request received, a process ready), never a fixed pause that a loaded machine outlasts
 * or a quiet one wastes. Past `timeoutMs` it fails `t` naming what it waited for, and throws, so the test
 * stops there rather than asserting on a state that never came. `what` may be a function, to say at that
 * moment how far it got. `t` is null where no test runs it (the topology harness, the benches): it only
 * throws then. An error thrown by `check` ends the wait with that error.
 */
export async function eventually<T> (t: Test | null, what: string | (() => string), check: () => T | Promise<T>,
  { timeoutMs = 30_000, intervalMs = 50 }: EventuallyOptions = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() >= deadline) {
      const message = `timed out waiting for: ${typeof what === 'string' ? what : what()} (${timeoutMs} ms)`
      if (t !== null) t.fail(message)
      throw new TimedOut(message)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
