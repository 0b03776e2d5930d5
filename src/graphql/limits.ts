import {
  GraphQLError, Kind, SchemaMetaFieldDef, TypeMetaFieldDef, getNamedType, getNullableType, isListType, isObjectType,
  type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType, type GraphQLSchema,
  type SelectionSetNode, type ValidationRule, type ValueNode
} from 'graphql'
import { DEFAULT_LIMIT, MAX_LIMIT } from './page-input.js'

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

/** Elements assumed per list when the document cannot say. Realistic, not worst case: a bound, not a bill. */
const LIST_SIZE: Record<string, number> = {
  'Order.orderItems': 10, 'Sku.offers': 3, 'Sku.itemSellingUnits': 3, 'Offer.priceRange': 3, 'Seller.stores': 10,
  // Introspection: one Type has about 20 fields of about 2 arguments.
  '__Type.fields': 20, '__Type.enumValues': 10, '__Field.args': 2, '__Directive.args': 2, '__Type.interfaces': 1, '__Type.possibleTypes': 1
}
const DEFAULT_LIST_SIZE = 5
/** A field that costs an SQL statement weighs as much as 10 fully selected orders' own fields. */
const STATEMENT_FIELDS = new Set(['Query.orders', 'Query.seller', 'Query.outstandingShipments'])
/** Paged fields: their nodes count `limit` times. */
const PAGED_FIELDS = new Set(['Query.orders', 'Query.outstandingShipments'])
const PAGE_NODES = new Set(['OrderConnection.nodes', 'OutstandingShipmentConnection.nodes'])
const STATEMENT_COST = 250

/**
 * Cost of one operation: every field is 1, times the elements its list may hold (orders.nodes: the
 * literal `limit` asked for, 100 when it comes from a variable); fields that run SQL add STATEMENT_COST.
 */
export function operationCost (schema: GraphQLSchema, selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): number {
  const query = schema.getQueryType()
  return query ? selectionCost(schema, query, selectionSet, fragments, DEFAULT_LIMIT, new Set()) : 0
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

function selectionCost (
  schema: GraphQLSchema, parent: GraphQLNamedType, set: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>,
  nodesPerPage: number, visiting: Set<string>
): number {
  let cost = 0
  for (const selection of set.selections) {
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = fragments.get(selection.name.value)
      // Unknown or cyclic fragments are reported by the standard rules.
      if (!fragment || visiting.has(fragment.name.value)) continue
      const type = schema.getType(fragment.typeCondition.name.value) ?? parent
      visiting.add(fragment.name.value)
      cost += selectionCost(schema, type, fragment.selectionSet, fragments, nodesPerPage, visiting)
      visiting.delete(fragment.name.value)
      continue
    }
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) ?? parent : parent
      cost += selectionCost(schema, type, selection.selectionSet, fragments, nodesPerPage, visiting)
      continue
    }
    const name = selection.name.value
    if (!isObjectType(parent)) continue
    const field: GraphQLField<unknown, unknown> | undefined = name === '__schema'
      ? SchemaMetaFieldDef
      : name === '__type' ? TypeMetaFieldDef : parent.getFields()[name]
    if (!field) { cost += 1; continue } // __typename, or an unknown field the standard rules report
    const key = `${parent.name}.${name}`
    const perPage = PAGED_FIELDS.has(key) ? pageSize(selection.arguments) : nodesPerPage
    let children = 0
    if (selection.selectionSet) {
      children = selectionCost(schema, getNamedType(field.type), selection.selectionSet, fragments, perPage, visiting)
    }
    const list = isListType(getNullableType(field.type))
    const elements = !list
      ? 1
      : PAGE_NODES.has(key)
        ? nodesPerPage
        : key === '__Schema.types' ? Object.keys(schema.getTypeMap()).length : LIST_SIZE[key] ?? DEFAULT_LIST_SIZE
    cost += 1 + elements * children + (STATEMENT_FIELDS.has(key) ? STATEMENT_COST : 0)
  }
  return cost
}

/** Rejects an operation whose cost exceeds `maxCost`, before it runs. */
export function costLimitRule (maxCost: number): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>()
    for (const d of context.getDocument().definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d)
    return {
      OperationDefinition (node) {
        const cost = operationCost(context.getSchema(), node.selectionSet, fragments)
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
