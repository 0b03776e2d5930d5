/*
 * Whether an error means "the database cannot be reached right now" (a lost or refused connection, a
 * server shutting down or starting up) rather than a fault of the request or of our code. Such a
 * failure is answered 503 with Retry-After: the client's retry is safe and will work once the database
 * is back, and the pool reconnects by itself.
 */

/** postgres.js and Node socket error codes of a connection that is gone or cannot be made. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED', 'CONNECT_TIMEOUT',
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'
])

/**
 * SQLSTATEs of the same: class 08 (connection exception), 57P01–57P03 (admin shutdown, crash shutdown,
 * cannot connect now), and class 53, insufficient resources (53300 too many connections, 53200 out of memory
 * or of lock table entries, 53100 disk full): the database cannot do the work now, nothing was applied.
 */
function unavailableSqlState (code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || code === '57P01' || code === '57P02' || code === '57P03'
}

/**
 * Whether a statement was stopped by one of the session's timeouts: statement_timeout (57014, query
 * canceled) or lock_timeout (55P03, lock not available). The request is fine and the database is up; it
 * was too slow this time, so the answer is a 503 with Retry-After as well, with its own code.
 */
export function isDatabaseTimeout (err: unknown): boolean {
  return carriesSqlState(err, ['57014', '55P03'])
}

/** Whether lock_timeout gave up on a lock (55P03): the row is held by another transaction for too long. */
export function isLockTimeout (err: unknown): boolean {
  return carriesSqlState(err, ['55P03'])
}

/** Whether the error, or one it wraps (Drizzle and GraphQL wrap the driver's), carries one of these SQLSTATEs. */
function carriesSqlState (err: unknown, states: readonly string[]): boolean {
  let current: unknown = err
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code } = current as { code?: unknown }
    if (typeof code === 'string' && states.includes(code)) return true
    current = (current as { cause?: unknown, originalError?: unknown }).cause ??
      (current as { originalError?: unknown }).originalError
  }
  return false
}

export function isDatabaseUnavailable (err: unknown): boolean {
  // Drizzle and GraphQL wrap the driver's error: look through a few causes.
  let current: unknown = err
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const { code, errno } = current as { code?: unknown, errno?: unknown }
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && unavailableSqlState(code)))) return true
    if (typeof errno === 'string' && CONNECTION_CODES.has(errno)) return true
    // An aggregate of connection attempts (several addresses) carries the socket errors in `errors`.
    const errors = (current as { errors?: unknown }).errors
    if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => isDatabaseUnavailable(e))) return true
    current = (current as { cause?: unknown, originalError?: unknown }).cause ??
      (current as { originalError?: unknown }).originalError
  }
  return false
}
