import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync } from 'fastify'
import mercurius, { type IResolvers, type MercuriusLoaders, type MercuriusOptions } from 'mercurius'
import { graphqlContext } from './context.js'
import { formatExecutionErrors, formatRejectedRequest } from './errors.js'
import { QUERY_DEPTH_LIMIT, costLimitRule } from './limits.js'
import { resolvers } from './resolvers.js'

/** schema.graphql at the project root is the source of truth; read once per app. */
export const SCHEMA_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema.graphql')

/**
 * Fits one full selection of a page of 100 orders (cost about 85,000) or the standard introspection
 * query (about 70,000), but not two full pages in one document (aliases) or nested introspection.
 */
export const MAX_QUERY_COST = 100_000

/**
 * The Mercurius options of /v2/graphql for a given set of resolvers (and loaders): one place, so the
 * benchmark's loader variant runs with exactly the production limits, JIT and error handling.
 */
export function mercuriusOptions (resolverMap: IResolvers, loaders?: MercuriusLoaders): MercuriusOptions {
  return {
    schema: fs.readFileSync(SCHEMA_PATH, 'utf8'),
    resolvers: resolverMap,
    ...(loaders ? { loaders } : {}),
    path: '/v2/graphql',
    graphiql: false,
    // Compile a document with graphql-jit from its second use on (the first validates and caches it).
    jit: 1,
    queryDepth: QUERY_DEPTH_LIMIT,
    validationRules: [costLimitRule(MAX_QUERY_COST)],
    context: (request) => graphqlContext(request),
    errorFormatter: (execution, ctx) => formatExecutionErrors(execution.errors, execution.data, ctx.reply.log),
    errorHandler: async (error, request, reply) => {
      // Authentication, JSON and body-size errors are the root error handler's (one 401 body everywhere).
      if (!error.code?.startsWith('MER_ERR_GQL_')) throw error
      const { statusCode, response } = formatRejectedRequest(error)
      request.log.info({ statusCode, errors: response.errors?.map((e) => e.message) }, 'graphql request rejected')
      return reply.code(statusCode).send(response)
    }
  }
}

/**
 * POST /v2/graphql (and GET, for queries): Mercurius behind an access token. Encapsulated, so the
 * authentication hook guards only these routes. Introspection stays on for authenticated callers
 * (clients generate types from it); GraphiQL is not served.
 */
const graphqlPlugin: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.requireCredential('access-token', 'authorization'))
  await app.register(mercurius, mercuriusOptions(resolvers as IResolvers))
}

export default graphqlPlugin
