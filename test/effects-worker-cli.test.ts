import t from 'tap'
import { runCli } from '../src/cli/main.js'
import { testDatabase } from './helpers/build.js'

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
  t.equal(misconfigured.err, 'order-exchange: Invalid configuration: NOTIFY_SELLER_TRANSPORT=webhook needs WEBHOOK_URL and WEBHOOK_SECRET (at least 16 characters)')
})
