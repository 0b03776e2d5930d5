import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import mercurius, { type IResolvers, type MercuriusLoaders, type MercuriusOptions } from 'mercurius'
import { assertParsed, MAX_TOKENS } from './document-gate.js'
import { RETRY_AFTER_SECONDS } from '../errors.js'
import { graphqlErrorHandler, sendGraphqlRequestError } from './error-handler.js'
import { formatExecutionErrors } from './errors.js'
import { DOCUMENT_LIMITS } from './limits.js'
import { costLimitHook } from './cost-limit.js'
import { GRAPHQL_PATH, registerGraphqlRoutes } from './route.js'
import { resolvers } from './resolvers.js'

/** schema.graphql at the project root is the source of truth; read once per app. */
export const SCHEMA_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema.graphql')

/**
 * The Mercurius options of /v2/graphql for a given set of resolvers (and loaders): one place, so the
 * benchmark's loader variant runs with exactly the production limits and error handling. Mercurius's
 * own routes are off: ours (route.ts) decide what a request may carry, then hand the text to it.
 *
 * No graphql-jit: it compiles parts of each document into JavaScript, and the throughput it bought was
 * measured too small to carry that risk (bench/results/2026-11-22-graphql-jit.md).
 */
export function mercuriusOptions (resolverMap: IResolvers, loaders?: MercuriusLoaders): MercuriusOptions {
  return {
    schema: fs.readFileSync(SCHEMA_PATH, 'utf8'),
    resolvers: resolverMap,
    ...(loaders ? { loaders } : {}),
    routes: false,
    graphql: { parseOptions: { maxTokens: MAX_TOKENS } },
    validationRules: [DOCUMENT_LIMITS],
    errorFormatter: (execution, ctx) => {
      const formatted = formatExecutionErrors(execution.errors, execution.data, ctx.reply.log)
      if (formatted.statusCode === 503) ctx.reply.header('retry-after', String(RETRY_AFTER_SECONDS))
      return formatted
    }
  }
}

/** Registers Mercurius (the executor) and our routes for it, with the document checks in between. */
export async function registerGraphql (app: FastifyInstance, options: MercuriusOptions): Promise<void> {
  await app.register(mercurius, options)
  app.graphql.addHook('preValidation', async (_schema, document) => { assertParsed(document) })
  registerGraphqlRoutes(app)
}

/**
 * POST /v2/graphql (and GET, for queries) behind an access token. Encapsulated, so the authentication
 * hook guards only these routes. Introspection stays on for authenticated callers (clients generate
 * types from it); GraphiQL is not served.
 */
const graphqlPlugin: FastifyPluginAsync = async (app) => {
  app.setErrorHandler(graphqlErrorHandler)
  app.renderRequestErrorsOn(GRAPHQL_PATH, sendGraphqlRequestError)
  app.addHook('onRequest', app.requireCredential('access-token', 'authorization'))
  app.decorateRequest('graphqlOperationName', null)
  app.decorateRequest('graphqlCost', null)
  app.decorateRequest('graphqlListLengths', null)
  await registerGraphql(app, mercuriusOptions(resolvers as IResolvers))
  if (app.costBucket) app.graphql.addHook('preExecution', costLimitHook(app.costBucket))
}

export default graphqlPlugin
