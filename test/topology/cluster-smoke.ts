import net from 'node:net'
import t from 'tap'
import postgres from 'postgres'
import { eventually } from '../helpers/eventually.js'
import { startTopology, topologyAvailable, type Topology } from './cluster.js'

/*
 * The topology harness itself: writes through PgBouncer (transaction pooling, so clients do not prepare),
 * reads them on the standby once replayed, makes the standby lag on purpose, and leaves no port open.
 * Not a *.test.ts: `npm test` leaves it out; run it with
 *   npx tap --before= --after= --disable-coverage test/topology/cluster-smoke.ts
 * (empty --before/--after: the suite's hooks start the shared test database, which this file does not use,
 * and their coverage of src/db fails the thresholds even with --disable-coverage), or `npx tsx` it.
 */

/** A short-lived client; through PgBouncer it must not use named prepared statements. */
function client (url: string, options: { prepare?: boolean, max?: number } = {}): postgres.Sql {
  return postgres(url, { max: options.max ?? 1, prepare: options.prepare ?? true, onnotice: () => {} })
}

function portOf (url: string): number {
  return Number(new URL(url).port)
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
function listening (port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

const available = topologyAvailable()
if (!available.ok) {
  t.plan(0, `PostgreSQL topology not available: ${available.reason}`)
} else {
  t.test('primary, hot standby and PgBouncer', async (t) => {
    const began = Date.now()
    const topology: Topology = await startTopology({ log: (line) => t.comment(line) })
    t.teardown(() => topology.stop())
    t.comment(`startTopology took ${Date.now() - began} ms`)

    const bouncer = client(topology.bouncerUrl, { prepare: false })
    const standby = client(topology.standbyUrl)
    t.teardown(async () => { await bouncer.end({ timeout: 1 }); await standby.end({ timeout: 1 }) })
    const standbyCount = async (): Promise<number> =>
      (await standby<Array<{ n: number }>>`select count(*)::int as n from smoke`)[0].n

    await t.test('writes through the pooler reach the standby', async (t) => {
      await bouncer`create table smoke (id int primary key, source text not null)`
      for (let i = 1; i <= 3; i++) {
        await bouncer.begin(async (sql) => {
          await sql`insert into smoke ${sql({ id: i, source: 'serial' })}`
          await sql`insert into smoke ${sql({ id: 100 + i, source: 'serial' })}`
        })
      }
      // Two pools at once over the same PgBouncer pool: transactions interleave on its server connections.
      const a = client(topology.bouncerUrl, { prepare: false, max: 4 })
      const b = client(topology.bouncerUrl, { prepare: false, max: 4 })
      try {
        await Promise.all([a, b].flatMap((sql, which) => Array.from({ length: 10 }, (_, i) =>
          sql.begin(async (tx) => {
            const id = 1000 + which * 100 + i
            await tx`insert into smoke ${tx({ id, source: which === 0 ? 'a' : 'b' })}`
            await tx`select pg_sleep(0.01)`
          }))))
        const [{ name }] = await a<Array<{ name: string }>>`select current_setting('application_name') as name`
        t.equal(name, 'postgres.js', 'application_name passes through PgBouncer')
      } finally {
        await a.end({ timeout: 1 })
        await b.end({ timeout: 1 })
      }
      const timeouts = postgres(topology.bouncerUrl, {
        max: 1, prepare: false, onnotice: () => {}, connection: { statement_timeout: 5000 }
      })
      await t.rejects(timeouts`select 1`, /unsupported startup parameter: statement_timeout/, 'PgBouncer refuses settings in the startup packet')
      await timeouts.end({ timeout: 1 })
      const [{ n }] = await bouncer<Array<{ n: number }>>`select count(*)::int as n from smoke`
      t.equal(n, 26, 'all rows on the primary')

      await topology.waitForReplay()
      t.equal(await standbyCount(), 26, 'the standby has them all after waitForReplay')
      const [{ recovery }] = await standby<Array<{ recovery: boolean }>>`select pg_is_in_recovery() as recovery`
      t.equal(recovery, true, 'the standby is in recovery')
      await t.rejects(standby`insert into smoke values (-1, 'standby')`, { code: '25006' }, 'the standby is read-only')
      t.equal(await topology.replayLagBytes(), 0, 'no lag when caught up')
    })

    await t.test('paused replay makes lag', async (t) => {
      await topology.pauseReplay()
      await bouncer`insert into smoke values (9999, 'while paused')`
      // The standby has received the row's WAL (streaming goes on while replay is paused): not replayed, not seen.
      const [{ written }] = await bouncer<Array<{ written: string }>>`select pg_current_wal_lsn()::text as written`
      await eventually(t, 'the standby received the row', async () =>
        (await standby<Array<{ received: boolean }>>`select pg_last_wal_receive_lsn() >= ${written}::pg_lsn as received`)[0].received)
      t.equal(await standbyCount(), 26, 'the standby does not see the new row')
      const lag = await topology.replayLagBytes()
      t.ok(lag > 0, `replayLagBytes > 0 while paused (${lag})`)
      await t.rejects(topology.waitForReplay(300), /replay is paused/, 'waitForReplay says replay is paused')

      await topology.resumeReplay()
      await topology.waitForReplay()
      t.equal(await standbyCount(), 27, 'the standby sees it after resume')
      t.equal(await topology.replayLagBytes(), 0, 'caught up')
    })

    await t.test('the PgBouncer admin console answers', async (t) => {
      const admin = postgres(topology.bouncerUrl.replace(/\/[^/]+$/, '/pgbouncer'), { max: 1, fetch_types: false, onnotice: () => {} })
      try {
        const pools = await admin.unsafe('show pools').simple()
        t.ok(pools.some((row) => row.database === 'order_exchange'), 'SHOW POOLS lists the database')
      } finally {
        await admin.end({ timeout: 1 })
      }
    })

    await t.test('stop() closes every port and is idempotent', async (t) => {
      await bouncer.end({ timeout: 1 })
      await standby.end({ timeout: 1 })
      const ports = [topology.primaryUrl, topology.standbyUrl, topology.bouncerUrl].map(portOf)
      for (const port of ports) t.ok(await listening(port), `port ${port} open before stop`)
      await Promise.all([topology.stop(), topology.stop()])
      await topology.stop()
      for (const port of ports) t.notOk(await listening(port), `port ${port} closed after stop`)
    })
  })
}
