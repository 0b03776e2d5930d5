import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { serve } from './helpers.js'

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
