import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openClient, openDatabase } from '../../src/db/client.js'
import { buildBaselineApp } from './baseline.js'
import { buildLoadersApp } from './loaders-variant.js'

/*
 * One benchmark target in its own process (so autocannon in the parent does not share its event loop):
 * `service` (the real app), `baseline` (bare Fastify + one SQL) or `loaders` (the loader variant).
 * Tells the parent its port, and answers 'statements' with how many SQL statements it has sent.
 */

const [target, url, timeZone] = process.argv.slice(2)
let statements = 0
const onQuery = (): void => { statements++ }
// The service's handle; the baseline and the loader variant (roads not taken) send raw SQL on `sql`.
const database = { ...openDatabase(url, { max: 10, onQuery }), sql: openClient(url, { max: 10, onQuery }) }
// Throughput, not limits, is measured here: rate limits off (bench/load measures them).
const config = loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', WORKER_ENABLED: 'false', RATE_LIMIT_ENABLED: 'false', BUSINESS_TIMEZONE: timeZone })

let app: FastifyInstance
if (target === 'service') app = await buildApp({ config, database })
else if (target === 'baseline') app = await buildBaselineApp(database, timeZone)
else if (target === 'loaders') app = await buildLoadersApp(config, database)
else throw new Error(`unknown target ${target}`)

await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
process.send!({ port: typeof address === 'object' && address ? address.port : 0 })
// The parent went away (it failed or was killed): do not linger.
process.on('disconnect', () => process.exit(0))
process.on('message', async (message) => {
  if (message === 'statements') process.send!({ statements })
  if (message === 'stop') {
    await app.close()
    await database.close()
    await database.sql.end({ timeout: 5 })
    process.exit(0)
  }
})
