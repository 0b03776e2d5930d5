import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import net from 'node:net'
import postgres from 'postgres'
import { runningServer, startEmbeddedPostgres } from '../../src/db/embedded.js'

t.test('starts a real server, attaches to it when running, stops it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-embedded-'))
  fs.chmodSync(dir, 0o755)
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const dataDir = path.join(dir, 'pg')
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => { const p = (srv.address() as net.AddressInfo).port; srv.close(() => resolve(p)) })
  })
  const server = await startEmbeddedPostgres({ dataDir, port, fast: true })
  t.ok(server.owned)
  const sql = postgres(server.url, { max: 1 })
  const [row] = await sql`select current_setting('server_version_num')::int as v`
  t.ok(row.v >= 150000)
  await sql.end()

  t.same(runningServer(dataDir), { pid: server.pid, port })
  const attached = await startEmbeddedPostgres({ dataDir, port })
  t.equal(attached.owned, false, 'a second start attaches instead of fighting over the data dir')
  await attached.stop()
  t.ok(runningServer(dataDir), 'stopping an attached handle leaves the server running')

  await server.stop()
  t.equal(runningServer(dataDir), null)
})

t.test('a data dir the server user cannot reach: a message that says why and how to fix it', { skip: process.getuid?.() !== 0 ? 'only root runs the server as another user' : false }, async (t) => {
  const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-closed-'))
  fs.chmodSync(closed, 0o700)
  t.teardown(() => fs.rmSync(closed, { recursive: true, force: true }))
  await t.rejects(startEmbeddedPostgres({ dataDir: path.join(closed, 'data', 'pg'), port: 1 }), {
    name: 'EmbeddedPostgresError',
    message: new RegExp(`cannot enter ${closed} \\(mode 700\\).*DATA_DIR.*chmod o\\+x.*DATABASE_URL`)
  })
})
