import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { createClient } from '@order-exchange/client'
import { faultProxy, serve } from '../helpers/client.js'
import { eventually } from '../helpers/eventually.js'

/* The client's CLI (order-exchange-client), run as a program against the real service. */

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/client/dist/cli.js')
const exec = promisify(execFile)

async function cli (
  args: string[],
  env: Record<string, string> = {}
): Promise<{ code: number, stdout: string, stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, maxBuffer: 256 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number, stdout: string, stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

t.test('orders export writes exactly the orders of the range, one per line', async (t) => {
  const served = await serve(t, { orders: 400 })
  const [range] = await served.database.sql`select
      to_char(percentile_disc(0.3) within group (order by (created_at at time zone 'UTC')::date), 'YYYY-MM-DD') as from,
      to_char(percentile_disc(0.7) within group (order by (created_at at time zone 'UTC')::date), 'YYYY-MM-DD') as to
    from orders where seller_id = 1`
  const expected = await served.database.sql`select id::text from orders where seller_id = 1 and not is_deleted
    and (created_at at time zone 'UTC')::date between ${range!.from}::date and ${range!.to}::date order by created_at, id`
  t.ok(expected.length > 20, `${expected.length} orders from ${range!.from} to ${range!.to}`)

  const res = await cli(['orders', 'export', '--from', range!.from, '--to', range!.to, '--limit', '25'],
    { ORDER_EXCHANGE_BASE_URL: served.baseUrl, ORDER_EXCHANGE_ACCESS_TOKEN: served.accessToken })
  t.equal(res.code, 0, res.stderr)
  const orders = res.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { orderId: string, orderItems: unknown[], retailer: unknown })
  t.same(orders.map((o) => o.orderId), expected.map((r) => r.id), 'the orders of the range, in order, each once')
  t.ok(orders.every((o) => Array.isArray(o.orderItems) && typeof o.retailer === 'object'), 'whole orders')
  t.match(res.stderr, new RegExp(`page ${Math.ceil(expected.length / 25)}: ${expected.length} of ${expected.length} orders`), 'progress on stderr')
})

t.test('shipments sync takes a CSV (BOM, quotes, empty shop) or JSON and prints the merged result', async (t) => {
  const served = await serve(t, { orders: 0 })
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-cli-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const csv = path.join(dir, 'rows.csv')
  writeFileSync(csv, '\ufeffretailerSyncId,shopSyncId,offerSyncId,outstandingQuantity\r\n' +
    'RET-1,SHOP-1,OFF-1,10.500\r\n"RET, ""2""",,OFF-2,3\r\n,SHOP-9,OFF-3,1\r\n')
  const env = { ORDER_EXCHANGE_BASE_URL: served.baseUrl, ORDER_EXCHANGE_API_KEY: served.apiKey }
  const res = await cli(['shipments', 'sync', csv], env)
  t.equal(res.code, 0, res.stderr)
  const result = JSON.parse(res.stdout)
  // An empty cell is an empty ID, which the service calls an invalid one (and so does the client).
  t.match(result, { received: 3, inserted: 2, failed: 1, errors: [{ index: 2, code: 'INVALID_SYNC_ID' }] })
  t.match(res.stderr, /3 rows: 2 inserted, 0 updated, 0 unchanged, 1 failed/)
  const stored = await served.database.sql`select retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity from outstanding_shipments order by offer_sync_id`
  t.same(stored.map((r) => ({ ...r })), [
    { retailer_sync_id: 'RET-1', shop_sync_id: 'SHOP-1', offer_sync_id: 'OFF-1', outstanding_quantity: '10.500' },
    { retailer_sync_id: 'RET, "2"', shop_sync_id: null, offer_sync_id: 'OFF-2', outstanding_quantity: '3' }
  ], 'quantities keep their text; quoted fields and an empty shop read right')

  const json = path.join(dir, 'rows.json')
  writeFileSync(json, JSON.stringify([{ retailerSyncId: 'RET-1', shopSyncId: 'SHOP-1', offerSyncId: 'OFF-1', outstandingQuantity: 11 }]))
  const again = await cli(['shipments', 'sync', json], env)
  t.match(JSON.parse(again.stdout), { received: 1, updated: 1 })
})

t.test('usage and failures: exit 2 for bad usage, 1 for a failed call, each with a message', async (t) => {
  t.match(await cli(['orders', 'export', '--from', '2026-11-01']), { code: 2, stderr: /no base address/ })
  t.match(await cli(['orders', 'export', '--from', '2026-11-01'], { ORDER_EXCHANGE_BASE_URL: 'http://127.0.0.1:1' }), { code: 2, stderr: /needs --from and --to/ })
  t.match(await cli(['orders', 'dance'], { ORDER_EXCHANGE_BASE_URL: 'http://127.0.0.1:1' }), { code: 2, stderr: /unknown command: orders dance/ })
  t.match(await cli(['--bogus']), { code: 2, stderr: /usage:/ })
  t.match(await cli(['--help']), { code: 0, stdout: /order-exchange-client orders export/ })
  const served = await serve(t, { orders: 0 })
  const denied = await cli(['orders', 'export', '--from', '2026-11-01', '--to', '2026-11-02', '--base-url', served.baseUrl, '--token', 'oxs_test_at_nope'])
  t.match(denied, { code: 1, stderr: /order-exchange-client: Unauthorized/ })
})

t.test('events follow: each event after the file checkpoint once, one per line; types; following on until SIGTERM', async (t) => {
  const served = await serve(t, { orders: 300 })
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-cli-events-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const checkpoint = path.join(dir, 'events.json')
  const env = { ORDER_EXCHANGE_BASE_URL: served.baseUrl, ORDER_EXCHANGE_ACCESS_TOKEN: served.accessToken }
  const change = async (count: number, status: string) => {
    const rows = await served.database.sql`select id::text from orders where seller_id = 1 and status = 'ORDER_PLACED'
      and not is_deleted order by id limit ${count}`
    const client = createClient({ baseUrl: served.baseUrl, apiKey: served.apiKey })
    const results = await client.orders.updateStatuses(rows.map((r) => ({
      orderId: r.id as string, status: status as 'ORDER_ACCEPTED', reason: status === 'ORDER_ACCEPTED' ? undefined : 'No stock'
    })))
    t.ok(results.length === count && results.every((r) => r.outcome === 'changed'), `${count} changed to ${status}`)
  }
  const logged = async (types?: string[]) => (await served.database.sql`select 'evt_1_' || sequence as id from seller_events
    where seller_id = 1 and (${types ?? null}::text[] is null or type::text = any(${types ?? null}::text[])) order by sequence`)
    .map((r) => r.id as string)
  const ids = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id)

  await change(6, 'ORDER_ACCEPTED')
  const first = await cli(['events', 'follow', '--checkpoint', checkpoint, '--limit', '4'], env)
  t.equal(first.code, 0, first.stderr)
  t.same(ids(first.stdout), await logged(), 'every event of the log, in order, over two pages')
  t.match(first.stderr, /6 events; the checkpoint is after 6/)
  const lines = first.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string, order: { orderId: string } })
  t.ok(lines.every((e) => e.type === 'order.accepted' && typeof e.order.orderId === 'string'),
    'whole events with their orders')

  await change(3, 'ORDER_REJECTED_BY_SELLER')
  const again = await cli(['events', 'follow', '--checkpoint', checkpoint], env)
  t.same(ids(again.stdout), (await logged()).slice(6), 'the next run: only what came after the checkpoint')
  const typed = await cli(['events', 'follow', '--checkpoint', path.join(dir, 'rejections.json'), '--types', 'order.rejected'], env)
  t.same(ids(typed.stdout), await logged(['order.rejected']), '--types')

  // Following on: a change made while it waits comes out; SIGTERM stops it cleanly, the checkpoint on the last line.
  // Through a proxy that counts its reads: the change is made once it has read twice, so it is waiting to read on.
  const proxy = await faultProxy(t, served.baseUrl, () => 'pass')
  const child = execFile(process.execPath, [CLI, 'events', 'follow', '--checkpoint', checkpoint, '--interval-ms', '100'],
    { env: { PATH: process.env.PATH ?? '', ...env, ORDER_EXCHANGE_BASE_URL: proxy.url } })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  let errText = ''
  child.stderr!.on('data', (chunk: Buffer) => { errText += chunk.toString() })
  await eventually(t, 'the follower reading on', () => proxy.requests.length >= 2, { timeoutMs: 10_000 })
  await change(2, 'ORDER_ACCEPTED')
  await eventually(t, () => `the two changes written (${errText})`, () => ids(out).length >= 2, { timeoutMs: 10_000 })
  child.kill('SIGTERM')
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  t.equal(code, 0, errText)
  t.match(errText, /stopped/)
  t.same(ids(out), (await logged()).slice(9), 'the two changes made while it followed on')
  t.equal(ids(out).length, 2)
  t.same(JSON.parse(readFileSync(checkpoint, 'utf8')), { after: '11' }, 'the checkpoint names the last line written')

  t.match(await cli(['events', 'follow'], env), { code: 2, stderr: /needs --checkpoint/ })
  t.match(await cli(['events', 'follow', '--checkpoint', checkpoint, '--interval-ms', '0'], env), { code: 2, stderr: /--interval-ms/ })
})
