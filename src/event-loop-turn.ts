/*
 * A long synchronous loop in a request (100,000 rows of a sync) holds every other request of the process
 * behind it: an orders read that arrives meanwhile waits for the whole loop. Such loops await nextTurn()
 * every ROWS_PER_TURN rows, so that the I/O that is ready (other requests, their database answers) runs
 * in between. setImmediate, not a timer: it waits for nothing but the callbacks already due.
 */

/** Rows handled between two turns: a few milliseconds of work in the loops that use it. */
export const ROWS_PER_TURN = 1024

export function nextTurn (): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
