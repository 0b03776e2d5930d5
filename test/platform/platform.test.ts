import t from 'tap'
import type { InjectOptions } from 'fastify'
import { build } from '../helpers/build.js'
import { eventually } from '../helpers/eventually.js'
import { createSeller, credential, platformKey } from '../helpers/fixtures.js'
import { PLATFORM_POINTS_PATH, PLATFORM_SELLERS_PATH, restEndpoints } from '../../src/routes/rest-contract.js'
import { PlatformRowErrors as E } from '../../src/platform/texts.js'

/*
 * PUT /v2/platform/sellers and POST /v2/platform/sellers/points (docs/platform/api.md): the per-row results,
 * every refusal's text and code, a re-send that changes nothing, the points ledger equal to the balance,
 * racing re-sends, and the platform key kept apart from the seller credentials in both directions (for
 * every platform route: PUT /v2/platform/retailers has its own file, retailers.test.ts).
 */

const seller = (companyId: number, extra: Record<string, unknown> = {}) => ({
  companyId,
  name: `Seller ${companyId}`,
  status: 'ACTIVE',
  takeRate: '0.02',
  autoRejectEnabled: false,
  stores: [{ id: companyId * 10 + 1, name: `Store ${companyId}-1` }],
  ...extra
})

async function setup (t: Parameters<typeof build>[0]) {
  const ctx = await build(t)
  const key = await platformKey(ctx.database)
  const call = (method: 'PUT' | 'POST', url: string, body: unknown, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body)
    })
  const sellers = (body: unknown, headers?: Record<string, string>) => call('PUT', PLATFORM_SELLERS_PATH, body, headers)
  const points = (body: unknown, headers?: Record<string, string>) => call('POST', PLATFORM_POINTS_PATH, body, headers)
  return { ...ctx, key, sellers, points }
}

const errorOf = (e: { code: string, text: string }) => ({ error: e.text, code: e.code })

t.test('sellers: inserted, updated, unchanged, stores added and renamed', async (t) => {
  const { sellers, database } = await setup(t)
  const first = await sellers([seller(1), seller(2, { status: 'SUSPENDED', takeRate: 0.1, autoRejectEnabled: true })])
  t.equal(first.statusCode, 200)
  t.same(first.json(), {
    error: false,
    status: true,
    statusCode: 200,
    message: 'Sellers upserted',
    data: { received: 2, inserted: 2, updated: 0, unchanged: 0, failed: 0, errors: [] }
  })
  const [row] = await database.sql`select name, status, take_rate::text as rate, auto_reject_enabled as auto
    from sellers where id = 2`
  t.same(row, { name: 'Seller 2', status: 'suspended', rate: '0.1000', auto: true })
  const before = await database.sql`select id, updated_at::text from sellers order by id`

  const again = await sellers([seller(1), seller(2, { status: 'SUSPENDED', takeRate: '0.1000', autoRejectEnabled: true })])
  t.same(again.json().data, { received: 2, inserted: 0, updated: 0, unchanged: 2, failed: 0, errors: [] },
    'a re-send is unchanged row by row (0.1 and "0.1000" are the same rate)')
  t.same(await database.sql`select id, updated_at::text from sellers order by id`, before, 'updated_at untouched')

  const changed = await sellers([
    seller(1, { stores: [{ id: 11, name: 'Renamed' }, { id: 12, name: 'New store' }] }),
    seller(2, { name: 'Seller Two', status: 'SUSPENDED', takeRate: '0.1', autoRejectEnabled: true })
  ])
  t.same(changed.json().data, { received: 2, inserted: 0, updated: 2, unchanged: 0, failed: 0, errors: [] })
  t.same(await database.sql`select id, seller_id, name from stores order by id`, [
    { id: 11, seller_id: 1, name: 'Renamed' }, { id: 12, seller_id: 1, name: 'New store' },
    { id: 21, seller_id: 2, name: 'Store 2-1' }
  ])
  const omitted = await sellers([seller(1, { stores: [] })])
  t.same(omitted.json().data.unchanged, 1, 'a store left out is never removed')
  t.equal((await database.sql`select count(*)::int as n from stores`)[0].n, 3)

  // A row made without an id (the demo seed's way) never draws one of the marketplace's.
  const made = await createSeller(database)
  t.ok(made.sellerId > 2 && made.storeIds.every((id) => id > 21), 'the id sequences moved past the marketplace\'s ids')
})

t.test('sellers: every refusal names its field, with its code; the other rows are applied', async (t) => {
  const { sellers, database } = await setup(t)
  await sellers([seller(9)])
  const rows: Array<[unknown, { code: string, text: string }, number | null]> = [
    [42, E.notAnObject, null],
    [{ ...seller(3), companyId: undefined }, E.missing('companyId'), null],
    [seller(0), E.companyId, null],
    [seller(2 ** 31, { stores: [] }), E.companyId, null],
    [seller(4, { name: '' }), E.name('name'), 4],
    [seller(5, { name: 'a\u0000b' }), E.unstorable('name'), 5],
    [seller(6, { status: 'active' }), E.status, 6],
    [seller(7, { takeRate: 1.5 }), E.takeRate, 7],
    [seller(8, { takeRate: '0.00001' }), E.takeRate, 8],
    [seller(10, { autoRejectEnabled: 'yes' }), E.autoRejectEnabled, 10],
    [seller(11, { stores: {} }), E.stores, 11],
    [seller(12, { stores: [7] }), E.store(0), 12],
    [seller(13, { stores: [{ id: -1, name: 'x' }] }), E.storeId(0), 13],
    [seller(14, { stores: [{ id: 141, name: 'a' }, { id: 141, name: 'b' }] }), E.storeIdTwiceInRow(1, 141), 14],
    [seller(15, { stores: [{ id: 91, name: 'taken' }] }), E.storeOfAnotherSeller(0, 91), 15],
    [seller(16, { stores: [{ id: 161 }] }), E.missing('stores[0].name'), 16],
    [seller(17), null as never, 17],
    [seller(17), E.companyIdTwice(17, 16), 17],
    [seller(18, { stores: [{ id: 171, name: 'again' }] }), E.storeIdTwiceInRequest(0, 171, 16), 18]
  ]
  const res = await sellers(rows.map(([row]) => row))
  t.equal(res.statusCode, 200)
  const data = res.json().data
  t.same(data.errors, rows.flatMap(([, error, id], index) => error ? [{ index, id, ...errorOf(error) }] : []))
  t.same([data.received, data.inserted, data.failed], [rows.length, 1, rows.length - 1])
  const several = await sellers([{ companyId: 'x', name: 7 }])
  t.same(several.json().data.errors[0], {
    index: 0,
    id: null,
    code: 'INVALID_COMPANY_ID',
    error: [E.companyId, E.name('name'), E.missing('status'), E.missing('takeRate'), E.missing('autoRejectEnabled'),
      E.missing('stores')].map((e) => e.text).join('; ')
  }, 'every broken field, the first one\'s code')
  t.same((await database.sql`select id from sellers order by id`).map((r) => r.id), [9, 17], 'refused rows wrote nothing')
})

t.test('request-level failures carry no data', async (t) => {
  const { sellers, points } = await setup(t)
  for (const [send, what] of [[sellers, 'seller rows'], [points, 'points rows']] as const) {
    for (const body of [{}, [], 'null', '"x"']) {
      const res = await send(body)
      t.equal(res.statusCode, 400)
      t.same(res.json(), {
        error: true, status: false, statusCode: 400, message: `Request body must be a non-empty JSON array of ${what}`, code: 'NOT_AN_ARRAY'
      })
    }
    const many = await send(Array.from({ length: 1001 }, () => ({})))
    t.same(many.json(), {
      error: true, status: false, statusCode: 400, message: 'Too many rows: at most 1000 per request, got 1001', code: 'TOO_MANY_ROWS'
    })
    const broken = await send('[{')
    t.same([broken.statusCode, broken.json().code, 'data' in broken.json()], [400, 'INVALID_JSON', false])
  }
})

t.test('points: a ledger entry per reference, the balance equal to the ledger, never below zero', async (t) => {
  const { sellers, points, database } = await setup(t)
  await sellers([seller(1), seller(2)])
  const first = await points([
    { companyId: 1, amount: '100.50', reference: 'T1' },
    { companyId: 1, amount: -0.5, reference: 'A1' },
    { companyId: 2, amount: 20, reference: 'T1' },
    { companyId: 2, amount: -30, reference: 'A2' },
    { companyId: 3, amount: 5, reference: 'T9' },
    { companyId: 1, amount: '100.5', reference: 'T1' },
    { companyId: 1, amount: 7, reference: 'T1' },
    { companyId: 1, amount: 999_999_999_999, reference: 'BIG' },
    { companyId: 1, amount: 0, reference: 'Z' },
    { companyId: 1, amount: '1.001', reference: 'Z' },
    { companyId: 1, amount: 1, reference: '' },
    { companyId: 1, amount: 1, reference: 'x\ud800' },
    { amount: 1, reference: 'M' }
  ])
  t.equal(first.statusCode, 200)
  t.equal(first.json().message, 'Points recorded')
  t.same(first.json().data, {
    received: 13,
    inserted: 3,
    updated: 0,
    unchanged: 1,
    failed: 9,
    errors: [
      { index: 3, id: 'A2', ...errorOf(E.belowZero('-30.00', '20.00')) },
      { index: 4, id: 'T9', ...errorOf(E.sellerNotFound(3)) },
      { index: 6, id: 'T1', ...errorOf(E.referenceConflict('T1', 1, '100.50')) },
      { index: 7, id: 'BIG', ...errorOf(E.tooLarge('999999999999.00', '100.00')) },
      { index: 8, id: 'Z', ...errorOf(E.amount) },
      { index: 9, id: 'Z', ...errorOf(E.amount) },
      { index: 10, id: null, ...errorOf(E.reference) },
      { index: 11, id: null, ...errorOf(E.unstorable('reference')) },
      { index: 12, id: 'M', ...errorOf(E.missing('companyId')) }
    ]
  })
  const ledger = async () => database.sql`select s.id, s.points_balance::text as balance,
      (select coalesce(sum(amount), 0)::text from points_ledger l where l.seller_id = s.id) as ledger,
      (select count(*)::int from points_ledger l where l.seller_id = s.id) as entries
    from sellers s order by s.id`
  t.same(await ledger(), [
    { id: 1, balance: '100.00', ledger: '100.00', entries: 2 },
    { id: 2, balance: '20.00', ledger: '20.00', entries: 1 }
  ])
  const [entry] = await database.sql`select kind, amount::text, balance_after::text from points_ledger where reference = 'A1'`
  t.same(entry, { kind: 'ADJUSTMENT', amount: '-0.50', balance_after: '100.00' })
  const before = await database.sql`select id, updated_at::text from sellers order by id`
  const resent = await points([{ companyId: 1, amount: '100.50', reference: 'T1' }, { companyId: 2, amount: '20', reference: 'T1' }])
  t.same(resent.json().data, { received: 2, inserted: 0, updated: 0, unchanged: 2, failed: 0, errors: [] })
  t.same(await database.sql`select id, updated_at::text from sellers order by id`, before, 'a re-send touches nothing')
  const toZero = await points([{ companyId: 2, amount: -20, reference: 'A3' }])
  t.equal(toZero.json().data.inserted, 1, 'an adjustment down to exactly zero is allowed')
  t.same((await ledger())[1], { id: 2, balance: '0.00', ledger: '0.00', entries: 2 })
})

t.test('a re-sent batch racing its first send: one write, no 5xx', async (t) => {
  const { sellers, points, database } = await setup(t)
  const batch = Array.from({ length: 200 }, (_, i) => seller(i + 1))
  const answers = await Promise.all([sellers(batch), sellers(batch), sellers(batch)])
  t.same(answers.map((a) => a.statusCode), [200, 200, 200])
  const data = answers.map((a) => a.json().data)
  t.same(data.map((d) => d.inserted).sort(), [0, 0, 200], 'one send inserts every row')
  t.same(data.map((d) => d.unchanged).sort(), [0, 200, 200], 'the others find them unchanged')
  t.equal((await database.sql`select count(*)::int as n from stores`)[0].n, 200)

  const top = batch.map((s) => ({ companyId: s.companyId, amount: 10, reference: `T-${s.companyId}` }))
  const racing = await Promise.all([points(top), points(top), points([...top].reverse())])
  t.same(racing.map((a) => a.statusCode), [200, 200, 200])
  t.same(racing.map((a) => a.json().data.inserted).sort((a: number, b: number) => a - b), [0, 0, 200])
  const [sum] = await database.sql`select count(*)::int as n, sum(points_balance)::text as total from sellers`
  t.same(sum, { n: 200, total: '2000.00' }, 'booked once each')

  const keyed = await Promise.all([1, 2].map(() => points([{ companyId: 1, amount: 1, reference: 'K' }], { 'idempotency-key': 'k-1' })))
  t.same(keyed.map((a) => a.statusCode), [200, 200])
  t.equal(keyed.filter((a) => a.headers['idempotent-replayed'] === 'true').length, 1, 'one of them is the replay')
  t.same(keyed[0].json(), keyed[1].json())
})

t.test('a backend terminated mid-batch: all or nothing, and a re-send converges', async (t) => {
  const { sellers, database } = await setup(t)
  const batch = Array.from({ length: 1000 }, (_, i) => seller(i + 1, {
    stores: Array.from({ length: 3 }, (_, s) => ({ id: (i + 1) * 10 + s, name: `S${s}` }))
  }))
  // The store insert waits on a lock held here, so the batch is caught inside its transaction.
  const blocker = database.sql.reserve()
  const held = await blocker
  await held`begin`
  await held`lock table stores in exclusive mode`
  const pending = sellers(batch)
  const victim: number = await eventually(t, 'the batch waiting inside its transaction', async () => {
    // This database's (pg_locks is the server's, and the test databases, copies of one template, share oids).
    const [row] = await database.sql`select pid from pg_locks where relation = 'stores'::regclass and not granted
      and database = (select oid from pg_database where datname = current_database())`
    return row?.pid as number | undefined
  })
  t.ok(victim, 'the batch is waiting inside its transaction')
  await database.sql`select pg_terminate_backend(${victim})`
  await held`rollback`
  held.release()
  const res = await pending
  t.ok(res.statusCode === 503 || res.statusCode === 200, `answered ${res.statusCode}, never a 500`)
  const [counts] = await database.sql`select (select count(*)::int from sellers) as sellers, (select count(*)::int from stores) as stores`
  t.ok(res.statusCode === 503 ? counts.sellers === 0 && counts.stores === 0 : counts.stores === 3000, 'all or nothing')
  const again = await sellers(batch)
  t.equal(again.statusCode, 200)
  const [after] = await database.sql`select (select count(*)::int from sellers) as sellers, (select count(*)::int from stores) as stores`
  t.same(after, { sellers: 1000, stores: 3000 }, 'the re-send converges')
})

t.test('BOLA: the platform key and the seller credentials never cross', async (t) => {
  const { app, database, key } = await setup(t)
  const { sellerId } = await createSeller(database)
  const sellerKeys = {
    'api-key': await credential(database, sellerId, 'api-key'),
    'access-token': await credential(database, sellerId, 'access-token')
  }
  const otherEnvironment = await platformKey(database, 'production')
  const revoked = await platformKey(database)
  await database.sql`update credentials set revoked_at = now() where kind = 'platform-key' and id = (select max(id) from credentials)`
  const missing = await app.inject({ method: 'PUT', url: PLATFORM_SELLERS_PATH, payload: [seller(1)] })
  t.equal(missing.statusCode, 401)
  const unauthorized = missing.body

  const payloads = new Map<unknown, unknown[]>([
    [restEndpoints.platformSellers, [seller(1)]],
    [restEndpoints.platformPoints, [{ companyId: sellerId, amount: 5, reference: 'X' }]],
    [restEndpoints.platformRetailers, [{
      id: 1, companyId: sellerId, name: 'R', firstName: null, lastName: null, phone: null, whatsapp: null, shops: []
    }]]
  ])
  // Every platform route of the contract; one without a valid request here still gets a body (auth comes first).
  for (const endpoint of Object.values(restEndpoints).filter((e) => e.path.startsWith('/v2/platform/'))) {
    const payload = payloads.get(endpoint) ?? [{}]
    const bearers = [...Object.values(sellerKeys), otherEnvironment, revoked, `${key}x`, 'oxs_test_pk_']
    for (const bearer of bearers) {
      for (const headers of [{ authorization: `Bearer ${bearer}` }, { 'x-api-key': bearer }]) {
        const res = await app.inject({ method: endpoint.method as InjectOptions['method'], url: endpoint.path, headers, payload })
        t.equal(res.statusCode, 401, `${endpoint.path} refuses ${bearer.slice(0, 12)}… in ${Object.keys(headers)[0]}`)
        t.equal(res.body, unauthorized, 'the same body as a missing credential')
      }
    }
  }
  const [written] = await database.sql`select (select count(*)::int from points_ledger) as points,
    (select count(*)::int from retailers) as retailers, (select count(*)::int from seller_retailers) as links`
  t.same(written, { points: 0, retailers: 0, links: 0 }, 'nothing was written')

  // Every seller route, every way a seller credential is presented, refuses the platform key.
  const sellerRoutes: Array<{ method: InjectOptions['method'], url: string, payload: unknown }> = [
    { method: 'POST', url: restEndpoints.statusUpdate.path, payload: { order_status: [{ Order_id: 1, Order_Status: 'ORDER_ACCEPTED' }] } },
    { method: 'PUT', url: restEndpoints.shipmentSync.path, payload: [{ retailerSyncId: 'R', offerSyncId: 'O', outstandingQuantity: 1 }] },
    { method: 'POST', url: '/v2/graphql', payload: { query: '{ seller { companyId } }' } },
    { method: 'GET', url: '/v2/graphql?query=%7Bseller%7BcompanyId%7D%7D', payload: undefined }
  ]
  for (const route of sellerRoutes) {
    for (const headers of [{ authorization: `Bearer ${key}` }, { 'x-api-key': key }]) {
      const res = await app.inject({ ...route, headers: { ...headers, 'content-type': 'application/json' } } as InjectOptions)
      t.equal(res.statusCode, 401, `${route.method} ${route.url} refuses the platform key`)
      t.notMatch(res.body, /companyId|outstanding|successful/, 'and shows nothing of a seller')
    }
  }
  t.equal((await database.sql`select count(*)::int as n from outstanding_shipments`)[0].n, 0)
})

t.test('the credentials table: a platform key has no seller, a seller credential has one', async (t) => {
  const { database } = await setup(t)
  const { sellerId } = await createSeller(database)
  await t.rejects(database.sql`insert into credentials (seller_id, kind, environment, key_id, secret_hash)
    values (${sellerId}, 'platform-key', 'testing', 'k1', 'h')`, { message: /credentials_seller_by_kind/ })
  await t.rejects(database.sql`insert into credentials (seller_id, kind, environment, key_id, secret_hash)
    values (null, 'api-key', 'testing', 'k2', 'h')`, { message: /credentials_seller_by_kind/ })
  const secret = await platformKey(database, 'production')
  t.match(secret, /^oxs_live_pk_[A-Za-z0-9]{12}_[A-Za-z0-9_-]{43}$/)
  t.match(await platformKey(database), /^oxs_test_pk_/)
})

t.test('a batch naming tens of thousands of records takes a bounded number of locks (the lock table is shared)',
  async (t) => {
    // 1,000 sellers with 35 stores each fits the 1 MB body: 36,000 ids. One advisory lock per id would pass
    // PostgreSQL's shared lock table (max_locks_per_transaction 64 x connections, about 15,000 here) and
    // fail this batch with "out of shared memory", and any other transaction needing a lock meanwhile.
    const { sellers, database } = await setup(t)
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      companyId: 500_000 + i,
      name: 'S',
      status: 'ACTIVE',
      takeRate: '0',
      autoRejectEnabled: false,
      stores: Array.from({ length: 35 }, (_, j) => ({ id: 1_000_000 + i * 35 + j, name: 's' }))
    }))
    const body = JSON.stringify(rows)
    t.ok(body.length < 1024 * 1024, `the body fits the limit (${body.length} bytes)`)
    const res = await sellers(rows)
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'placed' : res.body.slice(0, 300))
    t.match(res.json().data, { received: 1000, inserted: 1000, failed: 0 })
    const [stores] = await database.sql`select count(*)::int as n from stores where id >= 1000000`
    t.equal(stores!.n, 35_000)
  })
