import fs from 'node:fs'
import { holdInTransaction } from '../helpers/held-transaction.js'
import t, { type Test } from 'tap'
import { buildSchema, print } from 'graphql'
import { OrdersDocument } from '../../src/graphql/generated/operations.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'
import { build, testConfig, type TestDatabase } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { Random, randomDocument, type InputPool, type RandomDocument } from '../helpers/random-documents.js'
import { fuzzRuns } from '../helpers/fuzz.js'

/*
 * The pass-through (graphql/pass-through.ts) is an optimisation, never a behaviour: for thousands of
 * random documents, an app with it and an app without it, on the same database, answer with the same
 * status, content type and body, byte for byte. The data carries what JSON writers disagree on: escapes
 * and control characters, non-BMP text, floats in both notations, nulls, empty lists.
 */

const schema = buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8'))

/** Data that is hard to write as JSON the way JSON.stringify does. */
async function roughenData (database: TestDatabase, sellerId: number): Promise<void> {
  const sql = database.sql
  await sql`update retailers set name = ${'Quote " backslash \\ tab \t nl \n cr \r bell \u0007 del \u007f ünï 😀 \u2028 </script>'},
    first_name = null, whatsapp = ${'\u0001\u001f'} where id = (select min(id) from retailers)`
  await sql`update items set item_name = ${'Ärger "Ware" \\ 100%'} where id = (select min(id) from items)`
  await sql`update skus set images = '{}', tags = array(select jsonb_array_elements_text(${JSON.stringify(['a,b', 'c"d', '{e}', 'f\\g', 'null', ''])}::jsonb)) where id = (select min(id) from skus)`
  await sql`update offers set price_range = ${JSON.stringify([
    { minQuantity: 1, maxQuantity: 9.5, price: 0.1 },
    { minQuantity: 10, maxQuantity: null, price: 1e-7 },
    { minQuantity: 1e21, maxQuantity: 123456789.12345679, price: 0.30000000000000004 }
  ])}::jsonb, offer_sync_id = null where id = (select min(id) from offers)`
  await sql`update offers set price_range = '[]' where id = (select max(id) from offers)`
  await sql`update order_items set quantity = 0.001 where id = (select min(id) from order_items)`
  await sql`update orders set order_total = 1234567890.12, round_off = -0.01, order_tax_amount = 0 where id = (select min(id) from orders where seller_id = ${sellerId})`
  // Outstanding shipments: unbounded numeric quantities (Float: written as JavaScript writes the double).
  const quantities = ['0', '0.1', '0.30000000000000004', '1e-7', '0.000001', '123456789012345678901', '1e21', '15165.64', '2.5', '1000000',
    '0.0000001234', '99999999999999999999.5', '3.14159265358979323846', '1e-300', '42']
  let n = 0
  for (const quantity of quantities) {
    n++
    await sql`insert into outstanding_shipments (seller_id, retailer_sync_id, shop_sync_id, offer_sync_id, outstanding_quantity, created_at, updated_at)
      values (${sellerId}, ${n % 3 === 0 ? 'R-"quoted"' : `R-${n % 4}`}, ${n % 2 === 0 ? null : `S-${n}\u00e9`}, ${`O-${n % 5}`}, ${quantity}::numeric,
        ${new Date(Date.UTC(2026, 9, 1 + n, 10, 0, 0, n)).toISOString()}::timestamptz, ${new Date(Date.UTC(2026, 9, 20 + (n % 5), 8, 30)).toISOString()}::timestamptz)`
  }
}

async function inputPool (database: TestDatabase): Promise<InputPool> {
  const days = await database.sql<Array<{ d: string }>>`select distinct to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as d from orders order by 1`
  const instants = await database.sql<Array<{ t: string }>>`select to_char(updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t from orders order by id limit 20`
  const shipments = await database.sql<Array<{ r: string, o: string }>>`select retailer_sync_id as r, offer_sync_id as o from outstanding_shipments`
  return {
    dates: days.map((r) => r.d).filter((_, i) => i % 7 === 0),
    instants: instants.map((r) => r.t),
    retailerSyncIds: [...new Set(shipments.map((r) => r.r)), 'R-none'],
    offerSyncIds: [...new Set(shipments.map((r) => r.o)), 'O-none']
  }
}

interface Answer { status: number, type: string | undefined, body: string }

async function ask (app: FastifyInstance, token: string, doc: RandomDocument, accept?: string): Promise<Answer> {
  const res = await app.inject({
    method: 'POST',
    url: '/v2/graphql',
    headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) },
    payload: {
      query: doc.query,
      variables: doc.variables,
      ...(doc.operationName !== null ? { operationName: doc.operationName } : {})
    }
  })
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, body: res.body }
}

function outcomes (app: FastifyInstance): Promise<Record<string, number>> {
  return app.metrics.graphqlPassThrough.get()
    .then((m) => Object.fromEntries(m.values.map((v) => [String(v.labels.outcome), v.value])))
}

/** Both apps on the same database: `fast` with the pass-through (the default), `standard` without. */
async function twoApps (t: Test, env: Record<string, string> = {}): Promise<{
  fast: FastifyInstance, standard: FastifyInstance, database: TestDatabase, token: string, pool: InputPool
}> {
  const { app: fast, database } = await build(t, env)
  const standard = await buildApp({ config: testConfig(database, { ...env, GRAPHQL_PASS_THROUGH: 'false' }), database })
  t.teardown(() => standard.close())
  await standard.ready()
  const summary = await seedDemo(database, 150)
  const sellerId = summary.sellers[0].companyId
  await roughenData(database, sellerId)
  const token = await credential(database, sellerId, 'access-token')
  return { fast, standard, database, token, pool: await inputPool(database) }
}

t.test('random documents: the pass-through and the standard execution answer byte for byte alike', async (t) => {
  const { fast, standard, token, pool } = await twoApps(t)
  const rand = new Random(20261124)
  const DOCUMENTS = fuzzRuns(3000)
  const differences: string[] = []
  let withData = 0
  for (let i = 0; i < DOCUMENTS && differences.length < 5; i++) {
    const doc = randomDocument(schema, pool, rand)
    const accept = i % 10 === 0 ? 'application/graphql-response+json' : undefined
    const a = await ask(fast, token, doc, accept)
    const b = await ask(standard, token, doc, accept)
    if (a.status !== b.status || a.type !== b.type || a.body !== b.body) {
      differences.push(`#${i} ${JSON.stringify(doc)}\n  pass-through: ${a.status} ${a.type} ${a.body.slice(0, 600)}\n  standard:     ${b.status} ${b.type} ${b.body.slice(0, 600)}`)
    }
    if (b.status === 200 && !b.body.includes('"errors"')) withData++
  }
  t.same(differences, [], `${DOCUMENTS} documents`)
  const fastOutcomes = await outcomes(fast)
  t.comment(`pass-through outcomes: ${JSON.stringify(fastOutcomes)}; ${withData} answers with data and no error`)
  // The fast path really ran: most documents were answered by it, and the standard app never used it.
  t.ok((fastOutcomes.answered ?? 0) >= DOCUMENTS * 0.75, `at least 75% passed through (${fastOutcomes.answered})`)
  t.ok((fastOutcomes.not_covered ?? 0) > 0 && (fastOutcomes.input_refused ?? 0) > 0, 'and the documents it must leave alone were left to the standard execution')
  t.same(await outcomes(standard), {}, 'GRAPHQL_PASS_THROUGH=false: never used')
})

t.test('the contract documents, pageInfo alone, empty pages and the full selection pass through', async (t) => {
  const { fast, standard, token } = await twoApps(t)
  const full = fs.readFileSync(new URL('../../src/graphql/operations/orders.graphql', import.meta.url), 'utf8')
  const documents: RandomDocument[] = [
    { query: full, variables: { input: { limit: 100 } }, operationName: 'Orders' },
    { query: full, variables: { input: { page: 500 } }, operationName: 'Orders' },
    { query: '{ orders { pageInfo { total hasNext page limit } } }', variables: {}, operationName: null },
    { query: '{ orders(input: {fromDate: "2030-01-01"}) { pageInfo { total } nodes { orderId } } }', variables: {}, operationName: null },
    { query: '{ outstandingShipments(input: {limit: 100}) { pageInfo { total hasNext } nodes { retailerSyncId shopSyncId offerSyncId outstandingQuantity createdAt updatedAt } } }', variables: {}, operationName: null },
    { query: '{ outstandingShipments(input: {retailerSyncId: "R-none"}) { nodes { outstandingQuantity } pageInfo { total } } }', variables: {}, operationName: null },
    { query: '{ __typename x: __typename }', variables: {}, operationName: null },
    // More entries in one object than one concat() takes (objectText groups them).
    { query: `{ orders(input: {limit: 3}) { nodes { ${Array.from({ length: 120 }, (_, i) => `f${i}: ${['orderId', 'orderTotal', 'createdAt', 'isActionable'][i % 4]}`).join(' ')} } } }`, variables: {}, operationName: null }
  ]
  for (const doc of documents) {
    const before = (await outcomes(fast)).answered ?? 0
    const a = await ask(fast, token, doc)
    const b = await ask(standard, token, doc)
    t.equal(a.status, 200, doc.query.replace(/^#.*\n/gm, '').slice(0, 60))
    t.equal(a.body, b.body, 'byte-identical')
    t.equal((await outcomes(fast)).answered, before + 1, 'answered by the pass-through')
  }
  // The tricky floats are in the data, and come back as JavaScript writes them.
  const shipments = await ask(fast, token, documents[4]!)
  for (const text of ['1e-7', '0.30000000000000004', '123456789012345680000', '1e+21', '15165.64', '0.000001', '1.234e-7', '1e-300']) {
    t.ok(shipments.body.includes(`"outstandingQuantity":${text}`), `outstandingQuantity ${text}`)
  }
})

t.test('with the cost budget on: the same extensions.cost (requested and billed) and headers; a refused query is the standard 429', async (t) => {
  const env = { RATE_LIMIT_ENABLED: 'true', GRAPHQL_COST_BUCKET: '100000', GRAPHQL_COST_RESTORE_PER_SECOND: '1' }
  const { fast, standard, token, pool } = await twoApps(t, env)
  const rand = new Random(7)
  let refused = 0
  // Every fifth a full page of 100, which asks for most of the small bucket: billed for what it returned,
  // it leaves too little for the next, so refusals come.
  const fullPage = { query: print(OrdersDocument), variables: { input: { limit: 100 } }, operationName: null }
  for (let i = 0; i < 60; i++) {
    const doc = i % 5 === 4 ? fullPage : randomDocument(schema, pool, rand)
    const a = await ask(fast, token, doc)
    const b = await ask(standard, token, doc)
    // Each app has its own bucket, refilled by the clock: equal but for the points that came back meanwhile.
    // (The refused message names the points available too: a second between the two asks moved it by one.)
    const normal = (body: string) => body.replace(/"currentlyAvailable":\d+/, '"currentlyAvailable":N')
      .replace(/retry in \d+ s/, 'retry in N s').replace(/and \d+ of (\d+) are available/, 'and N of $1 are available')
    t.equal(a.status, b.status)
    t.equal(normal(a.body), normal(b.body), `document ${i}`)
    if (a.status === 429) refused++
  }
  t.ok(refused > 0, `the small bucket ran dry (${refused} refused)`)
  const o = await outcomes(fast)
  t.ok((o.answered ?? 0) > 0 && (o.cost_refused ?? 0) > 0, JSON.stringify(o))
})

t.test('a database failure during the pass-through is answered as the standard execution answers it', async (t) => {
  // The read waits on a lock past DB_LOCK_TIMEOUT_MS and PostgreSQL cancels it (55P03), on either path.
  const { fast, standard, database, token } = await twoApps(t, { DB_LOCK_TIMEOUT_MS: '200' })
  const doc = { query: '{ outstandingShipments { nodes { outstandingQuantity } } }', variables: {}, operationName: null }
  const lock = await holdInTransaction(database.sql, (tx) => tx`lock table outstanding_shipments in access exclusive mode`)
  t.teardown(() => lock.release())
  const a = await ask(fast, token, doc)
  const b = await ask(standard, token, doc)
  t.equal(a.body, b.body, 'the same error answer')
  t.equal(a.status, b.status)
  t.match(JSON.parse(a.body), { errors: [{ extensions: { code: String } }] }, 'an error answer')
  t.equal((await outcomes(fast)).database_error, 1, 'counted')
})
