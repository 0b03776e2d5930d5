import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    database: Database
  }
}

/**
 * Hands the config and the database to the app. The database is opened (and closed) by whoever built
 * the app — server.ts or a test — so the app never owns a connection it did not make.
 */
export default fp(async function databasePlugin (app, opts: { config: Config, database: Database }) {
  app.decorate('config', opts.config)
  app.decorate('database', opts.database)
}, { name: 'database' })
