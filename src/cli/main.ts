import { parseArgs } from 'node:util'
import { ConfigError, loadConfig, type Config } from '../config.js'
import { connect, type Connection } from '../db/connect.js'
import { migrate } from '../db/migrate.js'
import { EmbeddedPostgresError } from '../db/embedded.js'
import { CredentialError, issueCredential, listCredentials, revokeCredential } from '../credentials/service.js'
import { DEFAULT_ANCHOR, seed } from '../seed/seed.js'
import { EXIT, usage } from './commands.js'
import { runWorker } from './worker-command.js'

const USAGE = usage()

export class UsageError extends Error {}

function positiveInt (value: string | undefined, name: string, fallback?: number): number {
  if (value === undefined) {
    if (fallback === undefined) throw new UsageError(`${name} is required`)
    return fallback
  }
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a whole number, got ${JSON.stringify(value)}`)
  return Number(value)
}

async function withConnection<T> (config: Config, fn: (c: Connection) => Promise<T>): Promise<T> {
  // Administration connects directly (WORKER_DATABASE_URL when set): migrations take a session lock.
  const connection = await connect(config, { max: 4, direct: true })
  try {
    return await fn(connection)
  } finally {
    await connection.close()
  }
}

type Out = (line: string) => void

/** Runs one CLI command. Output goes through `out` (stdout) and `err` (stderr) so tests can read it. */
export async function runCli (argv: string[], env: Record<string, string | undefined>, out: Out,
  err: Out): Promise<number> {
  const [command, ...rest] = argv
  try {
    if (!command || command === '--help' || command === 'help') {
      out(USAGE)
      return command ? EXIT.done : EXIT.failed
    }
    const config = loadConfig(env)
    switch (command) {
      case 'migrate': {
        parseArgs({ args: rest, options: {}, strict: true })
        await withConnection(config, async ({ database }) => { await migrate(database.url) })
        err('migrations applied')
        return EXIT.done
      }
      case 'seed': {
        const { values } = parseArgs({
          args: rest,
          options: { orders: { type: 'string' }, seed: { type: 'string' }, anchor: { type: 'string' }, json: { type: 'boolean' } },
          strict: true
        })
        const orders = positiveInt(values.orders, '--orders', 1000)
        const seedValue = positiveInt(values.seed, '--seed', 1)
        const anchor = values.anchor ? new Date(values.anchor) : DEFAULT_ANCHOR
        if (Number.isNaN(anchor.getTime())) throw new UsageError(`--anchor must be an ISO-8601 date, got ${JSON.stringify(values.anchor)}`)
        const started = Date.now()
        const summary = await withConnection(config, async ({ database }) => {
          await migrate(database.url)
          return seed(database, {
            orders, seed: seedValue, anchor, autoRejectAfterMs: config.AUTO_REJECT_AFTER_MS, log: err
          })
        })
        if (values.json) out(JSON.stringify(summary, null, 2))
        else {
          for (const s of summary.sellers) {
            out(`companyId ${s.companyId}  ${s.name}  status=${s.status}  points=${s.pointsBalance}  stores=${s.storeIds.join(',')}  orders=${s.orderCount}`)
          }
        }
        err(`seeded ${summary.orders} orders (${summary.orderItems} items) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
        return EXIT.done
      }
      case 'credentials':
        return await credentialsCommand(config, rest, out, err)
      case 'worker':
        parseArgs({ args: rest, options: {}, strict: true })
        return await runWorker(config)
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`)
    }
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err(`order-exchange: ${(e as Error).message}\n\n${USAGE}`)
      return EXIT.usage
    }
    if (e instanceof ConfigError || e instanceof CredentialError || e instanceof EmbeddedPostgresError) {
      err(`order-exchange: ${(e as Error).message}`)
      return EXIT.failed
    }
    err(`order-exchange: ${command} failed: ${(e as Error).message}`)
    return EXIT.failed
  }
}

async function credentialsCommand (config: Config, args: string[], out: Out, err: Out): Promise<number> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'issue': {
      const { values } = parseArgs({
        args: rest,
        options: { seller: { type: 'string' }, kind: { type: 'string' }, environment: { type: 'string' }, stores: { type: 'string' }, label: { type: 'string' } },
        strict: true
      })
      const environment = values.environment ?? config.ORDER_EXCHANGE_ENV
      if (environment !== 'testing' && environment !== 'production') throw new UsageError('--environment must be testing or production')
      if (values.kind === 'platform-key') {
        if (values.seller !== undefined || values.stores !== undefined) {
          throw new UsageError('a platform key belongs to no seller: --seller and --stores do not apply')
        }
        const issued = await withConnection(config, ({ database }) =>
          issueCredential(database.db, { kind: 'platform-key', environment, label: values.label ?? null }))
        out(issued.secret)
        err(`issued platform-key #${issued.id} (${environment}); the secret is shown only now`)
        return EXIT.done
      }
      if (values.kind !== 'access-token' && values.kind !== 'api-key') {
        throw new UsageError('--kind must be access-token, api-key or platform-key')
      }
      const kind = values.kind
      const sellerId = positiveInt(values.seller, '--seller')
      const storeIds = values.stores === undefined ? null : values.stores.split(',').map((s) => positiveInt(s.trim(), '--stores'))
      const issued = await withConnection(config, ({ database }) =>
        issueCredential(database.db, { sellerId, kind, environment, storeIds, label: values.label ?? null }))
      out(issued.secret)
      err(`issued ${kind} #${issued.id} for seller ${sellerId} (${environment}${storeIds ? `, stores ${storeIds.join(',')}` : ''}); the secret is shown only now`)
      return EXIT.done
    }
    case 'list': {
      const { values } = parseArgs({ args: rest, options: { seller: { type: 'string' }, json: { type: 'boolean' } }, strict: true })
      const sellerId = values.seller === undefined ? undefined : positiveInt(values.seller, '--seller')
      const rows = await withConnection(config, ({ database }) => listCredentials(database.db, sellerId))
      if (values.json) out(JSON.stringify(rows, null, 2))
      else {
        for (const r of rows) {
          out(`#${r.id}  ${r.sellerId === null ? 'platform' : `seller ${r.sellerId}`}  ${r.kind}  ${r.environment}  key ${r.keyId}  stores ${r.storeIds?.join(',') ?? 'all'}  ` +
            `${r.revokedAt ? `revoked ${r.revokedAt.toISOString()}` : 'active'}  last used ${r.lastUsedAt?.toISOString() ?? 'never'}`)
        }
      }
      return EXIT.done
    }
    case 'revoke': {
      const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true, strict: true })
      if (positionals.length !== 1) throw new UsageError('credentials revoke takes one credential id')
      const id = positiveInt(positionals[0], 'credential id')
      const revoked = await withConnection(config, ({ database }) => revokeCredential(database.db, id))
      if (!revoked) { err(`order-exchange: no active credential #${id}`); return EXIT.failed }
      err(`credential #${id} revoked`)
      return EXIT.done
    }
    default:
      throw new UsageError('credentials takes issue, list or revoke')
  }
}
