import t from 'tap'
import { ConfigError, loadConfig, sessionDatabaseUrl } from '../../src/config.js'

t.test('defaults', async (t) => {
  const c = loadConfig({})
  t.equal(c.PORT, 3000)
  t.equal(c.ORDER_EXCHANGE_ENV, 'testing')
  t.equal(c.BUSINESS_TIMEZONE, 'UTC')
  t.equal(c.LOG_LEVEL, 'info')
  t.equal(c.DATABASE_URL, undefined)
  t.equal(c.WORKER_ENABLED, true)
})

t.test('values are converted from strings', async (t) => {
  const c = loadConfig({ PORT: '8080', ORDER_EXCHANGE_ENV: 'production', BUSINESS_TIMEZONE: 'Asia/Kolkata', WORKER_ENABLED: 'false', DATABASE_URL: 'postgres://u@h:5432/d' })
  t.equal(c.PORT, 8080)
  t.equal(c.ORDER_EXCHANGE_ENV, 'production')
  t.equal(c.BUSINESS_TIMEZONE, 'Asia/Kolkata')
  t.equal(c.WORKER_ENABLED, false)
  t.equal(c.DATABASE_URL, 'postgres://u@h:5432/d')
})

t.test('a bad value is one clear error naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /^Invalid configuration: PORT="eighty"/],
    [{ PORT: '70000' }, /^Invalid configuration: PORT=/],
    [{ ORDER_EXCHANGE_ENV: 'staging' }, /^Invalid configuration: ORDER_EXCHANGE_ENV="staging"/],
    [{ BUSINESS_TIMEZONE: 'Mars/Olympus' }, /^Invalid configuration: BUSINESS_TIMEZONE="Mars\/Olympus": not an IANA time zone/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL="loud"/],
    [{ DATABASE_URL: 'mysql://x' }, /^Invalid configuration: DATABASE_URL="mysql:\/\/x"/]
  ]
  for (const [env, pattern] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message: pattern }, JSON.stringify(env))
  }
  t.ok(new ConfigError('x') instanceof Error)
})

t.test('empty strings count as unset', async (t) => {
  t.equal(loadConfig({ PORT: '', DATABASE_URL: '' }).PORT, 3000)
})

t.test('behind a transaction pooler a session-level URL is required', async (t) => {
  const pooled = { DATABASE_URL: 'postgres://u@pgbouncer:6432/db', DATABASE_POOL_MODE: 'transaction' }
  t.throws(() => loadConfig(pooled), { name: 'ConfigError', message: /DATABASE_POOL_MODE=transaction needs WORKER_DATABASE_URL/ })
  t.throws(() => loadConfig({ DATABASE_POOL_MODE: 'transaction', WORKER_DATABASE_URL: 'postgres://u@db:5432/db' }),
    { name: 'ConfigError', message: /needs DATABASE_URL/ })
  t.throws(() => loadConfig({ ...pooled, DATABASE_POOL_MODE: 'statement' }), { name: 'ConfigError', message: /^Invalid configuration: DATABASE_POOL_MODE="statement"/ })
  const config = loadConfig({ ...pooled, WORKER_DATABASE_URL: 'postgres://u@db:5432/db', READ_DATABASE_URL: 'postgres://u@replica:5432/db' })
  t.equal(config.DATABASE_POOL_MODE, 'transaction')
  t.equal(sessionDatabaseUrl(config, config.DATABASE_URL!), 'postgres://u@db:5432/db', 'sessions go direct')
  t.equal(sessionDatabaseUrl(loadConfig({}), 'postgres://u@db:5432/x'), 'postgres://u@db:5432/x', 'without a worker URL: the primary')
  t.equal(config.READ_MAX_LAG_MS, 1_000)
  t.throws(() => loadConfig({ READ_DATABASE_URL: 'mysql://x' }), { name: 'ConfigError', message: /READ_DATABASE_URL/ })
})
