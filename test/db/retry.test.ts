import t from 'tap'
import { testDatabase } from '../helpers/build.js'
import { isRetryableConflict, retryOnConflict } from '../../src/db/retry.js'
import { isDatabaseUnavailable } from '../../src/db/unavailable.js'

t.test('a deadlock victim is run again and both transactions commit', async (t) => {
  const database = await testDatabase(t)
  const { sql } = database
  await sql`create table retry_probe (id int primary key, v int not null)`
  await sql`insert into retry_probe values (1, 0), (2, 0)`

  let release!: () => void
  const bothHoldOne = new Promise<void>((resolve) => { release = resolve })
  let holding = 0
  const hold = () => { if (++holding === 2) release() }
  let attempts = 0
  const retried: unknown[] = []
  // Opposite lock order: PostgreSQL aborts one of the two with 40P01; the retry then waits its turn.
  const run = (first: number, second: number) => retryOnConflict(() => sql.begin(async (tx) => {
    attempts++
    await tx`update retry_probe set v = v + 1 where id = ${first}`
    hold()
    await bothHoldOne
    await tx`update retry_probe set v = v + 1 where id = ${second}`
  }), { baseDelayMs: 5, onRetry: (err) => retried.push(err) })

  await Promise.all([run(1, 2), run(2, 1)])
  t.equal(retried.length, 1, 'one transaction was the deadlock victim')
  t.equal((retried[0] as { code: string }).code, '40P01')
  t.equal(attempts, 3)
  t.same(await sql`select id, v from retry_probe order by id`, [{ id: 1, v: 2 }, { id: 2, v: 2 }], 'each committed once')
})

t.test('other errors are thrown at once; conflicts only up to the attempt limit', async (t) => {
  let calls = 0
  await t.rejects(retryOnConflict(async () => { calls++; throw Object.assign(new Error('duplicate'), { code: '23505' }) }), { code: '23505' })
  t.equal(calls, 1)
  calls = 0
  await t.rejects(retryOnConflict(async () => { calls++; throw Object.assign(new Error('serialization'), { code: '40001' }) }, { attempts: 3, baseDelayMs: 1 }), { code: '40001' })
  t.equal(calls, 3)
  calls = 0
  t.equal(await retryOnConflict(async () => { if (++calls < 2) throw Object.assign(new Error('x'), { code: '40001' }); return 'done' }, { baseDelayMs: 1 }), 'done')
  t.notOk(isRetryableConflict(null))
  t.notOk(isRetryableConflict('40001'))
})

t.test('the lock table full (53200) is the database unable to do it now: 503 material, not a 500', async (t) => {
  const database = await testDatabase(t)
  const err = await database.sql.begin(async (tx) => {
    await tx`select count(pg_advisory_xact_lock(1, g)) from generate_series(1, 1000000) g`
  }).then(() => null, (e: unknown) => e)
  t.match(err, { code: '53200' }, 'a million locks in one transaction: out of shared memory')
  t.ok(isDatabaseUnavailable(err), 'classified as the database unavailable')
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('duplicate'), { code: '23505' })), 'a constraint is not')
  const [row] = await database.sql`select 1 as one`
  t.equal(row!.one, 1, 'the database serves again once that transaction is gone')
})
