import t from 'tap'
import { setupMoney } from '../helpers/money.js'
import { PLATFORM_PAYOUTS_PATH, PLATFORM_REFUNDS_PATH } from '../../src/routes/rest-contract.js'
import { encodeCursor } from '../../src/money/cursor.js'
import { MoneyText } from '../../src/money/texts.js'

/*
 * GET /v2/platform/refunds, /v2/platform/payouts and /v2/platform/sellers/{companyId}/ledger
 * (docs/platform/money.md): the row shapes (ids and amounts strings), the filters, keyset pages that neither
 * repeat nor skip a row while rows are added between them, the query refusals naming their parameter, and
 * the platform key only.
 */

const ledgerPath = (companyId: number | string) => `/v2/platform/sellers/${companyId}/ledger`

t.test('refunds: shape, filters and pages', async (t) => {
  const { get, refund, orders } = await setupMoney(t)
  const a = await refund(0, 'MANUAL', '1250.50', '2026-11-01T10:00:00Z')
  await refund(1, 'SUCCEEDED', '10.00', '2026-11-02T10:00:00Z')
  await refund(2, 'MANUAL', '0.01', '2026-11-03T10:00:00Z')
  const res = await get(`${PLATFORM_REFUNDS_PATH}?limit=1`)
  t.equal(res.statusCode, 200)
  t.same(res.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: MoneyText.refundsListed,
    data: {
      nodes: [{
        id: a,
        orderId: orders[0].id,
        companyId: orders[0].sellerId,
        amount: '1250.50',
        currency: 'INR',
        status: 'MANUAL',
        reference: null,
        createdAt: '2026-11-01T10:00:00.000000Z',
        settledAt: null
      }],
      pageInfo: { hasNext: true, endCursor: encodeCursor('refunds', a) }
    }
  })
  const manual = (await get(`${PLATFORM_REFUNDS_PATH}?status=MANUAL`)).json().data.nodes
  t.same(manual.map((r: { amount: string }) => r.amount), ['1250.50', '0.01'])
  const ranged = (await get(`${PLATFORM_REFUNDS_PATH}?from=2026-11-02&to=2026-11-03T10:00:00Z`)).json().data.nodes
  t.same(ranged.map((r: { amount: string }) => r.amount), ['10.00'], 'from inclusive, to exclusive')
  const seller = orders[1].sellerId
  const bySeller = (await get(`${PLATFORM_REFUNDS_PATH}?companyId=${seller}`)).json().data.nodes
  t.ok(bySeller.length >= 1 && bySeller.every((r: { companyId: number }) => r.companyId === seller))
  const empty = await get(`${PLATFORM_REFUNDS_PATH}?status=FAILED&after=${encodeCursor('refunds', a)}`)
  t.same(empty.json().data, { nodes: [], pageInfo: { hasNext: false, endCursor: encodeCursor('refunds', a) } },
    'an empty page\'s endCursor is the after it was asked with')
})

t.test('pages neither repeat nor skip a row while rows are added between them', async (t) => {
  const { get, refund } = await setupMoney(t)
  const made: string[] = []
  for (let i = 0; i < 10; i++) made.push(await refund(i))
  const seen: string[] = []
  let after = ''
  let next = 10
  for (;;) {
    const page = (await get(`${PLATFORM_REFUNDS_PATH}?limit=3${after}`)).json().data
    seen.push(...page.nodes.map((r: { id: string }) => r.id))
    // Rows added while the client pages: they come at the end, once.
    if (next < 16) made.push(await refund(next++), await refund(next++))
    if (!page.pageInfo.hasNext) break
    after = `&after=${page.pageInfo.endCursor}`
  }
  t.same(seen, made, 'every row once, in order')
})

t.test('payouts: shape, the order\'s currency, status filter', async (t) => {
  const { get, payout, orders } = await setupMoney(t)
  const id = await payout(0, 'SCHEDULED', '4800.00')
  await payout(1, 'ON_HOLD')
  const res = (await get(`${PLATFORM_PAYOUTS_PATH}?status=SCHEDULED`)).json().data
  t.same(res.nodes, [{
    id,
    orderId: orders[0].id,
    companyId: orders[0].sellerId,
    amount: '4800.00',
    currency: 'INR',
    status: 'SCHEDULED',
    scheduledFor: '2026-12-05',
    reference: null,
    paidAt: null
  }])
})

t.test('ledger: the seller\'s entries, unknown seller 404', async (t) => {
  const { get, database, orders } = await setupMoney(t)
  const seller = orders[0].sellerId
  const entries = await database.sql`select id::text, amount::text, balance_after::text from points_ledger where seller_id = ${seller} order by id`
  const res = await get(`${ledgerPath(seller)}?limit=1000`)
  t.equal(res.statusCode, 200)
  const nodes = res.json().data.nodes
  t.same(nodes.map((n: { id: string, amount: string, balanceAfter: string }) => [n.id, n.amount, n.balanceAfter]),
    entries.map((e) => [e.id, e.amount, e.balance_after]))
  t.ok(nodes.length > 0, 'the demo seller has entries')
  t.match(nodes[0], { kind: String, createdAt: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/ })
  const unknown = await get(ledgerPath(999_999))
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'SELLER_NOT_FOUND')
  t.equal((await get(ledgerPath('abc'))).statusCode, 404)
  t.equal((await get(`${ledgerPath(seller)}?status=MANUAL`)).json().code, 'UNKNOWN_PARAMETER', 'the ledger has no status')
})

t.test('query refusals: a 400 in the envelope naming the parameter', async (t) => {
  const { get } = await setupMoney(t, 5)
  const cases: Array<[string, string]> = [
    ['limit=0', 'INVALID_LIMIT'], ['limit=1001', 'INVALID_LIMIT'], ['limit=abc', 'INVALID_LIMIT'],
    ['status=PAID', 'INVALID_STATUS_FILTER'], ['companyId=0', 'INVALID_COMPANY_ID'], ['from=2026-02-30', 'INVALID_TIME'],
    ['to=yesterday', 'INVALID_TIME'], ['from=2026-11-03&to=2026-11-02', 'INVALID_TIME_RANGE'],
    ['after=xyz', 'INVALID_CURSOR'], [`after=${encodeCursor('payouts', '5')}`, 'INVALID_CURSOR'],
    ['limit=1&limit=2', 'REPEATED_PARAMETER'], ['page=2', 'UNKNOWN_PARAMETER']
  ]
  for (const [query, code] of cases) {
    const res = await get(`${PLATFORM_REFUNDS_PATH}?${query}`)
    t.equal(res.statusCode, 400, query)
    t.match(res.json(), { error: true, status: false, statusCode: 400, code }, query)
  }
})

t.test('platform key only: a seller credential reaches none of the lists', async (t) => {
  const { get, sellerKey, orders } = await setupMoney(t, 5)
  for (const path of [PLATFORM_REFUNDS_PATH, PLATFORM_PAYOUTS_PATH, ledgerPath(orders[0].sellerId)]) {
    const attempts: Array<Record<string, string>> = [{ authorization: `Bearer ${sellerKey}` }, { 'x-api-key': sellerKey, authorization: '' }, { authorization: '' }]
    for (const headers of attempts) {
      const res = await get(path, headers)
      t.equal(res.statusCode, 401, `${path} ${Object.keys(headers).join(',')}`)
      t.notMatch(res.body, /nodes/)
    }
  }
})
