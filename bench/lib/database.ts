import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { openClient, openDatabase, withDatabaseName, type Database } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js'

/*
 * A database for one benchmark: a fresh, migrated database on BENCH_DATABASE_URL's server, or on an
 * embedded PostgreSQL started for the run (normal durability settings: fsync stays on, as in production).
 */

/** The service's handle, plus a raw client for the bench's own set-up and measurements. */
export type BenchDb = Database & { sql: postgres.Sql }

export interface BenchDatabase {
  database: BenchDb
  url: string
  /** Drops the database and stops the embedded server, if one was started. */
  dispose: () => Promise<void>
}

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => { const { port } = srv.address() as net.AddressInfo; srv.close(() => resolve(port)) })
  })
}

let embedded: { server: EmbeddedServer, dir: string, users: number } | null = null

async function serverUrl (): Promise<string> {
  if (process.env.BENCH_DATABASE_URL) return process.env.BENCH_DATABASE_URL
  if (!embedded) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oxs-bench-pg-'))
    fs.chmodSync(dir, 0o755)
    const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort() })
    embedded = { server, dir, users: 0 }
  }
  embedded.users++
  return embedded.server.url
}

export async function benchDatabase (label: string,
  options: { max?: number, onQuery?: (q: string) => void } = {}): Promise<BenchDatabase> {
  const server = await serverUrl()
  const name = `oxs_bench_${label.replace(/\W/g, '_')}_${process.pid}`
  const admin = postgres(server, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists "${name}" with (force)`)
  await admin.unsafe(`create database "${name}"`)
  await admin.end()
  const url = withDatabaseName(server, name)
  await migrate(url)
  const service = openDatabase(url, { max: options.max ?? 10, onQuery: options.onQuery })
  const raw = openClient(url, { max: 4, application: 'oxs-bench' })
  const database: BenchDb = { ...service, sql: raw }
  return {
    database,
    url,
    dispose: async () => {
      await service.close()
      await raw.end({ timeout: 5 })
      const a = postgres(server, { max: 1, onnotice: () => {} })
      await a.unsafe(`drop database if exists "${name}" with (force)`)
      await a.end()
      if (embedded && --embedded.users === 0) {
        await embedded.server.stop()
        fs.rmSync(embedded.dir, { recursive: true, force: true })
        embedded = null
      }
    }
  }
}

/** What the bench machine is, for the results table. */
export function machineLine (): string {
  const cpus = os.cpus()
  return `${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${os.platform()} ${os.release()}`
}
