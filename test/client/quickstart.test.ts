import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { serve } from '../helpers/client.js'

/* The example of docs/api/client.md is packages/client/examples/quickstart.mjs, word for word, and it runs. */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const EXAMPLE = path.join(ROOT, 'packages/client/examples/quickstart.mjs')
const exec = promisify(execFile)

t.test('the client page shows the example as it is in the repository', async (t) => {
  const page = readFileSync(path.join(ROOT, 'docs/api/client.md'), 'utf8')
  const block = /```js\n([\s\S]*?)```/.exec(page)
  t.ok(block, 'a js block on the page')
  t.equal(block?.[1], readFileSync(EXAMPLE, 'utf8'))
  t.ok(readFileSync(EXAMPLE, 'utf8').split('\n').length <= 30, 'at most ~30 lines')
})

t.test('the example polls, accepts and syncs against the service; run again, it finds nothing new', async (t) => {
  const served = await serve(t, { orders: 90 })
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-example-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { PATH: process.env.PATH ?? '', ORDER_EXCHANGE_BASE_URL: served.baseUrl, ORDER_EXCHANGE_ACCESS_TOKEN: served.accessToken, ORDER_EXCHANGE_API_KEY: served.apiKey }
  // Node resolves '@order-exchange/client' from the example's own folder, as in an integrator's project.
  const run = () => exec(process.execPath, [EXAMPLE], { cwd: dir, env })
  const [placed] = await served.database.sql`select count(*)::int as n from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED'`
  const [live] = await served.database.sql`select count(*)::int as n from orders where seller_id = 1 and not is_deleted`

  const first = await run()
  const lines = first.stdout.trim().split('\n')
  t.equal(lines.filter((l) => l.startsWith('order ') && !l.includes('not accepted')).length, live!.n, 'one line per order')
  t.match(lines.at(-1), new RegExp(`^${live!.n} changes read, ${placed!.n} accepted, 1 shipment rows written$`))
  const [still] = await served.database.sql`select count(*)::int as n from orders where seller_id = 1 and not is_deleted and status = 'ORDER_PLACED'`
  t.equal(still!.n, 0, 'the placed orders were accepted')

  const second = await run()
  t.match(second.stdout.trim().split('\n').at(-1), new RegExp(`^${placed!.n} changes read, 0 accepted, 0 shipment rows written$`),
    'only the acceptances are new changes; the same sync again writes nothing')
})
