import t from 'tap'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import { promisify } from 'node:util'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { runCli } from '../../src/cli/main.js'
import postgres from 'postgres'
import { runningServer } from '../../src/db/embedded.js'
import { createTestDatabaseUrl } from '../helpers/test-server.js'
import { brokenHistories } from '../helpers/history.js'
import { eventually } from '../helpers/eventually.js'
import { freePort, ready, ROOT, startServer } from '../helpers/server-process.js'

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/order-exchange.js')

async function cli (argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = []; const err: string[] = []
  const code = await runCli(argv, env, (l) => out.push(l), (l) => err.push(l))
  return { code, out: out.join('\n'), err: err.join('\n') }
}

t.test('migrate, seed, credentials issue / list / revoke', async (t) => {
  const { url, drop } = await createTestDatabaseUrl()
  t.teardown(drop)
  const env = { DATABASE_URL: url }

  const migrated = await cli(['migrate'], env)
  t.equal(migrated.code, 0, migrated.err)
  t.match(migrated.err, /migrations applied/)

  const seeded = await cli(['seed', '--orders', '60', '--seed', '7', '--json'], env)
  t.equal(seeded.code, 0, seeded.err)
  const summary = JSON.parse(seeded.out)
  t.equal(summary.sellers.length, 3)
  t.equal(summary.orders, 60)
  t.same(summary.sellers.map((s: { status: string }) => s.status), ['active', 'active', 'suspended'])
  t.equal(summary.sellers.reduce((n: number, s: { orderCount: number }) => n + s.orderCount, 0), 60)
  for (const s of summary.sellers) t.ok(s.storeIds.length >= 2, 'several stores per seller')
  const companyId = summary.sellers[0].companyId

  const plain = await cli(['seed', '--orders', '3'], env)
  t.equal(plain.code, 0)
  t.match(plain.out, /companyId \d+ {2}Sharma Distributors Pvt Ltd {2}status=active/)
  const client = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const history = await brokenHistories(client)
    t.equal(history.orders, 63)
    t.equal(history.broken, 0, `the CLI's seeds write every history as a chain: ${JSON.stringify(history.examples)}`)
  } finally {
    await client.end({ timeout: 5 })
  }

  const issued = await cli(['credentials', 'issue', '--seller', String(companyId), '--kind', 'api-key'], env)
  t.equal(issued.code, 0, issued.err)
  t.match(issued.out, /^oxs_test_ak_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$/, 'prints the secret alone')
  const narrowed = await cli(['credentials', 'issue', '--seller', String(companyId), '--kind', 'access-token',
    '--environment', 'production', '--stores', summary.sellers[0].storeIds.slice(0, 1).join(',')], env)
  t.equal(narrowed.code, 0, narrowed.err)
  t.match(narrowed.out, /^oxs_live_at_/)

  const listed = await cli(['credentials', 'list', '--json'], env)
  t.equal(listed.code, 0)
  const rows = JSON.parse(listed.out)
  t.equal(rows.length, 2)
  // The random part is everything after `oxs_<env>_<kind>_<keyId>_` (base64url: it may hold "_" itself).
  const random = issued.out.trim().split('_').slice(4).join('_')
  t.equal(random.length, 43)
  t.notOk(listed.out.includes(random), 'no secret in the listing')
  const text = await cli(['credentials', 'list', '--seller', String(companyId)], env)
  t.match(text.out, /#\d+ {2}seller \d+ {2}api-key {2}testing/)

  const platform = await cli(['credentials', 'issue', '--kind', 'platform-key', '--environment', 'production'], env)
  t.equal(platform.code, 0, platform.err)
  t.match(platform.out, /^oxs_live_pk_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$/, 'the platform key, alone')
  t.match(platform.err, /issued platform-key #\d+ \(production\)/)
  t.match((await cli(['credentials', 'list'], env)).out, /#\d+ {2}platform {2}platform-key {2}production/)

  const revoked = await cli(['credentials', 'revoke', String(rows[0].id)], env)
  t.equal(revoked.code, 0)
  const again = await cli(['credentials', 'revoke', String(rows[0].id)], env)
  t.equal(again.code, 1)
  t.match(again.err, /no active credential/)
})

t.test('bad input: non-zero exit and a clear message', async (t) => {
  const { url, drop } = await createTestDatabaseUrl()
  t.teardown(drop)
  const env = { DATABASE_URL: url }
  const cases: Array<[string[], number, RegExp]> = [
    [[], 1, /Usage: order-exchange/],
    [['launch'], 2, /unknown command "launch"/],
    [['seed', '--orders', 'many'], 2, /--orders must be a whole number/],
    [['seed', '--anchor', 'yesterday'], 2, /--anchor must be an ISO-8601 date/],
    [['seed', '--frobnicate'], 2, /Unknown option '--frobnicate'/],
    [['credentials'], 2, /credentials takes issue, list or revoke/],
    [['credentials', 'issue', '--kind', 'api-key'], 2, /--seller is required/],
    [['credentials', 'issue', '--seller', '1', '--kind', 'password'], 2, /--kind must be access-token, api-key or platform-key/],
    [['credentials', 'issue', '--seller', '1', '--kind', 'platform-key'], 2, /a platform key belongs to no seller/],
    [['credentials', 'issue', '--seller', '1', '--kind', 'api-key', '--environment', 'staging'], 2, /--environment must be testing or production/],
    [['credentials', 'issue', '--seller', '4242', '--kind', 'api-key'], 1, /No seller with companyId 4242/],
    [['credentials', 'revoke'], 2, /takes one credential id/]
  ]
  for (const [argv, code, pattern] of cases) {
    const r = await cli(argv, env)
    t.equal(r.code, code, argv.join(' '))
    t.match(r.err + r.out, pattern, argv.join(' '))
  }
  const help = await cli(['--help'], env)
  t.equal(help.code, 0)
  const badConfig = await cli(['migrate'], { DATABASE_URL: 'mysql://nope' })
  t.equal(badConfig.code, 1)
  t.match(badConfig.err, /Invalid configuration: DATABASE_URL/)
  const unreachable = await cli(['migrate'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' })
  t.equal(unreachable.code, 1)
  t.match(unreachable.err, /order-exchange: migrate failed: .*ECONNREFUSED/)
})

t.test('the bin runs as a program', async (t) => {
  const { url, drop } = await createTestDatabaseUrl()
  t.teardown(drop)
  const run = promisify(execFile)
  // The bin compiles with tsx, whose source maps do not line up with tap's: coverage off in the child, or it
  // lands on the wrong lines of every source file the child loads (the same code is covered in-process).
  const env = { ...process.env, DATABASE_URL: url, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  const { stdout, stderr } = await run(process.execPath, [BIN, 'seed', '--orders', '5', '--json'], { env })
  t.equal(JSON.parse(stdout).orders, 5, stderr)
  await t.rejects(run(process.execPath, [BIN, 'bogus'], { env }), { code: 2 })
})

t.test('beside a running `npm start` with its ports moved, the CLI finds the embedded server from DATA_DIR alone', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-cli-attach-'))
  fs.chmodSync(dataDir, 0o755)
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const pgPort = await freePort()
  t.not(pgPort, 54329, 'not the default EMBEDDED_PG_PORT')
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', _TAPJS_PROCESSINFO_COVERAGE_: '0', DATA_DIR: dataDir }
  const server = startServer({ ...base, PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), LOG_LEVEL: 'warn', WORKER_ENABLED: 'false' })
  t.teardown(async () => {
    server.child.kill('SIGTERM')
    await server.exited
  })
  await eventually(t, 'readiness', () => ready(port), { timeoutMs: 90_000 })
  const running = runningServer(path.join(dataDir, 'pg'))
  t.equal(running?.port, pgPort, 'postmaster.pid names the moved port')

  // As docs/operate/cli.md runs it, with PORT set as for the server but no EMBEDDED_PG_PORT.
  const { stdout, stderr } = await promisify(execFile)('npx', ['order-exchange', 'credentials', 'issue', '--seller', '1', '--kind', 'access-token'],
    { cwd: ROOT, env: { ...base, PORT: String(port) } })
  const token = stdout.trim().split(/\s+/).find((word) => word.startsWith('oxs_test_at_'))
  t.ok(token, `the CLI issued a token (${stderr.trim()})`)
  t.same(runningServer(path.join(dataDir, 'pg')), running, 'the same server runs: the CLI attached, it started none')
  // The token works against the running API: it was written to that server's database.
  const res = await fetch(`http://127.0.0.1:${port}/v2/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ seller { companyId } }' })
  })
  t.equal(res.status, 200)
  t.same(((await res.json()) as { data: unknown }).data, { seller: { companyId: 1 } })
})
