import t from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { lagFromSamples, parseLsn, ReadRouter } from '../../src/db/read-router.js'
import { createMetrics } from '../../src/metrics.js'
import { testConfig, testDatabase } from '../helpers/build.js'
import { credential, seedDemo } from '../helpers/fixtures.js'
import { eventually } from '../helpers/eventually.js'

/*
 * The read router (db/read-router.ts) without a real standby: the lag arithmetic on its own, and the
 * routing with a second database standing in for the replica (not in recovery: no lag), so that where a
 * read went shows in its answer. Real streaming replication, paused replay and PgBouncer are exercised
 * by the topology test (npm run test:topology).
 */

t.test('WAL positions and the lag they give', async (t) => {
  t.equal(parseLsn('0/0'), 0n)
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xB374D848n)
  t.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'), 'the high word counts first')

  const samples = [{ at: 1_000, lsn: 100n }, { at: 1_250, lsn: 200n }, { at: 1_500, lsn: 300n }]
  t.same(lagFromSamples(samples, 300n, 1_600), { ms: 100, bounded: true }, 'replayed everything: only the time since the last sample')
  t.same(lagFromSamples(samples, 250n, 1_600), { ms: 350, bounded: true }, 'between samples: behind since the older one')
  t.same(lagFromSamples(samples, 99n, 1_600), { ms: 600, bounded: false }, 'before every sample: a lower bound only')
  t.same(lagFromSamples([], 0n, 5), { ms: 0, bounded: false })
})

t.test('reads go to the replica while it keeps up, to the primary when it does not answer', async (t) => {
  const primary = await testDatabase(t)
  const replica = await testDatabase(t)
  await seedDemo(primary)
  await seedDemo(replica)
  // What only the "replica" lacks: its answers show where a read went.
  await replica.sql`update sellers set name = 'as the replica has it' where id = 1`
  const token = await credential(primary, 1, 'access-token')
  const replicaPool = openDatabase(replica.url, { max: 2 })
  const metrics = createMetrics()
  const lags: Array<number | null> = []
  const errors: unknown[] = []
  const reads = new ReadRouter(primary, replicaPool, {
    maxLagMs: 1_000, pollMs: 2_000, onLag: (lag) => lags.push(lag), onPollError: (err) => errors.push(err)
  })
  await reads.start()
  t.teardown(async () => { await reads.stop(); await replicaPool.close() })
  const app = await buildApp({ config: testConfig(primary), database: primary, reads, metrics })
  t.teardown(() => app.close())

  const sellerName = async (): Promise<string> => {
    const res = await app.inject({
      method: 'POST',
      url: '/v2/graphql',
      headers: { authorization: `Bearer ${token}` },
      payload: { query: '{ seller { name } }' }
    })
    t.equal(res.statusCode, 200, res.body)
    return res.json().data.seller.name
  }

  // Not in recovery: no lag beyond the time the poll itself took.
  const state = reads.state()
  t.ok(state.configured && state.target === 'replica' && state.lagMs !== null && state.lagMs < 1_000, JSON.stringify(state))
  t.equal(await sellerName(), 'as the replica has it', 'the read went to the replica')
  const ready = await app.inject({ url: '/health/ready' })
  t.match(ready.json(), { status: 'ready', replica: { lagMs: Number, reads: 'replica' } })

  // The replica goes away: the next poll fails, reads go to the primary, readiness stays.
  await replicaPool.close()
  await reads.poll()
  t.same(reads.state(), { configured: true, lagMs: null, target: 'primary' })
  t.not(await sellerName(), 'as the replica has it', 'the read went to the primary')
  t.same((await app.inject({ url: '/health/ready' })).json(), { status: 'ready', replica: { lagMs: null, reads: 'primary' } })
  await reads.poll()
  t.equal(errors.length, 1, 'a replica that stays away is reported once, not at every poll')
  t.equal(lags.at(-1), null)

  const scraped = await metrics.registry.metrics()
  t.match(scraped, /oxs_graphql_reads_total\{database="replica"\} 1\n/)
  t.match(scraped, /oxs_graphql_reads_total\{database="primary"\} 1\n/)
})

t.test('without a replica every read is on the primary and readiness says nothing of one', async (t) => {
  const primary = await testDatabase(t)
  const reads = ReadRouter.primaryOnly(primary)
  await reads.start()
  t.same(reads.state(), { configured: false, lagMs: null, target: 'primary' })
  t.equal(reads.db(), primary.db)
})

t.test('a replica that was never polled is not read from', async (t) => {
  const primary = await testDatabase(t)
  const replica = await testDatabase(t)
  let now = Date.now()
  const pollErrors: string[] = []
  const reads = new ReadRouter(primary, replica, {
    maxLagMs: 1_000, pollMs: 100, now: () => now, onPollError: (err) => { pollErrors.push(String(err)) }
  })
  t.equal(reads.target(), 'primary', 'lag unknown until the first poll')
  // A poll that fails (the test server refusing a connection while the suite is busy) leaves the lag unknown,
  // as it should: poll until one answers, and show what the others said.
  await eventually(t, 'a poll that answers, then reads on the replica', async () => {
    await reads.poll()
    return reads.target() === 'replica'
  }, { timeoutMs: 10_000 })
  if (pollErrors.length > 0) t.comment(`polls that failed first: ${pollErrors.join('; ')}`)
  now += 200
  t.equal(reads.target(), 'replica', 'two intervals since the poll: still known')
  now += 50
  t.equal(reads.target(), 'primary', 'no poll for two intervals: the lag is not known any more')
})
