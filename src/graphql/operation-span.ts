import { getOperationAST, type DocumentNode } from 'graphql'
import type { Span } from '../tracing/tracing.js'
import type { QueryCost } from './cost-limit.js'

/*
 * What the span of a GraphQL request says (tracing on): the operation by type and name (the semantic
 * conventions for GraphQL), which path answered it, and what it cost. The document text stays out: its
 * literals are request data, as variables are.
 */

/** How the request was answered: PostgreSQL's own JSON text, Mercurius's execution, or refused before either. */
export type Execution = 'pass-through' | 'standard' | 'rejected'

export function describeOperation (span: Span, document: DocumentNode, operationName: string | null): void {
  const operation = getOperationAST(document, operationName)
  const type = operation?.operation ?? 'GraphQL Operation'
  const name = operation?.name?.value
  span.updateName(name ? `${type} ${name}` : type)
  if (operation) span.setAttribute('graphql.operation.type', operation.operation)
  if (name) span.setAttribute('graphql.operation.name', name)
}

export function recordExecution (span: Span | undefined, execution: Execution): void {
  span?.setAttribute('order_exchange.graphql.execution', execution)
}

/** The cost spent before the query ran and the one billed after (cost-limit.ts), once settled. */
export function recordCost (span: Span, cost: QueryCost | null): void {
  if (!cost) return
  span.setAttributes({
    'order_exchange.graphql.cost.requested': cost.requestedQueryCost,
    'order_exchange.graphql.cost.actual': cost.actualQueryCost
  })
}
