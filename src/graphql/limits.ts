import {
  GraphQLError, Kind, SchemaMetaFieldDef, TypeMetaFieldDef, getNamedType, getNullableType, isListType, isObjectType,
  type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType, type GraphQLSchema,
  type SelectionSetNode, type ValidationRule, type ValueNode
} from 'graphql'
import { DEFAULT_LIMIT, MAX_LIMIT } from '../paging/page-window.js'

/*
 * Bounds on what one request may ask for, checked before anything runs.
 *
 * Depth: the deepest field of the contract (orders.nodes.orderItems.sku.offers.priceRange.price) is 7
 * levels and the schema has no cycles, so only introspection types can nest deeper. The standard
 * introspection query that GraphiQL and codegen tools send (graphql 16's getIntrospectionQuery: TypeRef
 * nests ofType nine times) is 15 levels as mercurius counts them, so 15 is the bound: every legitimate
 * document passes, and introspection recursion stops there.
 *
 * Cost: an estimate of the values a document can make the server produce, which bounds what depth
 * alone does not (aliases, wide fan-out through introspection lists).
 */

export const QUERY_DEPTH_LIMIT = 15

/**
 * Fits one full selection of a page of 100 orders (cost about 85,000) or the standard introspection
 * query (about 70,000), but not two full pages in one document (aliases) or nested introspection.
 */
export const MAX_QUERY_COST = 100_000

/** Elements assumed per list when the document cannot say. Realistic, not worst case: a bound, not a bill. */
const LIST_SIZE: Record<string, number> = {
  'Order.orderItems': 10,
  'Sku.offers': 3,
  'Sku.itemSellingUnits': 3,
  'Offer.priceRange': 3,
  'Seller.stores': 10,
  // Introspection: one Type has about 20 fields of about 2 arguments.
  '__Type.fields': 20,
  '__Type.enumValues': 10,
  '__Field.args': 2,
  '__Directive.args': 2,
  '__Type.interfaces': 1,
  '__Type.possibleTypes': 1
}
const DEFAULT_LIST_SIZE = 5
/** A field that costs an SQL statement weighs as much as 10 fully selected orders' own fields. */
const STATEMENT_FIELDS = new Set(['Query.orders', 'Query.seller', 'Query.outstandingShipments'])
/** Paged fields: their nodes count `limit` times. */
const PAGED_FIELDS = new Set(['Query.orders', 'Query.outstandingShipments'])
const PAGE_NODES = new Set(['OrderConnection.nodes', 'OutstandingShipmentConnection.nodes'])
const STATEMENT_COST = 250

/** What one operation asks for: its depth (as Mercurius counts it) and its cost. */
export interface OperationLimits { depth: number, cost: number }

/**
 * Depth and cost of one operation in one pass, linear in the document: each fragment is measured once
 * per page size it is used under (memoised), so a fragment spread twice by a fragment spread twice by …
 * costs one visit, not 2^n. Depth counts as Mercurius's queryDepth does: a field one level below its
 * parent, an inline fragment one level too, a fragment spread none (its fields count from the spread).
 */
export function operationLimits (
  schema: GraphQLSchema, selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>
): OperationLimits {
  const query = schema.getQueryType()
  if (!query) return { depth: 0, cost: 0 }
  return new Measurer(schema, fragments).selection(query, selectionSet, DEFAULT_LIMIT)
}

/** Cost of one operation (see operationLimits). */
export function operationCost (
  schema: GraphQLSchema, selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>
): number {
  return operationLimits(schema, selectionSet, fragments).cost
}

function pageSize (args: readonly { name: { value: string }, value: ValueNode }[] | undefined): number {
  const input = args?.find((a) => a.name.value === 'input')?.value
  if (input === undefined || input.kind === Kind.NULL) return DEFAULT_LIMIT
  if (input.kind !== Kind.OBJECT) return MAX_LIMIT
  const limit = input.fields.find((f) => f.name.value === 'limit')?.value
  if (limit === undefined || limit.kind === Kind.NULL) return DEFAULT_LIMIT
  if (limit.kind !== Kind.INT) return MAX_LIMIT
  return Math.min(Math.max(Number(limit.value), 1), MAX_LIMIT)
}

class Measurer {
  /** Per fragment and page size: the fragment's own depth (from 0) and cost. */
  private readonly memo = new Map<string, OperationLimits>()
  /** Fragments being measured: a cycle (reported by the standard rules) counts as nothing. */
  private readonly visiting = new Set<string>()

  constructor (
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>
  ) {}

  /** Depth below the selection set's owner (1 for a set of leaves) and the cost of everything in it. */
  selection (parent: GraphQLNamedType, set: SelectionSetNode, nodesPerPage: number): OperationLimits {
    let cost = 0
    let depth = 0
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const spread = this.fragment(selection.name.value, parent, nodesPerPage)
        cost += spread.cost
        depth = Math.max(depth, spread.depth)
        continue
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition
        const type = condition ? this.schema.getType(condition.name.value) ?? parent : parent
        const inner = this.selection(type, selection.selectionSet, nodesPerPage)
        cost += inner.cost
        depth = Math.max(depth, 1 + inner.depth)
        continue
      }
      const name = selection.name.value
      const field: GraphQLField<unknown, unknown> | undefined = !isObjectType(parent)
        ? undefined
        : name === '__schema' ? SchemaMetaFieldDef : name === '__type' ? TypeMetaFieldDef : parent.getFields()[name]
      const key = field ? `${parent.name}.${name}` : ''
      const perPage = PAGED_FIELDS.has(key) ? pageSize(selection.arguments) : nodesPerPage
      const inner = selection.selectionSet && field
        ? this.selection(getNamedType(field.type), selection.selectionSet, perPage)
        : selection.selectionSet ? this.selection(parent, selection.selectionSet, perPage) : { depth: 0, cost: 0 }
      depth = Math.max(depth, 1 + inner.depth)
      // __typename, or an unknown field (the standard rules report it): 1, and its subtree for depth.
      if (!field) { cost += 1; continue }
      const list = isListType(getNullableType(field.type))
      const elements = !list
        ? 1
        : PAGE_NODES.has(key)
          ? nodesPerPage
          : key === '__Schema.types' ? Object.keys(this.schema.getTypeMap()).length : LIST_SIZE[key] ?? DEFAULT_LIST_SIZE
      cost += 1 + elements * inner.cost + (STATEMENT_FIELDS.has(key) ? STATEMENT_COST : 0)
    }
    return { depth, cost }
  }

  private fragment (name: string, parent: GraphQLNamedType, nodesPerPage: number): OperationLimits {
    const fragment = this.fragments.get(name)
    // Unknown or cyclic fragments are reported by the standard rules.
    if (!fragment || this.visiting.has(name)) return { depth: 0, cost: 0 }
    const key = `${name}\u0000${nodesPerPage}`
    const known = this.memo.get(key)
    if (known) return known
    const type = this.schema.getType(fragment.typeCondition.name.value) ?? parent
    this.visiting.add(name)
    const measured = this.selection(type, fragment.selectionSet, nodesPerPage)
    this.visiting.delete(name)
    this.memo.set(key, measured)
    return measured
  }
}

/**
 * Rejects an operation deeper than `maxDepth` (QUERY_TOO_DEEP) or costlier than `maxCost`
 * (QUERY_TOO_COMPLEX), before it runs, in one linear pass per operation.
 */
export function documentLimitsRule (maxDepth: number, maxCost: number): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>()
    for (const d of context.getDocument().definitions) {
      if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
    }
    return {
      OperationDefinition (node) {
        const { depth, cost } = operationLimits(context.getSchema(), node.selectionSet, fragments)
        const name = node.name?.value ?? 'Anonymous operation'
        if (depth > maxDepth) {
          context.reportError(new GraphQLError(
            `${name}: query depth (${depth}) exceeds the query depth limit of ${maxDepth}`,
            { nodes: [node], extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth } }
          ))
        }
        if (cost > maxCost) {
          context.reportError(new GraphQLError(
            `Query cost ${cost} exceeds the limit of ${maxCost}: select fewer fields or a smaller limit, or split the query`,
            { nodes: [node], extensions: { code: 'QUERY_TOO_COMPLEX', cost, maxCost } }
          ))
        }
      }
    }
  }
}

/** The rule every /v2/graphql document is validated with, besides graphql's own (standard path and pass-through). */
export const DOCUMENT_LIMITS: ValidationRule = documentLimitsRule(QUERY_DEPTH_LIMIT, MAX_QUERY_COST)
