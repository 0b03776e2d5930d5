import postgres from 'postgres'

/*
 * A session-level advisory lock held on a connection of its own for as long as `work` runs: work that
 * commits in many transactions on the pool's connections (the demo seed, batch by batch through the
 * platform's services) still runs one at a time. The lock goes with the connection if the process dies.
 */
export async function withSessionLock<T> (url: string, key: number, work: () => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`select pg_advisory_lock(${key})`
    return await work()
  } finally {
    await sql.end({ timeout: 5 })
  }
}
