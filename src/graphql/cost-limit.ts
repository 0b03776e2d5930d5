import type { preExecutionHookHandler } from 'mercurius'
import { Kind, type DocumentNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql'
import { RequestError } from '../errors.js'
import type { BucketTake, CostBucket } from '../cost-bucket.js'
import type { FastifyReply } from 'fastify'
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
    /** The bucket's answer for this request once asked (null: the budget was unavailable); undefined before. */
    graphqlCostTake?: BucketTake | null
  }
}

/** The cost of the operation a request runs (the named one, else the only one). */
export function requestedCost (schema: GraphQLSchema, document: DocumentNode, operationName: string | null): number {
  const operations = document.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
  const operation = operationName === null ? operations[0] : operations.find((o) => o.name?.value === operationName)
  if (!operation) return 0
  const fragments = new Map(document.definitions
    .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => [d.name.value, d]))
  return operationCost(schema, operation.selectionSet, fragments)
}

/**
 * Spends `cost` from the caller's bucket and reports it (extensions.cost, RateLimit headers); throws
 * RateLimited when the bucket holds too little. Decided once per request: the pass-through decides before
 * it runs, and when it then hands the request to the standard execution, the hook reuses that decision
 * instead of spending twice. With Redis away the query goes through unlimited (null).
 */
export async function spendQueryCost (
  bucket: CostBucket, reply: FastifyReply, credentialId: number, cost: number
): Promise<BucketTake | null> {
  const { request } = reply
  if (request.graphqlCostTake === undefined) {
    try {
      request.graphqlCostTake = await bucket.take(`credential:${credentialId}`, cost)
    } catch (err) {
      request.log.warn({ err }, 'GraphQL cost budget unavailable; query not limited')
      request.graphqlCostTake = null
    }
  }
  const take = request.graphqlCostTake
  if (take === null) return null
  const { capacity, restorePerSecond } = bucket.limits
  const available = Math.floor(take.available)
  const throttleStatus = { maximumAvailable: capacity, currentlyAvailable: available, restoreRate: restorePerSecond }
  request.graphqlCost = { requestedQueryCost: cost, throttleStatus }
  reply.header('ratelimit-limit', capacity).header('ratelimit-remaining', available)
  if (take.allowed) return take
  const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000))
  reply.header('retry-after', seconds)
  throw new RequestError.RateLimited(`this query costs ${cost} points and ${available} of ${capacity} are available ` +
    `(${restorePerSecond} come back each second); retry in ${seconds} s or ask for less`)
}

export function costLimitHook (bucket: CostBucket): preExecutionHookHandler {
  return async (schema, document, context) => {
    const { request } = context.reply
    const cost = requestedCost(schema, document, request.graphqlOperationName)
    try {
      await spendQueryCost(bucket, context.reply, context.caller.credentialId, cost)
    } catch (err) {
      if (err instanceof RequestError.RateLimited) request.server.metrics.rateLimited.inc({ route: request.routeOptions.url ?? 'graphql' })
      throw err
    }
  }
}
