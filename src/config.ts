import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { STANDARD_SECRET_PREFIX, standardSecretKey } from './outbound/standard-signature.js'

/**
 * The whole environment the service reads, validated once at start. The type comes from the schema,
 * so nothing is written twice; each variable's `description` is what docs/operate/configuration-reference.md
 * says of it (scripts/generate-docs.ts), so the operator's table is written here too.
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'HTTP port' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Listen address (`0.0.0.0` in a container)' }),
  DATABASE_URL: Type.Optional(Type.String({
    pattern: '^postgres(ql)?://',
    description: 'PostgreSQL (15+) to use. Unset: the embedded PostgreSQL under `DATA_DIR`'
  })),
  /**
   * `session`: directly, or through a session-pooling PgBouncer. `transaction`: through a transaction-pooling
   * PgBouncer, where a server connection is someone else's after each transaction: statements then go
   * unprepared (PgBouncer before 1.21 cannot route named prepared statements), the session timeouts are not
   * sent as startup parameters (PgBouncer refuses them: set them on the role), and whatever needs a session of
   * its own — the effects worker (LISTEN), its liveness locks, the migration lock — uses WORKER_DATABASE_URL.
   */
  DATABASE_POOL_MODE: Type.Union([Type.Literal('session'), Type.Literal('transaction')], {
    default: 'session',
    description: 'How `DATABASE_URL` (and `READ_DATABASE_URL`) reach PostgreSQL. `transaction` when they go through ' +
      'a transaction-pooling PgBouncer: statements unprepared, no startup-parameter timeouts (set them on the role), ' +
      'sessions on `WORKER_DATABASE_URL`'
  }),
  WORKER_DATABASE_URL: Type.Optional(Type.String({
    pattern: '^postgres(ql)?://',
    description: 'A direct session-level connection to the primary: the worker\'s queue (LISTEN), its liveness locks, ' +
      'migrations, the CLI, a worker process\'s pool. Unset: `DATABASE_URL`. Required with `DATABASE_POOL_MODE=transaction`'
  })),
  /** Writes, credentials and the REST endpoints stay on DATABASE_URL. */
  READ_DATABASE_URL: Type.Optional(Type.String({
    pattern: '^postgres(ql)?://',
    description: 'A streaming replica (or a pool of them behind one address) for the GraphQL reads ' +
      '(`orders`, `outstandingShipments`, `seller`)'
  })),
  /**
   * A replica read then misses at most the writes of the last READ_MAX_LAG_MS + REPLICA_LAG_POLL_MS
   * milliseconds.
   */
  READ_MAX_LAG_MS: Type.Integer({
    minimum: 0,
    default: 1_000,
    description: 'Reads go to the primary while the replica is further behind than this, in milliseconds (or its lag is unknown)'
  }),
  REPLICA_LAG_POLL_MS: Type.Integer({
    minimum: 50,
    maximum: 60_000,
    default: 250,
    description: 'How often the replica\'s lag is measured (both servers\' WAL positions)'
  }),
  ORDER_EXCHANGE_ENV: Type.Union([Type.Literal('testing'), Type.Literal('production')], {
    default: 'testing',
    description: 'The environment this deployment serves; credentials of the other one are refused'
  }),
  BUSINESS_TIMEZONE: Type.String({
    minLength: 1, default: 'UTC', description: 'IANA zone in which `fromDate`/`toDate` are whole days'
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino level' }
  ),
  DATA_DIR: Type.String({
    minLength: 1, default: '.data', description: 'Where the embedded PostgreSQL keeps its data when `DATABASE_URL` is unset'
  }),
  EMBEDDED_PG_PORT: Type.Integer({
    minimum: 1, maximum: 65535, default: 54329, description: 'Port of the embedded PostgreSQL (127.0.0.1 only)'
  }),
  DB_POOL_MAX: Type.Integer({ minimum: 1, maximum: 200, default: 10, description: 'Connections in the pool' }),
  /** Session timeouts of every pool: a stuck statement or client can never hold locks for long. */
  DB_STATEMENT_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 15_000,
    description: 'A statement running longer is stopped (0 = none): a status update reports that order\'s ' +
      '`Order could not be updated`, anything else answers 503 `TIMEOUT`'
  }),
  DB_LOCK_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 5_000,
    description: 'A statement waiting for a row lock longer is stopped, as with `DB_STATEMENT_TIMEOUT_MS` (0 = none)'
  }),
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 60_000,
    description: 'A transaction left idle longer is ended by PostgreSQL (0 = none)'
  }),
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 0,
    default: 120_000,
    description: 'How long a client may take to send a whole request, headers and body (0 = no limit)'
  }),
  /**
   * Rate limits per credential. The REST endpoints count requests per minute; GraphQL spends query cost
   * from a bucket of points that refills at a steady rate (Shopify's model). Shared by every instance
   * through Redis when REDIS_URL is set, else counted in this process.
   */
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true, description: 'Rate limits per credential' }),
  RATE_LIMIT_STATUS_UPDATE_PER_MINUTE: Type.Integer({
    minimum: 1, default: 120, description: 'Status update requests per minute per credential'
  }),
  RATE_LIMIT_SYNC_PER_MINUTE: Type.Integer({
    minimum: 1, default: 30, description: 'Sync requests (outstanding shipments, sync IDs) per minute per credential, on each sync route'
  }),
  RATE_LIMIT_PLATFORM_PER_MINUTE: Type.Integer({
    minimum: 1, default: 600, description: 'Requests per minute per platform key, on each platform route'
  }),
  RATE_LIMIT_WEBHOOKS_PER_MINUTE: Type.Integer({
    minimum: 1, default: 120, description: 'Requests per minute per API key, on each webhook endpoint route (create, list, test, replay …)'
  }),
  /**
   * A full page of 100 orders asks for about 85,000 points and is billed about 17,000 for orders of 3 lines
   * (bench/results/2026-11-25-graphql-cost.md)…
   */
  GRAPHQL_COST_BUCKET: Type.Integer({
    minimum: 100_000,
    default: 2_400_000,
    description: 'The GraphQL cost budget per credential: at most this many points. A bucket below 150,000 (the ' +
      'largest query) refuses the largest queries (an introspection) for ever'
  }),
  /**
   * …refilled at this many points a second: above what one client walking pages one at a time spends on
   * this hardware (about 1,000,000 a second), below what a parallel flood of one credential does (up to
   * 2,100,000), so the careful client is never refused and a flood is held to about 70 full pages a second.
   */
  GRAPHQL_COST_RESTORE_PER_SECOND: Type.Integer({
    minimum: 1, default: 1_200_000, description: 'Points a second the GraphQL cost bucket refills'
  }),
  REDIS_URL: Type.Optional(Type.String({
    pattern: '^rediss?://',
    description: 'Redis shared by every instance for the rate limits. Unset: each process counts its own'
  })),
  /** graphql/pass-through.ts: the server splices PostgreSQL's JSON text into the answer. */
  GRAPHQL_PASS_THROUGH: Type.Boolean({
    default: true,
    description: 'PostgreSQL writes the JSON of `orders`/`outstandingShipments`/`events` answers; `false`: ' +
      'standard execution only (same bytes, more CPU)'
  }),
  /** Neither METRICS_TOKEN nor METRICS_PORT: /metrics is not served. */
  METRICS_TOKEN: Type.Optional(Type.String({
    minLength: 16,
    description: 'Who may read `GET /metrics` on the API port: with `Authorization: Bearer` and this token. Unset: not served there'
  })),
  METRICS_PORT: Type.Optional(Type.Integer({
    minimum: 1, maximum: 65535, description: 'An admin port that serves `/metrics` without a token, on `METRICS_HOST`'
  })),
  METRICS_HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Address the admin port (`METRICS_PORT`) is bound to' }),
  /**
   * Load shedding (@fastify/under-pressure): past these, requests are answered 503 OVERLOADED with
   * Retry-After (and /health/ready is 503) until the process recovers, instead of falling over.
   */
  SHED_EVENT_LOOP_DELAY_MS: Type.Integer({
    minimum: 0,
    default: 1000,
    description: 'Event loop delay past which requests are answered 503 `OVERLOADED` until the process recovers (0 = off)'
  }),
  SHED_HEAP_USED_BYTES: Type.Integer({
    minimum: 0,
    default: 900 * 1024 * 1024,
    description: 'Heap used past which requests are answered 503 `OVERLOADED` until the process recovers (0 = off)'
  }),
  REDIS_KEY_PREFIX: Type.String({
    minLength: 1, default: 'oxs:', description: 'Prefix of this deployment\'s Redis keys, so several deployments may share one Redis'
  }),
  SEED_DEMO: Type.Boolean({ default: true, description: 'Load demo data into an empty embedded database at start' }),
  WORKER_ENABLED: Type.Boolean({ default: true, description: 'Run the effects worker inside the API process' }),
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 5, description: 'Jobs the worker runs at once' }),
  /** Oldest first, so what is kept of a seller's log never has a hole. */
  EVENT_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 30,
    description: 'Days the sellers\' events are kept (GraphQL `events`); the worker\'s hourly `prune-events` job ' +
      'removes older ones, oldest first'
  }),
  AUTO_REJECT_AFTER_MS: Type.Integer({
    minimum: 0,
    default: 24 * 60 * 60 * 1000,
    description: 'Milliseconds after placement at which an order not acted on is rejected (0 = off)'
  }),
  WORKER_POLL_INTERVAL_MS: Type.Integer({
    minimum: 50,
    default: 2000,
    description: 'How often the worker looks for jobs that came due (retries, auto-rejections); new jobs arrive at once (LISTEN)'
  }),
  /** graphile-worker alone waits 4 hours before it frees a dead worker's jobs. */
  WORKER_RECOVERY_INTERVAL_MS: Type.Integer({
    minimum: 100,
    default: 10_000,
    description: 'How often a worker releases the jobs of a worker that died mid-job'
  }),
  /** `webhook` stays in the unions so that the start names its replacement (effects/transports/factory.ts). */
  NOTIFY_SELLER_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook')], {
    default: 'log',
    description: '`log` (records only). `webhook` was removed: it stops the start, naming `WEBHOOK_URL`'
  }),
  NOTIFY_CUSTOMER_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook'), Type.Literal('whatsapp-cloud')], {
    default: 'log',
    description: '`log` (records only) or `whatsapp-cloud`. `webhook` was removed: it stops the start, naming `WEBHOOK_URL`'
  }),
  NOTIFY_MESSAGING_TRANSPORT: Type.Union([Type.Literal('log'), Type.Literal('webhook'), Type.Literal('whatsapp-cloud')], {
    default: 'log',
    description: '`log` (records only) or `whatsapp-cloud`. `webhook` was removed: it stops the start, naming `WEBHOOK_URL`'
  }),
  WEBHOOK_URL: Type.Optional(Type.String({
    pattern: '^https?://',
    description: 'The operator\'s endpoint for every seller: each event of every seller\'s log is POSTed there once, as a ' +
      'seller\'s endpoint gets it, signed with `WEBHOOK_SECRET` (required with it). Unset: the operator\'s subscription is disabled'
  })),
  WEBHOOK_SECRET: Type.Optional(Type.String({
    minLength: 16,
    description: 'What the operator\'s endpoint is signed with, the Standard Webhooks way: `whsec_` + base64 of at ' +
      'least 16 bytes is a Standard Webhooks secret; any other text is a key of its own (its UTF-8 bytes)'
  })),
  WEBHOOK_SECRETS_KEY: Type.Optional(Type.String({
    pattern: '^[A-Za-z0-9+/]{43}=$',
    description: 'The key the sellers\' webhook signing secrets are encrypted with at rest (AES-256-GCM): base64 of 32 ' +
      'random bytes (`openssl rand -base64 32`). Unset in `testing`: a fixed development key, not a secret. Unset in ' +
      '`production`: endpoints cannot be created (503 `WEBHOOKS_NOT_CONFIGURED`) and nothing is delivered'
  })),
  /**
   * On, any key holder can point an endpoint at a service inside the network and read its answer's first
   * bytes in the delivery log (server-side request forgery).
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: Type.Optional(Type.Boolean({
    description: '`true`: let the sellers\' endpoints be `http://` and on loopback or private addresses (a ' +
      'developer\'s receiver on localhost). Off unless set, in every environment; never in a shared deployment: any ' +
      'key holder could then read an internal service\'s answer in the delivery log. Off, only `https://` to public ' +
      'addresses is sent'
  })),
  WEBHOOK_DELIVERY_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60_000,
    default: 15_000,
    description: 'How long an endpoint has to answer an event with a 2xx (the attempt fails after it)'
  }),
  WEBHOOK_DELIVERY_CONCURRENCY: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 64,
    description: 'Deliveries in flight at once per worker process, across all endpoints'
  }),
  WHATSAPP_API_BASE_URL: Type.String({
    pattern: '^https?://',
    default: 'https://graph.facebook.com/v21.0',
    description: 'Meta WhatsApp Cloud API base URL, with its version (a local stand-in in tests)'
  }),
  WHATSAPP_PHONE_NUMBER_ID: Type.Optional(Type.String({
    minLength: 1, description: 'The sending phone number\'s id; required when a channel uses `whatsapp-cloud`'
  })),
  WHATSAPP_ACCESS_TOKEN: Type.Optional(Type.String({
    minLength: 1, description: 'The sending number\'s access token; required when a channel uses `whatsapp-cloud`'
  })),
  WHATSAPP_TEMPLATE_LANGUAGE: Type.String({ minLength: 1, default: 'en', description: 'Language of the approved templates' }),
  WHATSAPP_TEMPLATE_ACCEPTED: Type.String({
    minLength: 1, default: 'order_accepted', description: 'Approved template name: an order accepted'
  }),
  WHATSAPP_TEMPLATE_REJECTED: Type.String({
    minLength: 1, default: 'order_rejected', description: 'Approved template name: an order rejected'
  }),
  WHATSAPP_TEMPLATE_COMPLETED: Type.String({
    minLength: 1, default: 'order_completed', description: 'Approved template name: an order completed'
  }),
  WHATSAPP_TEMPLATE_PLACED: Type.String({
    minLength: 1, default: 'order_placed', description: 'Approved template name: an order placed'
  }),
  WHATSAPP_TEMPLATE_CANCELLED: Type.String({
    minLength: 1, default: 'order_cancelled', description: 'Approved template name: an order cancelled'
  }),
  WHATSAPP_TEMPLATE_DELIVERED: Type.String({
    minLength: 1, default: 'order_delivered', description: 'Approved template name: an order delivered'
  }),
  WHATSAPP_TIMEOUT_MS: Type.Integer({
    minimum: 100, default: 10_000, description: 'How long a WhatsApp Cloud API call may take'
  }),
  REFUND_GATEWAY: Type.Union([Type.Literal('manual')], {
    default: 'manual', description: 'The payment gateway refunds go through (`manual`: left to finance)'
  }),
  SHUTDOWN_GRACE_MS: Type.Integer({
    minimum: 0, default: 10_000, description: 'How long in-flight requests get on SIGTERM/SIGINT'
  }),
  BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024, default: 1024 * 1024, description: 'Request body limit of every route but the shipment sync'
  }),
  SYNC_BODY_LIMIT_BYTES: Type.Integer({
    minimum: 1024, default: 32 * 1024 * 1024, description: 'Request body limit of the shipment sync: 100,000 realistic rows fit'
  }),
  EXPLORER_ENABLED: Type.Optional(Type.Boolean({
    description: 'Serve the API reference (`/docs`) and GraphiQL (`/graphiql`); `/v2/openapi.json` is always served. ' +
      'Unset: on in `testing`, off in `production`'
  })),
  CORS_ORIGINS: Type.Optional(Type.String({
    pattern: '^\\s*(none|https?://[^\\s,/]+\\s*(,\\s*https?://[^\\s,/]+\\s*)*)$',
    description: 'Browser origins allowed to call the API, comma-separated: exact (`https://erp.example.com`) or any ' +
      'port (`http://localhost:*`), or `none`. Unset: `http://localhost:*` and `http://127.0.0.1:*` in `testing`, none ' +
      'in `production`'
  }))
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
