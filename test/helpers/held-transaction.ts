// A lock or a row held in an open transaction until the test lets it go.
import type postgres from 'postgres'

/**
 * Runs `take` (a row or table lock, an inserted key) in a transaction of `sql` and keeps that transaction open
 * until `release()`, which lets it commit and waits for its end. Returns once `take` is done, never after a
 * fixed pause (a loaded machine's first connection can outlast one, and the test then runs before the lock), or
 * rejects with the transaction's error.
 */
export async function holdInTransaction (sql: postgres.Sql, take: (tx: postgres.TransactionSql) => Promise<unknown>):
Promise<{ release: () => Promise<void> }> {
  let letGo: () => void = () => {}
  const held = new Promise<void>((resolve) => { letGo = resolve })
  let taken: () => void = () => {}
  const took = new Promise<void>((resolve) => { taken = resolve })
  const holding = sql.begin(async (tx) => {
    await take(tx)
    taken()
    await held
  })
  await Promise.race([took, holding])
  return {
    release: async () => {
      letGo()
      await holding
    }
  }
}
