import t from 'tap'
import { runCli } from '../../src/cli/main.js'
import { testDatabase } from '../helpers/build.js'
import { seedDemo } from '../helpers/fixtures.js'
import { captureLogger, notificationsOf, ordersIn, recordOrderEvent } from '../helpers/effects.js'
import { eventually } from '../helpers/eventually.js'
import { onStopSignal, runWorker } from '../../src/cli/worker-command.js'
import { loadConfig } from '../../src/config.js'

async function cli (argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = []; const err: string[] = []
  const code = await runCli(argv, env, (l) => out.push(l), (l) => err.push(l))
  return { code, out: out.join('\n'), err: err.join('\n') }
}

t.test('order-exchange worker: usage, and a transport without its settings stops it with one clear line', async (t) => {
  const database = await testDatabase(t)
  const usage = await cli(['worker', '--now'], { DATABASE_URL: database.url })
  t.equal(usage.code, 2)
  t.match(usage.err, /Unknown option '--now'/)
  const help = await cli(['--help'], {})
  t.match(help.out, /worker\s+run the effects worker alone/)

  const misconfigured = await cli(['worker'], { DATABASE_URL: database.url, LOG_LEVEL: 'silent', NOTIFY_SELLER_TRANSPORT: 'webhook' })
  t.equal(misconfigured.code, 1)
  t.match(misconfigured.err, /^order-exchange: Invalid configuration: NOTIFY_SELLER_TRANSPORT=webhook was removed: set WEBHOOK_URL and WEBHOOK_SECRET[^\n]*$/,
    'the removed transport, named with its replacement, in one line')
  const noSecret = await cli(['worker'], { DATABASE_URL: database.url, LOG_LEVEL: 'silent', WEBHOOK_URL: 'https://erp.example.com/hooks' })
  t.equal(noSecret.code, 1)
  t.equal(noSecret.err, 'order-exchange: Invalid configuration: WEBHOOK_URL needs WEBHOOK_SECRET (at least 16 characters)')
})

t.test('runWorker delivers until told to stop, then stops gracefully', async (t) => {
  const database = await testDatabase(t)
  await seedDemo(database, 20)
  const { logger, lines } = captureLogger('info')
  let stop: (reason: string) => void = () => {}
  const trigger = { stopped: new Promise<string>((resolve) => { stop = resolve }), dispose: () => {} }
  const running = runWorker(loadConfig({ DATABASE_URL: database.url, WORKER_POLL_INTERVAL_MS: '200' }), { trigger, logger })
  const [order] = await ordersIn(database, 'ORDER_PLACED', 1)
  await recordOrderEvent(database, order, 'order.accepted')
  await eventually(t, 'delivered', async () => (await notificationsOf(database, order.id)).filter((n) => n.status === 'DELIVERED').length === 3)
  t.equal(lines.filter((l) => String(l.msg).startsWith('notification: ')).length, 3, 'each notification told once')
  const workerSessions = async () => (await database.sql`select count(*)::int as n from pg_stat_activity
    where datname = current_database() and application_name in ('order-exchange-worker', 'order-exchange-worker-liveness', 'order-exchange-webhooks')`)[0].n
  t.ok(await workerSessions() >= 3, 'the queue pool, the liveness session and the deliverer\'s listener are connected')
  stop('SIGTERM')
  t.equal(await running, 0)
  await eventually(t, 'sessions gone', async () => (await workerSessions()) === 0, { timeoutMs: 2000 })
  t.pass('stopping ends every connection of the worker: the database may go away right after')
  t.ok(lines.some((l) => l.msg === 'stopping the worker: finishing jobs in hand' && l.signal === 'SIGTERM'))
  t.ok(lines.some((l) => l.msg === 'effects worker stopped'))
})

t.test('the stop trigger listens for SIGINT and SIGTERM and lets go of them', async (t) => {
  const before = process.listenerCount('SIGTERM')
  const trigger = onStopSignal()
  t.equal(process.listenerCount('SIGTERM'), before + 1)
  process.emit('SIGTERM', 'SIGTERM')
  t.equal(await trigger.stopped, 'SIGTERM')
  trigger.dispose()
  t.equal(process.listenerCount('SIGTERM'), before)
})
