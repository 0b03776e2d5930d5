import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { STANDARD_SECRET_PREFIX, standardSecretKey } from './outbound/standard-signature.js'

/**
 * The whole environment the service reads, validated once at start. The type comes from the schema,
 * so nothing is written twice.
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /**
   * How DATABASE_URL (and READ_DATABASE_URL) reach PostgreSQL. `session`: directly, or through a
   * session-pooling PgBouncer. `transaction`: through a transaction-pooling PgBouncer, where a server
   * connection is someone else's after each transaction: statements then go unprepared (PgBouncer before
   * 1.21 cannot route named prepared statements), the session timeouts are not sent as startup parameters
   * (PgBouncer refuses them: set them on the role), and whatever needs a session of its own — the
   * effects worker (LISTEN), its liveness locks, the migration lock — uses WORKER_DATABASE_URL.
   */
  DATABASE_POOL_MODE: Type.Union([Type.Literal('session'), Type.Literal('transaction')], { default: 'session' }),
  /**
   * A direct, session-level connection to the primary for graphile-worker (LISTEN/NOTIFY), the workers'
   * liveness locks and migrations. Unset: DATABASE_URL. Required when DATABASE_POOL_MODE=transaction.
   */
  WORKER_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /**
   * A streaming replica (or a pool of them behind one address) for the GraphQL reads: orders,
   * outstandingShipments, seller. Writes, credentials and the REST endpoints stay on DATABASE_URL.
   */
  READ_DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /**
   * A read goes to the primary instead when the replica is further behind than this (or its lag is
   * unknown): a replica read then misses at most the writes of the last READ_MAX_LAG_MS +
   * REPLICA_LAG_POLL_MS milliseconds.
   */
  READ_MAX_LAG_MS: Type.Integer({ minimum: 0, default: 1_000 }),
  /** How often the replica's lag is measured (both servers' WAL positions). */
  REPLICA_LAG_POLL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 250 }),
  ORDER_EXCHANGE_ENV: Type.Union([Type.Literal('testing'), Type.Literal('production')], { default: 'testing' }),
  BUSINESS_TIMEZONE: Type.String({ minLength: 1, default: 'UTC' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' }
  ),
  /** Where the embedded PostgreSQL keeps its data when DATABASE_URL is not set. */
  DATA_DIR: Type.String({ minLength: 1, default: '.data' }),
  EMBEDDED_PG_PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 54329 }),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  /**
   * Session timeouts of every pool (0 = none). A statement past DB_STATEMENT_TIMEOUT_MS, or waiting for a
   * row lock longer than DB_LOCK_TIMEOUT_MS, is stopped: a status update reports that order's
   * `Order could not be updated`, anything else answers 503 TIMEOUT. A transaction left idle longer than
   * DB_IDLE_IN_TRANSACTION_TIMEOUT_MS is ended by PostgreSQL, so a stuck client can never hold locks.
   */
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 15_000 }),
  DB_LOCK_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 5_000 }),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 60_000 }),
  /** How long a client may take to send a whole request (headers and body); 0 = no limit. */
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 120_000 }),
  /**
   * Rate limits per credential. The REST endpoints count requests per minute; GraphQL spends query cost
   * from a bucket of points that refills at a steady rate (Shopify's model). Shared by every instance
   * through Redis when REDIS_URL is set, else counted in this process.
   */
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true }),
  RATE_LIMIT_STATUS_UPDATE_PER_MINUTE: Type.Integer({ minimum: 1, default: 120 }),
  RATE_LIMIT_SYNC_PER_MINUTE: Type.Integer({ minimum: 1, default: 30 }),
  RATE_LIMIT_PLATFORM_PER_MINUTE: Type.Integer({ minimum: 1, default: 600 }),
  /** Per credential and webhook endpoint route (create, list, test, replay …). */
  RATE_LIMIT_WEBHOOKS_PER_MINUTE: Type.Integer({ minimum: 1, default: 120 }),
  /**
   * The GraphQL bucket: at most this many points. A full page of 100 orders asks for about 85,000 and is
   * billed about 17,000 for orders of 3 lines (bench/results/2026-11-25-graphql-cost.md)…
   */
  GRAPHQL_COST_BUCKET: Type.Integer({ minimum: 100_000, default: 2_400_000 }),
  /**
   * …refilled at this many points a second: above what one client walking pages one at a time spends on
   * this hardware (about 1,000,000 a second), below what a parallel flood of one credential does (up to
   * 2,100,000), so the careful client is never refused and a flood is held to about 70 full pages a second.
   */
  GRAPHQL_COST_RESTORE_PER_SECOND: Type.Integer({ minimum: 1, default: 1_200_000 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /**
   * GraphQL pass-through (graphql/pass-through.ts): PostgreSQL writes the JSON of `orders` and
   * `outstandingShipments` answers and the server splices it in. Off: every query runs through the
   * standard execution (same bytes, more CPU).
   */
  GRAPHQL_PASS_THROUGH: Type.Boolean({ default: true }),
  /**
   * Prometheus metrics: GET /metrics on the API port for a caller with `Authorization: Bearer METRICS_TOKEN`,
   * and/or on a separate admin port (METRICS_PORT, on METRICS_HOST) without a token. Neither: not served.
   */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  /**
   * Load shedding (@fastify/under-pressure): past these, requests are answered 503 OVERLOADED with
   * Retry-After (and /health/ready is 503) until the process recovers, instead of falling over.
   */
  SHED_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000 }),
  SHED_HEAP_USED_BYTES: Type.Integer({ minimum: 0, default: 900 * 1024 * 1024 }),
  /** Prefix of this deployment's Redis keys, so several deployments may share one Redis. */
  REDIS_KEY_PREFIX: Type.String({ minLength: 1, default: 'oxs:' }),
  /** Seed demo data into an empty embedded database at start. */
  SEED_DEMO: Type.Boolean({ default: true }),
  /** Run the graphile-worker effects worker inside the API process. */
  WORKER_ENABLED: Type.Boolean({ default: true }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  /**
   * Days an event of the sellers' logs is kept (GraphQL `events`); an hourly job of the worker removes
   * older ones, oldest first, so what is kept of a seller's log never has a hole.
   */
  EVENT_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** Milliseconds after placement at which an order not yet accepted is rejected (0 = off). */
  AUTO_REJECT_AFTER_MS: Type.Integer({ minimum: 0, default: 24 * 60 * 60 * 1000 }),
  /** How often the worker looks for jobs that came due (scheduled jobs, retries); new jobs arrive by LISTEN at once. */
  WORKER_POLL_INTERVAL_MS: Type.Integer({ minimum: 50, default: 2000 }),
  /** How often a worker releases the jobs of workers that died mid-job (graphile-worker alone waits 4 hours). */
  WORKER_RECOVERY_INTERVAL_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /**
   * Notification transport per channel: log (records only), whatsapp-cloud (the retailer channels). `webhook`
   * is refused at start, naming its replacement (WEBHOOK_URL below).
   */
  NOTIFY_SELLER_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook')], { default: 'log' }),
  NOTIFY_CUSTOMER_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook'), Type.Literal('whatsapp-cloud')], { default: 'log' }),
  NOTIFY_MESSAGING_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook'), Type.Literal('whatsapp-cloud')], { default: 'log' }),
  /**
   * The operator's endpoint for every seller: each event of every seller's log is POSTed there once, as a
   * seller's endpoint gets it, signed the Standard Webhooks way with WEBHOOK_SECRET (required with it):
   * `whsec_` + base64 of at least 16 bytes is a Standard Webhooks secret; any other text is a key of its own
   * (its UTF-8 bytes). Unset: the operator's subscription is disabled.
   */
  WEBHOOK_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  WEBHOOK_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /**
   * The key the sellers' webhook signing secrets are encrypted with at rest (AES-256-GCM): base64 of 32
   * random bytes (`openssl rand -base64 32`). Unset in testing: a fixed development key, not a secret. Unset
   * in production: endpoints cannot be created (503 WEBHOOKS_NOT_CONFIGURED) and nothing is delivered.
   */
  WEBHOOK_SECRETS_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
  /**
   * Let the sellers' endpoints be http:// and on loopback or private addresses (a developer's receiver on
   * localhost). Off unless set, in every environment: on, any key holder can point an endpoint at a
   * service inside the network and read its answer's first bytes in the delivery log (server-side request
   * forgery). Only https:// to public addresses is sent otherwise.
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Optional(Type.Boolean()),
  /** How long an endpoint has to answer an event with a 2xx (the attempt fails after it). */
  WEBHOOK_DELIVERY_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 15_000 }),
  /** Deliveries in flight at once per worker process, across all endpoints. */
  WEBHOOK_DELIVERY_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 64 }),
  /** Meta WhatsApp Cloud API: base URL (with version), sending phone number id, access token, templates. */
  WHATSAPP_API_BASE_URL: Type.String({ pattern: '^https?://', default: 'https://graph.facebook.com/v21.0' }),
  WHATSAPP_PHONE_NUMBER_ID: Type.Optional(Type.String({ minLength: 1 })),
  WHATSAPP_ACCESS_TOKEN: Type.Optional(Type.String({ minLength: 1 })),
  WHATSAPP_TEMPLATE_LANGUAGE: Type.String({ minLength: 1, default: 'en' }),
  WHATSAPP_TEMPLATE_ACCEPTED: Type.String({ minLength: 1, default: 'order_accepted' }),
  WHATSAPP_TEMPLATE_REJECTED: Type.String({ minLength: 1, default: 'order_rejected' }),
  WHATSAPP_TEMPLATE_COMPLETED: Type.String({ minLength: 1, default: 'order_completed' }),
  WHATSAPP_TEMPLATE_PLACED: Type.String({ minLength: 1, default: 'order_placed' }),
  WHATSAPP_TEMPLATE_CANCELLED: Type.String({ minLength: 1, default: 'order_cancelled' }),
  WHATSAPP_TEMPLATE_DELIVERED: Type.String({ minLength: 1, default: 'order_delivered' }),
  WHATSAPP_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /** The payment gateway refunds go through; manual leaves them to finance. */
  REFUND_GATEWAY: Type.Union([Type.Literal('manual')], { default: 'manual' }),
  SHUTDOWN_GRACE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
  /** Upper bound of request bodies on routes other than the bulk shipment sync. */
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  /** Upper bound of the shipment sync body: 100,000 realistic rows fit. */
  SYNC_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
  /** Serve the API reference (/docs) and GraphiQL (/graphiql); default: on in testing, off in production. */
  EXPLORER_ENABLED: Type.Optional(Type.Boolean()),
  /**
   * Browser origins allowed to call the API (CORS), comma-separated: exact (https://erp.example.com) or any
   * port (http://localhost:*), or `none`. Default: none in production; http://localhost:* and http://127.0.0.1:* in testing.
   */
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: '^\\s*(none|https?://[^\\s,/]+\\s*(,\\s*https?://[^\\s,/]+\\s*)*)$' }))
})

export type Config = Static<typeof ConfigSchema>

/** The URL of whatever needs a session of its own: the worker's queue, LISTEN, advisory locks, migrations. */
export function sessionDatabaseUrl (config: Config, primaryUrl: string): string {
  return config.WORKER_DATABASE_URL ?? primaryUrl
}

/** The session timeouts every pool's connections start with. */
export function sessionTimeouts (config: Config): { statementMs: number, lockMs: number, idleInTransactionMs: number } {
  return {
    statementMs: config.DB_STATEMENT_TIMEOUT_MS,
    lockMs: config.DB_LOCK_TIMEOUT_MS,
    idleInTransactionMs: config.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS
  }
}

/** Whether /docs and /graphiql are served. */
export function explorerEnabled (config: Config): boolean {
  return config.EXPLORER_ENABLED ?? config.ORDER_EXCHANGE_ENV === 'testing'
}

/** The browser origins allowed by CORS (besides the service's own). */
export function corsOrigins (config: Config): string[] {
  if (config.CORS_ORIGINS === undefined) return config.ORDER_EXCHANGE_ENV === 'testing' ? ['http://localhost:*', 'http://127.0.0.1:*'] : []
  if (config.CORS_ORIGINS.trim() === 'none') return []
  return config.CORS_ORIGINS.split(',').map((o) => o.trim()).filter((o) => o !== '')
}

/** Whether the sellers' webhook endpoints may be http:// and private addresses: an explicit opt-in only. */
export function webhookPrivateNetworksAllowed (config: Config): boolean {
  return config.WEBHOOK_ALLOW_PRIVATE_NETWORKS === true
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads and validates config from an environment; throws one ConfigError naming the variable. */
export function loadConfig (env: Record<string, string | undefined> = process.env): Config {
  const input: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties)) {
    const raw = env[key]
    if (raw !== undefined && raw !== '') input[key] = raw
  }
  const withDefaults = Value.Default(ConfigSchema, Value.Convert(ConfigSchema, input))
  const first = Value.Errors(ConfigSchema, withDefaults).First()
  if (first) {
    const name = first.path.replace(/^\//, '') || 'environment'
    const given = input[name]
    throw new ConfigError(
      `Invalid configuration: ${name}${given === undefined ? '' : `=${JSON.stringify(given)}`}: ${first.message}`
    )
  }
  const config = withDefaults as Config
  if (config.DATABASE_POOL_MODE === 'transaction' && !config.WORKER_DATABASE_URL) {
    throw new ConfigError('Invalid configuration: DATABASE_POOL_MODE=transaction needs WORKER_DATABASE_URL, a direct ' +
      'session-level connection for the effects worker (LISTEN), its liveness locks and migrations')
  }
  if (config.DATABASE_POOL_MODE === 'transaction' && !config.DATABASE_URL) {
    throw new ConfigError('Invalid configuration: DATABASE_POOL_MODE=transaction needs DATABASE_URL (the embedded PostgreSQL has no pooler)')
  }
  if (config.WEBHOOK_SECRET?.startsWith(STANDARD_SECRET_PREFIX)) {
    const problem = standardSecretProblem(config.WEBHOOK_SECRET)
    if (problem) throw new ConfigError(`Invalid configuration: WEBHOOK_SECRET: ${problem}`)
  }
  if (!isTimeZone(config.BUSINESS_TIMEZONE)) {
    throw new ConfigError(
      `Invalid configuration: BUSINESS_TIMEZONE=${JSON.stringify(config.BUSINESS_TIMEZONE)}: not an IANA time zone (e.g. Asia/Kolkata)`
    )
  }
  return config
}

/** Why a whsec_ WEBHOOK_SECRET cannot be used (null: it can); never quotes the secret. */
function standardSecretProblem (secret: string): string | null {
  let key: Uint8Array
  try {
    key = standardSecretKey(secret)
  } catch (err) {
    return `${(err as Error).message}, e.g. whsec_ and the output of \`openssl rand -base64 32\``
  }
  return key.length < 16 ? `a Standard Webhooks secret of ${key.length} bytes: at least 16 are needed` : null
}

function isTimeZone (tz: string): boolean {
  try {
    return Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone !== ''
  } catch {
    return false
  }
}
