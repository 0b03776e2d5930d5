import { sql } from 'drizzle-orm'
import { ConfigError, type Config } from '../config.js'
import type { Db } from '../db/client.js'
import { operatorSigningKey } from '../outbound/standard-signature.js'
import { startCursorsAtLogEnd } from './dispatch.js'
import type { OperatorEndpoint } from './deliverer.js'

/*
 * The subscriptions for every seller are rows of the database (migration 0021 made them), so that their
 * deliveries share the one queue, cursor and log with the sellers' own endpoints. The notification channels
 * are always on (their transport, the log by default, is the configuration's). The operator's endpoint is
 * on while the configuration names one: a worker starting with WEBHOOK_URL enables it (from the log's end:
 * it hears what is recorded from then on), one starting without disables it.
 */

/** The operator's endpoint this configuration names, or null; throws a ConfigError when it is incomplete. */
export function operatorEndpointOf (config: Config): OperatorEndpoint | null {
  if (config.WEBHOOK_URL === undefined) return null
  if (config.WEBHOOK_SECRET === undefined) {
    throw new ConfigError('Invalid configuration: WEBHOOK_URL needs WEBHOOK_SECRET (at least 16 characters)')
  }
  let key: Uint8Array
  try {
    key = operatorSigningKey(config.WEBHOOK_SECRET)
  } catch (err) {
    throw new ConfigError(`Invalid configuration: WEBHOOK_SECRET: ${(err as Error).message}`)
  }
  return { url: config.WEBHOOK_URL, key }
}

/** Enables or disables the operator's subscription as `operator` says; on one transaction. */
export async function applyOperatorEndpoint (db: Db, operator: OperatorEndpoint | null): Promise<void> {
  await db.transaction(async (tx) => {
    if (operator === null) {
      await tx.execute(sql`update subscriptions set status = 'DISABLED', disabled_reason = 'WEBHOOK_URL is not set',
        updated_at = now() where kind = 'operator-webhook' and status = 'ENABLED'`)
      return
    }
    const enabled = await tx.execute<{ id: string }>(sql`update subscriptions
      set status = 'ENABLED', disabled_reason = null, updated_at = now()
      where kind = 'operator-webhook' and status = 'DISABLED' returning id::text as id`)
    for (const { id } of enabled) await startCursorsAtLogEnd(tx, id)
  })
}
