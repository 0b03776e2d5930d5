import t from 'tap'
import { ConfigError, loadConfig } from '../src/config.js'

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
