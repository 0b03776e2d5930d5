import type { preExecutionHookHandler } from 'mercurius'
import {
  getDirectiveValues, getOperationAST, getVariableValues, GraphQLIncludeDirective, GraphQLSkipDirective, Kind,
  valueFromASTUntyped,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLSchema, type SelectionNode
} from 'graphql'
import { RequestError } from '../errors.js'
import type { BucketTake, CostBucket } from '../cost-bucket.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../paging/page-window.js'
import { formCost, operationLimits, type MeasureRules, type OperationLimits } from './limits.js'

/*
 * GraphQL is limited by what queries cost, not by how many there are (Shopify's model). A query spends
 * its requested cost from the credential's bucket before it runs: the cost measure of limits.ts with this
 * request's own values (the page size in its variables, @skip/@include resolved). After it ran, it is
 * billed for what came back (the orders on the page, their lines, each SKU's offers and selling units)
 * and the difference goes back to the bucket; a query that produced nothing gets everything back. The
 * answer reports both in `extensions.cost`, with the bucket after the refund, so a client can pace itself.
 */

/** What the answer's extensions.cost says. */
export interface QueryCost {
  requestedQueryCost: number
  actualQueryCost: number
  throttleStatus: { maximumAvailable: number, currentlyAvailable: number, restoreRate: number }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation the request names (operationName), set by the route for the cost hook. */
    graphqlOperationName: string | null
    /** The cost spent and billed by this request, for extensions.cost (once settled). */
    graphqlCost: QueryCost | null
    /** The bucket's answer for this request once asked (null: the budget was unavailable); undefined before. */
    graphqlCostTake?: BucketTake | null
    /** What the request's operation costs, per root field (route.ts works it out once per request). */
    graphqlCostPlan?: OperationLimits | null
    /**
     * The lengths of the lists that came back, per root field that counted them, by path (the pass-through
     * and the resolvers record them); a root field not here is billed as estimated.
     */
    graphqlListLengths: Map<string, Map<string, number>> | null
  }
}

/** The page size a paged field asks for with these variables: its input's limit, default 20, at most 100. */
function requestedPageSize (field: FieldNode, variables: Record<string, unknown>): number {
  const input = field.arguments?.find((a) => a.name.value === 'input')?.value
  const value = input === undefined ? undefined : valueFromASTUntyped(input, variables) as { limit?: unknown } | null
  const limit = value?.limit
  return typeof limit === 'number' && Number.isFinite(limit) ? Math.min(Math.max(Math.trunc(limit), 1), MAX_LIMIT) : DEFAULT_LIMIT
}

function isIncluded (node: SelectionNode, variables: Record<string, unknown>): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false
}

/**
 * The cost of the operation a request runs (the named one, else the only one), with the request's
 * coerced variable values: null when there is no such operation.
 */
export function requestCost (
  schema: GraphQLSchema, document: DocumentNode, operationName: string | null, variables: Record<string, unknown>
): OperationLimits | null {
  const operation = getOperationAST(document, operationName)
  if (!operation) return null
  // Coerced, so a variable's default counts; values that do not coerce are refused before anything runs.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables)
  const values = coerced.errors ? variables : coerced.coerced
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
  const rules: MeasureRules = {
    pageSize: (field) => requestedPageSize(field, values),
    included: (node) => isIncluded(node, values)
  }
  return operationLimits(schema, operation.selectionSet, fragments, rules)
}

/** Records the lengths of the lists of one root field's answer (paths relative to it). */
export function recordListLengths (
  request: FastifyRequest, rootKey: string, lengths: Iterable<[string, number]>
): void {
  request.graphqlListLengths ??= new Map()
  request.graphqlListLengths.set(rootKey, new Map([...lengths].map(([path, n]) => [`${rootKey}/${path}`, n])))
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
  request.graphqlCost = { requestedQueryCost: cost, actualQueryCost: cost, throttleStatus }
  reply.header('ratelimit-limit', capacity).header('ratelimit-remaining', available)
  if (take.allowed) return take
  const seconds = Math.max(1, Math.ceil(take.retryAfterMs / 1000))
  reply.header('retry-after', seconds)
  throw new RequestError.RateLimited(`this query costs ${cost} points and ${available} of ${capacity} are available ` +
    `(${restorePerSecond} come back each second); retry in ${seconds} s or ask for less`)
}

const settled = new WeakSet<FastifyRequest>()

/**
 * Bills the request for what it answered and gives the rest back: `answered` are the root fields that
 * produced data (their lists as recorded; none, and the whole cost is returned). Once per request.
 */
export async function settleQueryCost (
  bucket: CostBucket, reply: FastifyReply, credentialId: number, answered: Iterable<string>
): Promise<void> {
  const { request } = reply
  const cost = request.graphqlCost
  if (!cost || settled.has(request) || !request.graphqlCostTake?.allowed) return
  settled.add(request)
  const plan = request.graphqlCostPlan
  let actual = 0
  for (const key of answered) {
    const form = plan?.roots.get(key)
    if (form) actual += formCost(form, request.graphqlListLengths?.get(key))
  }
  actual = Math.min(actual, cost.requestedQueryCost)
  cost.actualQueryCost = actual
  const refund = cost.requestedQueryCost - actual
  if (refund === 0) return
  try {
    const available = Math.floor(await bucket.refund(`credential:${credentialId}`, refund))
    cost.throttleStatus.currentlyAvailable = available
    reply.header('ratelimit-remaining', available)
  } catch (err) {
    // The points stay spent: the bucket refills by itself, and the answer is not held back for it.
    request.log.warn({ err }, 'GraphQL cost refund failed')
  }
}

export function costLimitHook (bucket: CostBucket): preExecutionHookHandler {
  return async (schema, document, context, variables) => {
    const { request } = context.reply
    request.graphqlCostPlan ??= requestCost(schema, document, request.graphqlOperationName, variables ?? {})
    const cost = request.graphqlCostPlan?.cost ?? 0
    try {
      await spendQueryCost(bucket, context.reply, context.caller.credentialId, cost)
    } catch (err) {
      if (err instanceof RequestError.RateLimited) request.server.metrics.rateLimited.inc({ route: request.routeOptions.url ?? 'graphql' })
      throw err
    }
  }
}
