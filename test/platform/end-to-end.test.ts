import t from 'tap'
import { build } from '../helpers/build.js'
import { assertExample, freshService, readPage, runExamples } from '../helpers/doc-examples.js'
import { credential } from '../helpers/fixtures.js'
import { graphql } from '../helpers/graphql.js'
import { runCli } from '../../src/cli/main.js'
import { STATUS_UPDATE_PATH } from '../../src/routes/rest-contract.js'

/*
 * Issue 22's "done when", end to end over real HTTP on an empty database: the marketplace issues a
 * platform key (through the CLI), imports sellers, retailers, catalogue, deals, points and orders in the
 * order docs/platform/api.md gives; the seller reads every order back as it went in; the seller accepts them
 * through its API; the marketplace cancels one and delivers another, and the seller sees both.
 */

const DAY = '2026-11-25'

t.test('from an empty database: platform key, import, the seller reads, accepts; the platform cancels and delivers', async (t) => {
  const { app, database } = await build(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  let out = ''
  const code = await runCli(['credentials', 'issue', '--kind', 'platform-key'], { DATABASE_URL: database.url },
    (line) => { out += `${line}\n` }, () => {})
  t.equal(code, 0)
  const key = out.trim().split(/\s+/).find((word) => word.startsWith('oxs_test_pk_'))!
  t.ok(key, 'the CLI issued a platform key')
  const send = async (method: string, path: string, body: unknown, token = key) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    return { status: res.status, body: await res.json() as any }
  }
  const allIn = async (path: string, method: string, rows: unknown[]) => {
    const res = await send(method, path, rows)
    t.equal(res.status, 200, path)
    t.same(res.body.data.errors, [], `${path}: every row accepted`)
    t.equal(res.body.data.inserted, rows.length, `${path}: every row inserted`)
  }

  await allIn('/v2/platform/sellers', 'PUT', [{
    companyId: 42,
    name: 'Kirana Wholesale',
    status: 'ACTIVE',
    takeRate: '0.02',
    autoRejectEnabled: true,
    stores: [{ id: 4201, name: 'Pune' }]
  }])
  await allIn('/v2/platform/retailers', 'PUT', [{
    id: 9001,
    companyId: 42,
    name: 'Asha Rao',
    firstName: 'Asha',
    lastName: 'Rao',
    phone: '+919800000001',
    whatsapp: null,
    shops: [{ id: 9101, shopName: 'Rao Kirana' }]
  }])
  await allIn('/v2/platform/catalogue', 'PUT', [{
    id: 7001,
    companyId: 42,
    itemName: 'Assam Tea 1kg',
    skus: [{
      id: 7101,
      skuNickName: 'Assam 1kg',
      images: ['https://cdn.example/7101.jpg'],
      tags: ['tea'],
      itemSellingUnits: [{ id: 7201, name: 'Piece', multiplier: 1, isBaseUnit: true }],
      offers: [{
        id: 7301,
        purchasePrice: '400.00',
        mrpPriceAmount: 560,
        finalPriceWithTax: '525.00',
        currency: 'INR',
        priceRange: [{ minQuantity: 1, maxQuantity: 9, price: 525 }, { minQuantity: 10, maxQuantity: null, price: 510 }]
      }]
    }]
  }])
  await allIn('/v2/platform/deals', 'PUT', [{ id: 7401, companyId: 42, offerId: 7301, dealDate: DAY, dealPrice: 499, maxQuantity: 100 }])
  await allIn('/v2/platform/sellers/points', 'POST', [{ companyId: 42, amount: '1000.00', reference: 'OPENING' }])
  const order = (n: number) => ({
    orderId: String(800 + n),
    orderNumber: `ORD-${800 + n}`,
    serviceOrderNumber: `SVC-${800 + n}`,
    companyId: 42,
    storeId: 4201,
    retailerId: 9001,
    shopId: 9101,
    deliveryType: 'REGULAR',
    currencyCode: 'INR',
    paymentMode: 'ONLINE_PAID',
    orderTotal: '5240.00',
    orderTotalFinal: '5240.00',
    orderTaxAmount: '240.00',
    orderCessAmount: 0,
    appliedPoints: 0,
    totalExtraCharges: 0,
    roundOff: 0,
    placedAt: `${DAY}T10:0${n}:00+05:30`,
    orderItems: [{ id: String(8000 + n), offerId: 7301, quantity: 10, dealId: 7401 }]
  })
  await allIn('/v2/platform/orders', 'POST', [order(1), order(2), order(3)])

  // The seller reads them back as they went in.
  const token = await credential(database, 42, 'access-token')
  const read = async () => (await graphql<any, unknown>(app, token, `{ orders(input: {page: 1, limit: 10}) { nodes {
    orderId orderNumber orderStatus companyId storeId retailerName orderTotalFinal createdAt
    retailer { id name phone syncId } shop { id shopName syncId }
    orderItems { id quantity offer { id finalPriceWithTax purchasePrice priceRange { minQuantity maxQuantity price } }
      item { id itemName } sku { skuNickName images tags itemSellingUnits { id name multiplier isBaseUnit } } } } } }`)).body.data.orders.nodes
  const nodes = await read()
  t.same(nodes.map((n: any) => n.orderId), ['801', '802', '803'])
  t.same(nodes[0], {
    orderId: '801',
    orderNumber: 'ORD-801',
    orderStatus: 'ORDER_PLACED',
    companyId: 42,
    storeId: 4201,
    retailerName: 'Asha Rao',
    orderTotalFinal: 5240,
    createdAt: '2026-11-25T04:31:00.000000Z',
    retailer: { id: 9001, name: 'Asha Rao', phone: '+919800000001', syncId: null },
    shop: { id: 9101, shopName: 'Rao Kirana', syncId: null },
    orderItems: [{
      id: '8001',
      quantity: 10,
      offer: {
        id: 7301,
        finalPriceWithTax: 525,
        purchasePrice: 400,
        priceRange: [{ minQuantity: 1, maxQuantity: 9, price: 525 }, { minQuantity: 10, maxQuantity: null, price: 510 }]
      },
      item: { id: 7001, itemName: 'Assam Tea 1kg' },
      sku: {
        skuNickName: 'Assam 1kg',
        images: ['https://cdn.example/7101.jpg'],
        tags: ['tea'],
        itemSellingUnits: [{ id: 7201, name: 'Piece', multiplier: 1, isBaseUnit: true }]
      }
    }]
  })

  // The seller accepts all three through its own API.
  const apiKey = await credential(database, 42, 'api-key')
  const accepted = await send('POST', STATUS_UPDATE_PATH,
    { order_status: ['801', '802', '803'].map((id) => ({ Order_id: id, Order_Status: 'ORDER_ACCEPTED' })) }, apiKey)
  t.same(accepted.body.data, { successful: 3, failed: 0, errors: [], unchangedOrderIds: [] })

  // The marketplace cancels one and delivers another; the seller sees both.
  const moved = await send('POST', '/v2/platform/orders/update-status', {
    order_status: [{ Order_id: '801', Order_Status: 'CANCELLED', reason: 'Customer cancelled' }, { Order_id: '802', Order_Status: 'DELIVERED' }]
  })
  t.same(moved.body.data, { successful: 2, failed: 0, errors: [], unchangedOrderIds: [] })
  t.same((await read()).map((n: any) => [n.orderId, n.orderStatus]),
    [['801', 'CANCELLED'], ['802', 'DELIVERED'], ['803', 'ORDER_ACCEPTED']])
  const [points] = await database.sql`select points_balance::text as balance,
    (select sum(amount)::text from points_ledger where seller_id = 42) as ledger from sellers where id = 42`
  t.same(points, { balance: '790.40', ledger: '790.40' }, 'two acceptances kept (2 % of 5240 each), the cancelled one given back')
  const [deal] = await database.sql`select grabbed_quantity::text from daily_deals where id = 7401`
  t.equal(deal.grabbed_quantity, '20.000', 'the cancelled order\'s deal quantity given back')
})

/*
 * docs/platform/first-import.md as a new user runs it, on an empty database: every example of the page, read from
 * the page itself and run in order by the docs' one example runner (test/helpers/doc-examples.ts, which
 * test/tooling/doc-examples.test.ts runs on every page), each answer as the page shows it; then what the
 * answers do not show, read from the database.
 */

t.test('the first import of docs/platform/first-import.md runs as written, in order, on an empty database: every answer as the page says', async (t) => {
  const service = await freshService(t, { demo: false })
  const { runs, vars } = await runExamples(readPage('docs/platform/first-import.md').examples, service)
  for (const run of runs) assertExample(t, run)
  t.match(vars.get('KEY'), /^oxs_test_pk_/, 'KEY is the platform key the page issues')
  t.match(vars.get('SELLER_KEY'), /^oxs_test_ak_/, 'SELLER_KEY is the seller\'s API key')
  t.same(runs.flatMap((r) => r.requests).map((a) => `${a.method} ${a.path}`), [
    'PUT /v2/platform/sellers', 'POST /v2/platform/sellers/points', 'PUT /v2/platform/retailers', 'PUT /v2/platform/catalogue',
    'PUT /v2/platform/deals', 'POST /v2/platform/orders', 'POST /v2/graphql', 'POST /v2/accounting/orders/update-status',
    'POST /v2/platform/orders/update-status'
  ], 'the page\'s requests, in its order: sellers, points, retailers, catalogue, deals, orders, the read, two status updates')
  const { sql } = service.database
  const statuses = await sql`select id::text, status from orders order by id`
  t.same(statuses.map((r) => [r.id, r.status]), [['700001', 'CANCELLED'], ['700002', 'DELIVERED']])
  const [deal] = await sql`select grabbed_quantity::text as grabbed from daily_deals where id = 9001`
  t.equal(deal?.grabbed, '0.000', 'the cancelled order gave the deal quantity back')
  const [points] = await sql`select points_balance::text as balance from sellers where id = 101`
  t.equal(points?.balance, '4997.89', 'the acceptance took 2 % of 105.25 (2.11, half up) from the 5000.00 topped up')
})
