import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import {
  credentials, sellers, stores, type CredentialKind, type Environment, type SellerCredentialKind
} from '../db/schema.js'
import type { Tx } from '../db/client.js'
import { prepared } from '../db/statements.js'
import { generateSecret, parseSecret, secretMatches } from './secret.js'

/** Who is calling: what a verified credential resolves to. */
export interface Caller {
  credentialId: number
  sellerId: number
  kind: SellerCredentialKind
  environment: Environment
  /** Null: every store of the seller. */
  storeIds: number[] | null
}

export class CredentialError extends Error {
  override name = 'CredentialError'
}

/** The marketplace's own backend: a platform key, bound to no seller (docs/platform/api.md, "Credentials"). */
export interface PlatformCaller {
  credentialId: number
  environment: Environment
}

export type IssueInput = {
  sellerId: number
  kind: SellerCredentialKind
  environment: Environment
  storeIds?: number[] | null
  label?: string | null
} | {
  sellerId?: undefined
  kind: 'platform-key'
  environment: Environment
  storeIds?: undefined
  label?: string | null
}

/** Issues a credential; the secret is returned here once and never stored. */
export async function issueCredential (tx: Tx, input: IssueInput): Promise<{ id: number, secret: string }> {
  if (input.kind === 'platform-key') {
    if (input.sellerId !== undefined) throw new CredentialError('A platform key belongs to no seller')
    return insertCredential(tx, {
      sellerId: null,
      kind: input.kind,
      environment: input.environment,
      storeIds: null,
      label: input.label ?? null
    })
  }
  const [seller] = await tx.select({ id: sellers.id }).from(sellers).where(eq(sellers.id, input.sellerId))
  if (!seller) throw new CredentialError(`No seller with companyId ${input.sellerId}`)
  const storeIds = input.storeIds && input.storeIds.length > 0
    ? [...new Set(input.storeIds)].sort((a, b) => a - b)
    : null
  if (storeIds) {
    const own = await tx.select({ id: stores.id }).from(stores)
      .where(and(eq(stores.sellerId, input.sellerId), inArray(stores.id, storeIds)))
    const ownIds = new Set(own.map((s) => s.id))
    const foreign = storeIds.filter((id) => !ownIds.has(id))
    if (foreign.length > 0) throw new CredentialError(`Store(s) ${foreign.join(', ')} do not belong to seller ${input.sellerId}`)
  }
  return insertCredential(tx, {
    sellerId: input.sellerId,
    kind: input.kind,
    environment: input.environment,
    storeIds,
    label: input.label ?? null
  })
}

async function insertCredential (tx: Tx, values: {
  sellerId: number | null
  kind: CredentialKind
  environment: Environment
  storeIds: number[] | null
  label: string | null
}): Promise<{ id: number, secret: string }> {
  const { secret, keyId, secretHash } = generateSecret(values.kind, values.environment)
  const [row] = await tx.insert(credentials).values({ ...values, keyId, secretHash }).returning({ id: credentials.id })
  return { id: row.id, secret }
}

export async function listCredentials (tx: Tx, sellerId?: number) {
  return tx.select({
    id: credentials.id,
    sellerId: credentials.sellerId,
    kind: credentials.kind,
    environment: credentials.environment,
    keyId: credentials.keyId,
    storeIds: credentials.storeIds,
    label: credentials.label,
    createdAt: credentials.createdAt,
    revokedAt: credentials.revokedAt,
    lastUsedAt: credentials.lastUsedAt
  }).from(credentials)
    .where(sellerId === undefined ? undefined : eq(credentials.sellerId, sellerId))
    .orderBy(asc(credentials.id))
}

/** Revokes; false when there is no such credential or it was already revoked. */
export async function revokeCredential (tx: Tx, id: number): Promise<boolean> {
  const rows = await tx.update(credentials).set({ revokedAt: sql`now()` })
    .where(and(eq(credentials.id, id), isNull(credentials.revokedAt))).returning({ id: credentials.id })
  return rows.length > 0
}

type CredentialRow = {
  id: number
  sellerId: number | null
  kind: CredentialKind
  environment: Environment
  secretHash: string
  storeIds: number[] | null
  revoked: boolean
  lastUsedStale: boolean
}

/** last_used_at is written at most this often per credential, not on every request. */
const LAST_USED_GRANULARITY = '60 seconds'

/**
 * The caller behind a presented secret, or null when it is unknown, malformed, revoked, of another kind
 * or of another environment. Callers answer every null the same way (401), so nothing leaks about why.
 */
export async function verifyCredential (
  tx: Tx, secret: string, expected: { kind: SellerCredentialKind, environment: Environment }
): Promise<Caller | null> {
  const row = await verifiedRow(tx, secret, expected)
  // The CHECK makes a seller kind without a seller impossible; the test keeps the type honest.
  if (!row || row.sellerId === null || row.kind === 'platform-key') return null
  return {
    credentialId: row.id, sellerId: row.sellerId, kind: row.kind, environment: row.environment, storeIds: row.storeIds
  }
}

/** The platform key behind a presented secret, or null on every other case (answered 401 alike). */
export async function verifyPlatformKey (
  tx: Tx, secret: string, environment: Environment
): Promise<PlatformCaller | null> {
  const row = await verifiedRow(tx, secret, { kind: 'platform-key', environment })
  if (!row || row.sellerId !== null) return null
  return { credentialId: row.id, environment: row.environment }
}

async function verifiedRow (
  tx: Tx, secret: string, expected: { kind: CredentialKind, environment: Environment }
): Promise<CredentialRow | null> {
  const parsed = parseSecret(secret)
  if (!parsed || parsed.kind !== expected.kind || parsed.environment !== expected.environment) return null
  // Prepared (one parse and plan per connection), and written as one template rather than through the
  // query builder: this runs before every authenticated request, so its cost is paid on every page.
  const [row] = await prepared<CredentialRow>(tx, sql`select id, seller_id as "sellerId", kind, environment,
      secret_hash as "secretHash", store_ids as "storeIds", revoked_at is not null as revoked,
      (last_used_at is null or last_used_at < now() - interval '${sql.raw(LAST_USED_GRANULARITY)}') as "lastUsedStale"
    from credentials where key_id = ${parsed.keyId}`)
  if (!row || !secretMatches(secret, row.secretHash)) return null
  if (row.revoked || row.kind !== expected.kind || row.environment !== expected.environment) return null
  // Only a stale last_used_at is written, so a busy client costs one statement per request, not two.
  if (row.lastUsedStale) {
    await tx.update(credentials).set({ lastUsedAt: sql`now()` }).where(and(eq(credentials.id, row.id),
      sql`(${credentials.lastUsedAt} is null or ${credentials.lastUsedAt} < now() - interval '${sql.raw(LAST_USED_GRANULARITY)}')`))
  }
  return row
}
