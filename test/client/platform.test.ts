import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { createPlatformClient, type PlatformSeller } from '@order-exchange/client'
import { build } from '../helpers/build.js'
import { platformKey } from '../helpers/fixtures.js'
import { PlatformRowErrors as E } from '../../src/platform/texts.js'

/*
 * createPlatformClient and `order-exchange-client platform import` against the real service on an empty
 * database: chunks of 1,000 with the answers merged and every refusal lined up by its index in the caller's
 * array; a mixed NDJSON file, out of order, imported in dependency order with progress on stderr, refused
 * rows reported by their line, bad lines skipped, and the exit code saying whether everything went in.
 */

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/client/dist/cli.js')
const exec = promisify(execFile)

async function served (t: Parameters<typeof build>[0]) {
  const context = await build(t)
  await context.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = context.app.server.address() as AddressInfo
  return { ...context, baseUrl: `http://127.0.0.1:${port}`, key: await platformKey(context.database) }
}

const seller = (companyId: number): PlatformSeller => ({
  companyId, name: `Seller ${companyId}`, status: 'ACTIVE', takeRate: '0.02', autoRejectEnabled: false, stores: []
})

t.test('2,500 seller rows go out as three calls; the answer is merged, refusals by the caller\'s index', async (t) => {
  const { baseUrl, key, database } = await served(t)
  const bodies: number[] = []
  const client = createPlatformClient({
    baseUrl,
    platformKey: key,
    fetch: async (input, init) => { bodies.push(JSON.parse(String(init?.body)).length); return fetch(input, init) }
  })
  const rows = Array.from({ length: 2500 }, (_, i) => seller(i + 1))
  rows[1200] = { ...rows[1200]!, takeRate: '7' }
  rows[2499] = { ...rows[2499]!, status: 'GONE' as never }
  const result = await client.sellers.upsert(rows)
  t.same(bodies, [1000, 1000, 500])
  t.same({ ...result, errors: result.errors.map((e) => [e.index, e.id, e.code]) }, {
    received: 2500,
    inserted: 2498,
    updated: 0,
    unchanged: 0,
    failed: 2,
    errors: [[1200, 1201, E.takeRate.code], [2499, 2500, E.status.code]]
  })
  t.equal((await database.sql`select count(*)::int as n from sellers`)[0]!.n, 2498)
  const again = await client.sellers.upsert(rows)
  t.equal(again.unchanged, 2498, 'sent again: unchanged row by row')
})

t.test('platform import: a mixed NDJSON file, out of order, in dependency order; progress, summary, exit code', async (t) => {
  const { baseUrl, key, database } = await served(t)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-import-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const records: unknown[] = [
    // Orders first in the file: the import still sends them last.
    {
      type: 'order',
      orderId: '501',
      orderNumber: 'ORD-501',
      serviceOrderNumber: 'S-501',
      companyId: 7,
      storeId: 71,
      retailerId: 90,
      shopId: null,
      deliveryType: 'REGULAR',
      currencyCode: 'INR',
      paymentMode: 'CASH_ON_DELIVERY',
      orderTotal: 100,
      orderTotalFinal: 100,
      orderTaxAmount: 0,
      orderCessAmount: 0,
      appliedPoints: 0,
      totalExtraCharges: 0,
      roundOff: 0,
      placedAt: '2026-11-25T10:00:00Z',
      orderItems: [{ id: '5011', offerId: 30, quantity: 1 }]
    },
    { type: 'order-status', Order_id: '501', Order_Status: 'CANCELLED', reason: 'test' },
    { type: 'points', companyId: 7, amount: 100, reference: 'OPEN' },
    { type: 'deal', id: 40, companyId: 7, offerId: 30, dealDate: '2026-11-25', dealPrice: 90, maxQuantity: 5 },
    {
      type: 'catalogue',
      id: 10,
      companyId: 7,
      itemName: 'Tea',
      skus: [{
        id: 20,
        skuNickName: 'Tea 1kg',
        images: [],
        tags: [],
        itemSellingUnits: [],
        offers: [{ id: 30, purchasePrice: 80, mrpPriceAmount: 120, finalPriceWithTax: 100, currency: 'INR', priceRange: [] }]
      }]
    },
    { type: 'retailer', id: 90, companyId: 7, name: 'Asha', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] },
    { type: 'seller', ...seller(7), stores: [{ id: 71, name: 'Main' }] },
    { type: 'retailer', id: 91, companyId: 99, name: 'Nobody\'s', firstName: null, lastName: null, phone: null, whatsapp: null, shops: [] }
  ]
  const file = path.join(dir, 'import.ndjson')
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n{not json\n{"type":"unicorn"}\n`)
  const run = async (env: Record<string, string>) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, [CLI, 'platform', 'import', file],
        { env: { PATH: process.env.PATH ?? '', ...env } })
      return { code: 0, stdout, stderr }
    } catch (err) {
      const e = err as { code: number, stdout: string, stderr: string }
      return { code: e.code, stdout: e.stdout, stderr: e.stderr }
    }
  }
  const missingKey = await run({ ORDER_EXCHANGE_BASE_URL: baseUrl })
  t.equal(missingKey.code, 2, 'no platform key: a usage error')

  const first = await run({ ORDER_EXCHANGE_BASE_URL: baseUrl, ORDER_EXCHANGE_PLATFORM_KEY: key })
  t.equal(first.code, 1, 'one refused row and two bad lines: exit 1')
  const summary = JSON.parse(first.stdout)
  t.same(Object.keys(summary.types), ['seller', 'retailer', 'catalogue', 'deal', 'points', 'order', 'order-status'],
    'sent in dependency order')
  t.match(summary.types.seller, { received: 1, inserted: 1, failed: 0 })
  t.match(summary.types.retailer,
    { received: 2, inserted: 1, failed: 1, errors: [{ line: 8, code: E.sellerNotFound(99).code }] })
  t.match(summary.types.order, { received: 1, inserted: 1, failed: 0 })
  t.match(summary.types['order-status'], { received: 1, updated: 1, failed: 0 })
  t.same(summary.badLines, [
    { line: 9, problem: 'not JSON' },
    { line: 10, problem: 'type must be one of seller, retailer, catalogue, deal, points, order, order-status' }
  ])
  t.match(first.stderr, /seller: 1 sent, 0 refused/)
  t.match(first.stderr, /order: done \(1 rows\)/)
  t.same(await database.sql`select id::int, status from orders`, [{ id: 501, status: 'CANCELLED' }])

  const again = await run({ ORDER_EXCHANGE_BASE_URL: baseUrl, ORDER_EXCHANGE_PLATFORM_KEY: key })
  const resent = JSON.parse(again.stdout)
  t.match(resent.types.order, { unchanged: 1, inserted: 0 }, 'importing the same file again changes nothing')
  t.match(resent.types['order-status'], { unchanged: 1 })
})
