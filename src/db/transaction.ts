import { sql } from 'drizzle-orm'
import type { Db, Transaction } from './client.js'
import { isDatabaseUnavailable } from './unavailable.js'

/*
 * A transaction whose answer can be trusted when the connection drops at the last moment. If the
 * session is lost after the work is done, the COMMIT may have happened on the server even though the
 * client only saw a closed connection; answering "failed" then would tell a client its changes were not
 * made when they were. So the transaction notes its id first, and on a lost connection the server is
 * asked (on a new connection) what became of it: committed, aborted, or no answer.
 */

/** The outcome of a transaction could not be learnt: the database is unreachable. Retrying is safe. */
export class CommitOutcomeUnknownError extends Error {
  override name = 'CommitOutcomeUnknownError'
  /** A connection error: answered 503 like any other. */
  readonly code = 'CONNECTION_CLOSED'
  constructor (override readonly cause: unknown) {
    super('The connection was lost while the transaction committed, and its outcome could not be learnt')
  }
}

/** How long to keep asking (the server may still be finishing a terminated backend, or reconnecting). */
const STATUS_BUDGET_MS = 3000
const STATUS_PAUSE_MS = 100

async function commitStatus (db: Db, xid: string): Promise<'committed' | 'aborted' | 'unknown'> {
  const deadline = Date.now() + STATUS_BUDGET_MS
  while (Date.now() < deadline) {
    const left = deadline - Date.now()
    const status = await Promise.race([
      db.execute<{ status: string | null }>(sql`select txid_status(${xid}::bigint) as status`).then(([row]) => row.status, () => 'no answer'),
      new Promise<string>((resolve) => setTimeout(resolve, left, 'no answer').unref())
    ])
    if (status === 'committed') return 'committed'
    if (status === 'aborted' || status === null) return 'aborted'
    // 'in progress' (the backend is still going away; its transaction is about to roll back) or no answer.
    await new Promise((resolve) => setTimeout(resolve, STATUS_PAUSE_MS))
  }
  return 'unknown'
}

/**
 * Runs `work` in a transaction. On a lost connection after `work` finished, returns its result if the
 * transaction committed, rethrows the error if it was rolled back, and throws CommitOutcomeUnknownError
 * if the database cannot say.
 */
export async function transaction<T> (db: Db, work: (tx: Transaction) => Promise<T>): Promise<T> {
  let xid: string | null = null
  let done: { value: T } | null = null
  try {
    return await db.transaction(async (tx) => {
      // Sent ahead of the work's first statement, in the same round trip (postgres.js pipelines them).
      const noted = tx.execute<{ xid: string }>(sql`select txid_current()::text as xid`).then(([row]) => { xid = row.xid })
      noted.catch(() => {}) // its failure is the work's failure too; reported through the work
      const value = await work(tx)
      await noted
      done = { value }
      return value
    })
  } catch (err) {
    if (done === null || xid === null || !isDatabaseUnavailable(err)) throw err
    const status = await commitStatus(db, xid)
    if (status === 'committed') return (done as { value: T }).value
    if (status === 'aborted') throw err
    throw new CommitOutcomeUnknownError(err)
  }
}
