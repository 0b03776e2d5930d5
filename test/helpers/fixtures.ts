// Sellers, credentials and the demo data set, made the way the service makes them.
import type { TestDatabase as Database } from './build.js'
import { sellers, stores } from '../../src/db/schema.js'
import { issueCredential } from '../../src/credentials/service.js'
import type { Environment, SellerCredentialKind } from '../../src/db/schema.js'
import { seed, DEFAULT_ANCHOR, type SeedSummary } from '../../src/seed/seed.js'

/** The deterministic demo data set, small: three sellers (rich, poor, suspended) and their orders. */
export async function seedDemo (database: Database, orders = 120, seedValue = 1): Promise<SeedSummary> {
  return seed(database, { orders, seed: seedValue, anchor: DEFAULT_ANCHOR })
}

export async function createSeller (database: Database,
  values: Partial<typeof sellers.$inferInsert> = {}): Promise<{ sellerId: number, storeIds: number[] }> {
  const [seller] = await database.db.insert(sellers).values({ name: 'Test Seller', ...values }).returning({ id: sellers.id })
  const rows = await database.db.insert(stores).values([{ sellerId: seller.id, name: 'Store A' }, { sellerId: seller.id, name: 'Store B' }]).returning({ id: stores.id })
  return { sellerId: seller.id, storeIds: rows.map((r) => r.id) }
}

export async function credential (database: Database, sellerId: number, kind: SellerCredentialKind,
  options: { environment?: Environment, storeIds?: number[] } = {}): Promise<string> {
  const { secret } = await issueCredential(database.db, { sellerId, kind, environment: options.environment ?? 'testing', storeIds: options.storeIds })
  return secret
}

/** The marketplace's platform key (no seller). */
export async function platformKey (database: Database, environment: Environment = 'testing'): Promise<string> {
  const { secret } = await issueCredential(database.db, { kind: 'platform-key', environment })
  return secret
}
