import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import { ReadRouter } from '../db/read-router.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    database: Database
    /** Where GraphQL reads go: a replica while it is close enough behind, else the primary. */
    reads: ReadRouter
  }
}

/**
 * Hands the config and the database to the app. The database is opened (and closed) by whoever built
 * the app — server.ts or a test — so the app never owns a connection it did not make. The same for the
 * read router (its replica pool and its lag polling): without one, every read goes to the primary.
 */
export default fp(async function databasePlugin (app,
  opts: { config: Config, database: Database, reads?: ReadRouter }) {
  app.decorate('config', opts.config)
  app.decorate('database', opts.database)
  app.decorate('reads', opts.reads ?? ReadRouter.primaryOnly(opts.database))
}, { name: 'database' })
