import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { build } from '../helpers/build.js'
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
 * docs/platform/first-import.md as a new user runs it: every ```sh block of the page, read from the page
 * itself, run in order on an empty database — its `npx order-exchange …` through the CLI's own entry
 * (runCli, with this test's DATABASE_URL), its curl commands over HTTP against the app (localhost:3000 is
 * the app's address here). The shell is read as the page writes it: single and double quotes, `$VAR`,
 * `VAR=$(…)`, `\` at a line's end, `#` comments. Anything else in a block fails the test, so the page's
 * example cannot drift from what runs.
 */

const FIRST_IMPORT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/platform/first-import.md')

/** The page's sh blocks, in order. */
function marketplaceBlocks (): string[] {
  const text = readFileSync(FIRST_IMPORT, 'utf8')
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
}

type Word = string
/**
 * Runs the commands of a block one by one, as a shell does: each command's words after quoting, expansion and
 * command substitution go to `run` before the next command is read (it may set a variable the next one uses).
 * Answers the output of the last command (a command substitution's).
 */
async function commands (
  block: string, vars: Map<string, string>, run: (words: Word[]) => Promise<string>
): Promise<string> {
  let output = ''
  let words: Word[] = []
  let word: string | null = null
  const push = () => { if (word !== null) words.push(word); word = null }
  const end = async () => { push(); if (words.length > 0) output = await run(words); words = [] }
  const substitute = async (inner: string): Promise<string> => await commands(inner, vars, run)
  const variable = (i: number): [string, number] => {
    const m = /^\$([A-Z_][A-Z0-9_]*)/.exec(block.slice(i))
    if (!m) throw new Error(`first-import.md: a lone $ at ${JSON.stringify(block.slice(i, i + 20))}`)
    if (!vars.has(m[1]!)) throw new Error(`first-import.md: $${m[1]} is used before it is set`)
    return [vars.get(m[1]!)!, i + m[0].length]
  }
  const substitution = async (i: number): Promise<[string, number]> => {
    const close = block.indexOf(')', i)
    return [await substitute(block.slice(i + 2, close)), close + 1]
  }
  for (let i = 0; i < block.length;) {
    const c = block[i]!
    if (c === '\\' && block[i + 1] === '\n') { i += 2; continue }
    if (c === '\n') { await end(); i++; continue }
    if (c === ' ' || c === '\t') { push(); i++; continue }
    if (c === '#' && word === null) { while (i < block.length && block[i] !== '\n') i++; continue }
    if (c === "'") {
      const close = block.indexOf("'", i + 1)
      word = (word ?? '') + block.slice(i + 1, close)
      i = close + 1
      continue
    }
    if (c === '"') {
      let text = ''
      i++
      while (block[i] !== '"') {
        if (block.startsWith('$(', i)) { const [v, next] = await substitution(i); text += v; i = next } else if (block[i] === '$') { const [v, next] = variable(i); text += v; i = next } else text += block[i++]
      }
      word = (word ?? '') + text
      i++
      continue
    }
    if (block.startsWith('$(', i)) { const [v, next] = await substitution(i); word = (word ?? '') + v; i = next; continue }
    if (c === '$') { const [v, next] = variable(i); word = (word ?? '') + v; i = next; continue }
    word = (word ?? '') + c
    i++
  }
  await end()
  return output
}

interface Answer { method: string, path: string, status: number, body: any }

t.test('the first import of docs/platform/first-import.md runs as written, in order, on an empty database: every answer as the page says', async (t) => {
  const { app, database } = await build(t)
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const vars = new Map<string, string>()
  const answers: Answer[] = []
  const cli = async (argv: string[]): Promise<string> => {
    if (argv[0] !== 'npx' || argv[1] !== 'order-exchange') throw new Error(`first-import.md: not runnable from a clone as written: ${argv.join(' ')}`)
    let out = ''; let err = ''
    const code = await runCli(argv.slice(2), { DATABASE_URL: database.url }, (line) => { out += `${line}\n` }, (line) => { err += `${line}\n` })
    t.equal(code, 0, `${argv.join(' ')} ${err}`)
    return out.trim()
  }
  const curl = async (argv: string[]) => {
    let method: string | undefined; let url: string | undefined; let body: string | undefined
    const headers: Record<string, string> = {}
    for (let i = 1; i < argv.length; i++) {
      const a = argv[i]!
      if (a === '-s') continue
      else if (a === '-X') method = argv[++i]
      else if (a === '-H') { const [name, ...value] = argv[++i]!.split(':'); headers[name!.trim()] = value.join(':').trim() } else if (a === '-d') body = argv[++i]
      else if (a.startsWith('http://localhost:3000/')) url = a
      else throw new Error(`first-import.md: curl argument the test does not know: ${a}`)
    }
    for (const [name, value] of Object.entries(headers)) {
      // curl sends what is pasted; the service refuses a header that is not visible ASCII (an ellipsis: 400).
      if (!/^[\x20-\x7e]*$/.test(value)) throw new Error(`first-import.md: header ${name}: ${value} is not whole (not visible ASCII)`)
    }
    method ??= body === undefined ? 'GET' : 'POST'
    const path = url!.slice('http://localhost:3000'.length)
    const res = await fetch(`${base}${path}`, { method, headers, body })
    const text = await res.text()
    let json: unknown = text
    try { json = JSON.parse(text) } catch {}
    answers.push({ method, path, status: res.status, body: json })
  }
  const run = async (words: Word[]): Promise<string> => {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(.*)$/s.exec(words[0]!)
    if (assignment && words.length === 1) { vars.set(assignment[1]!, assignment[2]!); return '' }
    if (words[0] === 'npx') return await cli(words)
    if (words[0] === 'curl') { await curl(words); return '' }
    throw new Error(`first-import.md: a command the test does not run: ${words.join(' ')}`)
  }
  for (const block of marketplaceBlocks()) await commands(block, vars, run)
  t.match(vars.get('KEY'), /^oxs_test_pk_/, 'KEY is the platform key the page issues')
  t.match(vars.get('SELLER_KEY'), /^oxs_test_ak_/, 'SELLER_KEY is the seller\'s API key')

  const sent = answers.map((a) => `${a.method} ${a.path}`)
  t.same(sent, [
    'PUT /v2/platform/sellers', 'POST /v2/platform/sellers/points', 'PUT /v2/platform/retailers', 'PUT /v2/platform/catalogue',
    'PUT /v2/platform/deals', 'POST /v2/platform/orders', 'POST /v2/graphql', 'POST /v2/accounting/orders/update-status',
    'POST /v2/platform/orders/update-status'
  ], 'the page\'s requests, in its order')
  for (const a of answers) t.equal(a.status, 200, `${a.method} ${a.path}: ${JSON.stringify(a.body).slice(0, 300)}`)
  const data = (n: number) => answers[n]?.body?.data
  const counts = (d: any) => d &&
    { inserted: d.inserted, updated: d.updated, unchanged: d.unchanged, failed: d.failed, errors: d.errors }
  t.same(counts(data(0)), { inserted: 2, updated: 0, unchanged: 0, failed: 0, errors: [] }, 'sellers 101 and 102')
  t.same(counts(data(1)), { inserted: 1, updated: 0, unchanged: 0, failed: 0, errors: [] }, 'the top-up')
  t.same(counts(data(2)), { inserted: 1, updated: 1, unchanged: 0, failed: 0, errors: [] }, 'the retailer, then its link to the second seller (the page says `updated`)')
  t.same(counts(data(3)), { inserted: 1, updated: 0, unchanged: 0, failed: 0, errors: [] }, 'the item')
  t.same(counts(data(4)), { inserted: 1, updated: 0, unchanged: 0, failed: 0, errors: [] }, 'the deal')
  t.same(counts(data(5)), { inserted: 2, updated: 0, unchanged: 0, failed: 0, errors: [] }, 'both orders placed')
  t.same(answers[6]?.body?.data?.orders?.nodes, [
    {
      orderId: '700001',
      orderStatus: 'ORDER_PLACED',
      orderTotalFinal: 1290,
      orderItems: [{ id: '900001', quantity: 10, unitPrice: 105.25, lineTotal: 1052.5 }, { id: '900002', quantity: 2.5, unitPrice: 95, lineTotal: 237.5 }]
    },
    { orderId: '700002', orderStatus: 'ORDER_PLACED', orderTotalFinal: 105.25, orderItems: [{ id: '900003', quantity: 1, unitPrice: 105.25, lineTotal: 105.25 }] }
  ], 'the seller reads both orders, the deal line at the deal\'s price')
  t.same(data(7), { successful: 1, failed: 0, errors: [], unchangedOrderIds: [] }, 'the seller accepts 700002')
  t.same(data(8), { successful: 2, failed: 0, errors: [], unchangedOrderIds: [] }, 'the marketplace cancels 700001 and delivers 700002')
  const statuses = await database.sql`select id::text, status from orders order by id`
  t.same(statuses.map((r) => [r.id, r.status]), [['700001', 'CANCELLED'], ['700002', 'DELIVERED']])
  const [deal] = await database.sql`select grabbed_quantity::text as grabbed from daily_deals where id = 9001`
  t.equal(deal?.grabbed, '0.000', 'the cancelled order gave the deal quantity back')
  const [points] = await database.sql`select points_balance::text as balance from sellers where id = 101`
  t.equal(points?.balance, '4997.89', 'the acceptance took 2 % of 105.25 (2.11, half up) from the 5000.00 topped up')
})
