import net from 'node:net'
import t from 'tap'
import { sql } from 'drizzle-orm'
import { openDatabase } from '../../src/db/client.js'
import { CommitOutcomeUnknownError, transaction } from '../../src/db/transaction.js'
import { testDatabase } from '../helpers/build.js'

/*
 * A connection lost at the very end of a transaction: the client cannot tell from the error whether the
 * COMMIT happened. A TCP proxy between the service's pool and PostgreSQL cuts the connection right
 * before the COMMIT reaches the server, or right after the server answered it (so it did commit), and
 * transaction() must say what really happened.
 */

type Cut = 'off' | 'before-commit' | 'after-commit'

async function proxy (target: URL): Promise<{ port: number, cut: Cut, refuse: boolean, close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>()
  const state = { cut: 'off' as Cut, refuse: false }
  const server = net.createServer((client) => {
    if (state.refuse) { client.destroy(); return }
    const upstream = net.connect(Number(target.port), target.hostname)
    sockets.add(client); sockets.add(upstream)
    let armed = false
    const kill = (): void => { client.destroy(); upstream.destroy() }
    // postgres.js prepares `commit` once per connection, then sends only a Bind to that statement.
    const commitStatements = new Set<string>()
    const isCommit = (data: Buffer): boolean => {
      let found = false
      for (let at = 0; at + 5 <= data.length;) {
        const type = String.fromCharCode(data[at])
        const length = data.readInt32BE(at + 1)
        const body = data.subarray(at + 5, at + 1 + length)
        const strings = body.toString('latin1').split('\u0000')
        if (type === 'Q' && /^commit/i.test(strings[0])) found = true
        if (type === 'P' && /^commit/i.test(strings[1] ?? '')) { commitStatements.add(strings[0]); found = true }
        if (type === 'B' && commitStatements.has(strings[1] ?? '')) found = true
        at += 1 + length
      }
      return found
    }
    client.on('data', (data) => {
      // The start-up message has no type byte: only look at what follows it.
      if (state.cut !== 'off' && data[0] !== 0 && isCommit(data)) {
        if (state.cut === 'before-commit') { state.cut = 'off'; kill(); return }
        armed = true
        state.cut = 'off'
      } else if (data[0] !== 0) {
        isCommit(data) // learn the names of commit statements prepared meanwhile
      }
      upstream.write(data)
    })
    upstream.on('data', (data) => {
      // The server has committed and answered: the answer never arrives.
      if (armed) { kill(); return }
      client.write(data)
    })
    client.on('error', kill); upstream.on('error', kill)
    client.on('close', kill); upstream.on('close', kill)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    get cut () { return state.cut },
    set cut (value: Cut) { state.cut = value },
    get refuse () { return state.refuse },
    // Refusing is not listening any more: new connections meet ECONNREFUSED, as with a database that is down.
    set refuse (value: boolean) { state.refuse = value; if (value) server.close() },
    close: async () => {
      for (const s of sockets) s.destroy()
      if (server.listening) await new Promise((resolve) => server.close(resolve))
    }
  }
}

t.test('a COMMIT whose answer is lost: committed, rolled back, or unknown, never guessed', async (t) => {
  const direct = await testDatabase(t)
  await direct.sql`create table marks (id int primary key)`
  const url = new URL(direct.url)
  const cutter = await proxy(url)
  t.teardown(cutter.close)
  const through = new URL(direct.url)
  through.port = String(cutter.port)
  const database = openDatabase(through.toString(), { max: 2 })
  t.teardown(() => database.close())
  const mark = (id: number) => transaction(database.db, async (tx) => {
    await tx.execute(sql`insert into marks values (${id})`)
    return id
  })
  const stored = async (id: number) => (await direct.sql`select count(*)::int as n from marks where id = ${id}`)[0].n === 1

  t.equal(await mark(1), 1, 'no fault: committed')

  cutter.cut = 'after-commit'
  t.equal(await mark(2), 2, 'the answer to COMMIT was lost, but the server says it committed: the result stands')
  t.ok(await stored(2))

  cutter.cut = 'before-commit'
  await t.rejects(mark(3), { code: 'CONNECTION_CLOSED' }, 'cut before the COMMIT arrived: the error stands')
  t.notOk(await stored(3), 'and nothing was stored')

  cutter.cut = 'after-commit'
  const unknown = mark(4)
  // Once the answer is cut off, no new connection can be made: nobody can say what happened.
  setImmediate(() => { cutter.refuse = true })
  await t.rejects(unknown, CommitOutcomeUnknownError, 'no way to ask: the outcome is unknown (answered 503, retry safe)')
  t.ok(await stored(4), 'it had in fact committed, which is why "failed" would have been a lie')
})
