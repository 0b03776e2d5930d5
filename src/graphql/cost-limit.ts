import type { preExecutionHookHandler } from 'mercurius'
import { Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql'
import { RequestError } from '../errors.js'
import type { CostBucket } from '../cost-bucket.js'
import { operationCost } from './limits.js'

/*
 * GraphQL is limited by what queries cost, not by how many there are: each query spends its cost (the
 * same measure as the cost limit, limits.ts) from the credential's bucket, and the answer reports it in
 * `extensions.cost` as Shopify does, so a client can pace itself before it is refused.
 */

/** What the answer's extensions.cost says. */
export interface QueryCost {
  requestedQueryCost: number
  throttleStatus: { maximumAvailable: number, currentlyAvailable: number, restoreRate: number }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation the request names (operationName), set by the route for the cost hook. */
    graphqlOperationName: string | null
    /** The cost spent by this request, for extensions.cost. */
    graphqlCost: QueryCost | null
  }
}

/** The cost of the operation a request runs (the named one, else the only one). */
export function requestedCost (schema: GraphQLSchema, document: DocumentNode, operationName: string | null): number {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  const operation = operationName === null ? operations[0] : operations.find((o) => o.name?.value === operationName)
  if (!operation) return 0
  const fragments = new Map(document.definitions
    .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => [d.name.value, d]))
  return operationCost(schema, operation.selectionSet, fragments)
}

export function costLimitHook (bucket: CostBucket): preExecutionHookHandler {
  const { capacity, restorePerSecond } = bucket.limits
  return async (schema, document, context) => {
    const { request } = context.reply
    const cost = requestedCost(schema, document, request.graphqlOperationName)
    let take
    try {
      take = await bucket.take(`credential:${context.caller.credentialId}`, cost)
    } catch (err) {
      // Redis away: let the query through rather than refuse every caller.
      request.log.warn({ err }, 'GraphQL cost budget unavailable; query not limited')
      return
    }
    const available = Math.floor(take.available)
    request.graphqlCost = { requestedQueryCost: cost, throttleStatus: { maximumAvailable: capacity, currentlyAvailable: available, restoreRate: restorePerSecond } }
    context.reply.header('ratelimit-limit', capacity).header('ratelimit-remaining', available)
    if (take.allowed) return
    request.server.metrics.rateLimited.inc({ route: request.routeOptions.url ?? 'graphql' })
    const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000))
    context.reply.header('retry-after', seconds)
    throw new RequestError.RateLimited(`this query costs ${cost} points and ${available} of ${capacity} are available ` +
      `(${restorePerSecond} come back each second); retry in ${seconds} s or ask for less`)
  }
}
