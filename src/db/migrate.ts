import path from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator'
import { Logger, runMigrations as runWorkerMigrations } from 'graphile-worker'

export const MIGRATIONS_FOLDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../drizzle')

/** An arbitrary constant shared by every instance: the advisory lock that serialises migrations. */
const MIGRATION_LOCK_KEY = 7_240_112_031

/**
 * Applies the service's migrations and graphile-worker's schema. Two instances starting at once take
 * turns on an advisory lock, so the second finds everything applied and does nothing.
 */
export async function migrate (url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`
    try {
      await drizzleMigrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER })
      await runWorkerMigrations({ connectionString: url, logger: quietWorkerLogger })
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`
    }
  } finally {
    await sql.end({ timeout: 5 })
  }
}

// graphile-worker logs every migration at info level through its own logger; keep start-up quiet.
const quietWorkerLogger = new Logger(() => (level: string, message: string) => {
  if (level === 'error') console.error(message)
})
