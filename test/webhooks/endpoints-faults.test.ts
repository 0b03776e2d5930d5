import t, { type Test } from 'tap'
import type postgres from 'postgres'
import { loadConfig } from '../../src/config.js'
import { openClient } from '../../src/db/client.js'
import { RequestError, RETRY_AFTER_SECONDS } from '../../src/errors.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { MAX_ENDPOINTS, WebhookText } from '../../src/webhooks/texts.js'
import { createSeller, credential } from '../helpers/fixtures.js'
import { serverDatabase, waitingBackend, type ServerDatabase } from '../helpers/server-database.js'
import { eventually } from '../helpers/eventually.js'
import { ready } from '../helpers/server-process.js'

/*
 * Faults in the middle of the webhook endpoint routes, against a real server process, made deterministic as
 * in platform/orders-faults.test.ts: triggers on subscriptions (insert, update, delete) and deliveries
 * (insert) wait on an advisory lock the test holds, so a request is caught after its writes, before its
 * commit. There its backend is terminated: the client must get the REST 503 of an unreachable database
 * (never a 500 or a stack trace) and nothing of the request may be stored — no endpoint without its secret,
 * no rotated secret, no test event without its delivery, no queued replay, no half-deleted endpoint, and the
 * limit of ten still counts right; then the very same call succeeds. And the process SIGTERMed while a
 * creation waits there: past the grace the process exits 1 and PostgreSQL rolls the creation back; within
 * it the creation finishes (201, stored, its secret opens) and the process exits 0.
 */

const HOLD = 7_700_031
const URL = 'https://93.184.216.34/hook'
/** The development key of the testing environment, which the server processes here seal secrets with. */
const box = SecretBox.of(loadConfig({}))!

const UNAVAILABLE = {
  error: true,
  status: false,
  statusCode: 503,
  message: new RequestError.ServiceUnavailable().message,
  code: 'SERVICE_UNAVAILABLE'
}

interface Answer { status: number, retryAfter: string | null, json: any }
type Call = (method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<Answer>

function caller (port: number, key: string): Call {
  return async (method, path, body) => {
    const res = await fetch(`http://127.0.0.1:${port}${WEBHOOK_ENDPOINTS_PATH}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body)
    })
    const text = await res.text()
    return { status: res.status, retryAfter: res.headers.get('retry-after'), json: text === '' ? null : JSON.parse(text) }
  }
}

/** The triggers that make a request wait inside its transaction, after its write, while HOLD is held. */
async function installHold (sql: postgres.Sql): Promise<void> {
  await sql.unsafe(`create function oxs_test_hold() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${HOLD}); return null; end $$;
    create trigger oxs_test_hold after insert or update or delete on subscriptions
      for each statement execute function oxs_test_hold();
    create trigger oxs_test_hold after insert on deliveries
      for each statement execute function oxs_test_hold()`)
}

/** A connection of the test's own that takes and gives back HOLD. */
function holder (t: Test, url: string) {
  const sql = openClient(url, { max: 1, application: 'oxs-test-holder' })
  t.teardown(() => sql.end({ timeout: 5 }))
  return {
    take: async () => { await sql`select pg_advisory_lock(${HOLD})` },
    give: async () => { await sql`select pg_advisory_unlock(${HOLD})` }
  }
}

/** Everything of the seller's that the endpoint routes write, every column. */
async function footprint (sql: postgres.Sql, sellerId: number) {
  return {
    endpoints: await sql`select * from subscriptions where seller_id = ${sellerId} order by id`,
    cursors: await sql`select c.* from subscription_cursors c join subscriptions s on s.id = c.subscription_id
      where s.seller_id = ${sellerId} order by c.subscription_id`,
    deliveries: await sql`select * from deliveries where seller_id = ${sellerId} order by id`,
    events: await sql`select * from seller_events where seller_id = ${sellerId} order by sequence`,
    counter: await sql`select * from seller_event_counters where seller_id = ${sellerId}`
  }
}

async function seller (made: ServerDatabase): Promise<{ sellerId: number, key: string }> {
  const { sellerId } = await createSeller(made.database)
  return { sellerId, key: await credential(made.database, sellerId, 'api-key') }
}

t.test('a backend terminated inside each mutating endpoint route: 503, nothing stored, the same call then succeeds', async (t) => {
  const made = await serverDatabase(t)
  const { sql } = made.database
  const { server, port } = await made.start()
  // A failed test shows what the server said: the one place its faults are visible.
  t.teardown(() => { if (!t.passing()) t.comment(`server output:\n${server.stdout().slice(-4000)}\n${server.stderr().slice(-3000)}`) })
  const { sellerId, key } = await seller(made)
  const call = caller(port, key)
  const created: Array<{ id: string, secret: string }> = []
  for (let i = 1; i < MAX_ENDPOINTS; i++) {
    const res = await call('POST', '', { url: `${URL}/${i}` })
    t.equal(res.status, 201, `endpoint ${i} created`)
    created.push(res.json.data)
  }
  await installHold(sql)
  const hold = holder(t, made.url)

  /** Sends the request, terminates its backend where the hold caught it, and checks that nothing of it was stored. */
  const terminatedInside = async (what: string, table: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => {
    const before = await footprint(sql, sellerId)
    await hold.take()
    const answer = call(method, path, body)
    const { pid, written } = await waitingBackend(t, sql, what, 10_000)
    t.ok(written.includes(table), `${what}: caught after writing ${table} (${written.join(', ')})`)
    await sql`select pg_terminate_backend(${pid})`
    await hold.give()
    const res = await answer
    t.same(res, { status: 503, retryAfter: String(RETRY_AFTER_SECONDS), json: UNAVAILABLE }, `${what}: the REST 503, nothing more`)
    t.same(await footprint(sql, sellerId), before, `${what}: nothing of it stored`)
    await eventually(t, 'ready again', () => ready(port), { timeoutMs: 10_000 })
    return await call(method, path, body)
  }

  // Create: caught after the row (with its sealed secret) is inserted, under the seller's count lock.
  const tenth = await terminatedInside('create', 'subscriptions', 'POST', '', { url: `${URL}/10` })
  t.equal(tenth.status, 201, 'the same creation succeeds')
  const [row] = await sql`select secret from subscriptions where id = ${tenth.json.data.id}::uuid`
  t.equal(box.open(tenth.json.data.id, row.secret), tenth.json.data.secret, 'stored with the secret it answered')
  const eleventh = await call('POST', '', { url: `${URL}/11` })
  t.same([eleventh.status, eleventh.json.message], [409, WebhookText.tooMany], 'the limit counted right: ten, not nine or eleven')

  const [a, b] = created
  const patched = await terminatedInside('patch', 'subscriptions', 'PATCH', `/${a.id}`, { description: 'changed', status: 'DISABLED' })
  t.same([patched.status, patched.json.data.description, patched.json.data.status], [200, 'changed', 'DISABLED'], 'patched once')

  const rotated = await terminatedInside('rotate-secret', 'subscriptions', 'POST', `/${a.id}/rotate-secret`)
  t.equal(rotated.status, 200, 'the same rotation succeeds')
  const [keys] = await sql`select secret, previous_secret from subscriptions where id = ${a.id}::uuid`
  t.same([box.open(a.id, keys.secret), box.open(a.id, keys.previous_secret)], [rotated.json.data.secret, a.secret],
    'rotated once: the new secret signs, the creation\'s is the previous one (not a secret of the cut-off rotation)')

  // Test: caught after its event is recorded and numbered and its delivery queued.
  const tested = await terminatedInside('test', 'deliveries', 'POST', `/${b.id}/test`)
  t.equal(tested.status, 200, 'the same test succeeds')
  t.equal(tested.json.data.sequence, '1', 'the cut-off attempt\'s event number was given back: no hole in the log')

  const replayed = await terminatedInside('replay', 'deliveries', 'POST', `/${b.id}/replay`, { eventIds: [tested.json.data.eventId] })
  t.same([replayed.status, replayed.json.data], [200, { queued: 1, through: '1' }], 'the same replay queues it once')

  const deleted = await terminatedInside('delete', 'subscriptions', 'DELETE', `/${b.id}`)
  t.same([deleted.status, deleted.json.data], [200, { id: b.id }], 'the same deletion succeeds')
  const [left] = await sql`select (select count(*)::int from subscriptions where seller_id = ${sellerId}) as endpoints,
    (select count(*)::int from deliveries where subscription_id = ${b.id}::uuid) as queued`
  t.same(left, { endpoints: MAX_ENDPOINTS - 1, queued: 0 }, 'deleted with its queue')

  t.equal(server.child.exitCode, null, 'the process lived through it')
  t.same(server.lines().filter((l) => Number(l.level) >= 50), [], 'no error logged: each was a database that went away')
  t.notMatch(server.stderr(), /uncaught|TypeError|\n\s+at /i, 'no stack trace')
})

t.test('SIGTERM while an endpoint is being created: past the grace nothing is stored (exit 1), within it the creation finishes (exit 0)', async (t) => {
  const made = await serverDatabase(t)
  const { sql } = made.database
  const { sellerId, key } = await seller(made)
  await installHold(sql)
  const hold = holder(t, made.url)
  const count = async () => (await sql`select count(*)::int as n from subscriptions where seller_id = ${sellerId}`)[0].n

  // Past the grace: the process gives up on the creation and exits 1; the client loses its connection, and
  // PostgreSQL rolls the orphaned transaction back once it gets past the hold (its client is gone: no commit).
  const first = await made.start({ SHUTDOWN_GRACE_MS: '1000' })
  await hold.take()
  const cut = caller(first.port, key)('POST', '', { url: `${URL}/1` }).then((r) => r.status, (err: Error) => err.message)
  const { pid } = await waitingBackend(t, sql, 'the creation', 10_000)
  first.server.child.kill('SIGTERM')
  t.equal(await first.server.exited, 1, 'exit 1: the grace ran out')
  t.equal(await cut, 'fetch failed', 'the client lost its connection, no answer')
  await hold.give()
  await eventually(t, 'the orphaned backend gone', async () =>
    (await sql`select count(*)::int as n from pg_stat_activity where pid = ${pid}`)[0].n === 0, { timeoutMs: 10_000 })
  t.equal(await count(), 0, 'the cut-off creation left nothing')

  // Within the grace: a restarted server creates it; then a second creation waits in its transaction when the
  // signal comes and is let go once the server is closing. It finishes, and only then does the process exit.
  const grace = 10_000
  const second = await made.start({ SHUTDOWN_GRACE_MS: String(grace), LOG_LEVEL: 'info' })
  const call = caller(second.port, key)
  t.equal((await call('POST', '', { url: `${URL}/1` })).status, 201, 'the restarted server creates the cut-off one')
  await hold.take()
  const answer = call('POST', '', { url: `${URL}/2` })
  await waitingBackend(t, sql, 'the creation', 10_000)
  const signalledAt = Date.now()
  second.server.child.kill('SIGTERM')
  // Drained to the one thing left: the signal taken, the listener closed, only the creation in flight.
  await eventually(t, 'the server closing', async () => !(await ready(second.port)))
  t.equal(second.server.child.exitCode, null, 'still running while the creation is in flight')
  await hold.give()
  const res = await answer
  t.equal(res.status, 201, 'the creation finished')
  t.equal(await second.server.exited, 0, 'exit 0')
  const tookMs = Date.now() - signalledAt
  t.ok(tookMs < grace, `stopped ${tookMs} ms after SIGTERM, within the grace`)
  t.ok(second.server.lines().some((l) => l.msg === 'shutdown complete'), 'the pool closed after the request')
  const [row] = await sql`select secret from subscriptions where id = ${res.json.data.id}::uuid`
  t.equal(box.open(res.json.data.id, row.secret), res.json.data.secret, 'stored, with the secret it answered')
  t.equal(await count(), 2)
})
