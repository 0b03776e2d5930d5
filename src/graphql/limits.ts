import {
  GraphQLError, Kind, SchemaMetaFieldDef, TypeMetaFieldDef, getNamedType, getNullableType, isListType, isObjectType,
  type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLNamedType, type GraphQLSchema,
  type SelectionNode, type SelectionSetNode, type ValidationRule, type ValueNode
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
 * Fits one full selection of a page of 100 orders or 100 events (cost about 86,000) or the standard
 * introspection query, but not two full pages in one document (aliases, about 171,000) or nested
 * introspection. The introspection query costs about 2,700 points a type of the schema (105,000 with the
 * 44 types the event feed brought): the bound was 100,000 until then.
 */
export const MAX_QUERY_COST = 150_000

/** Elements assumed per list when the document cannot say. Realistic, not worst case: a bound, not a bill. */
const LIST_SIZE: Record<string, number> = {
  'Order.orderItems': 10,
  'Sku.offers': 3,
  'Sku.itemSellingUnits': 3,
  'Offer.priceRange': 3,
  'Seller.stores': 10,
  'SellerRetailer.shops': 3,
  'SellerItem.skus': 3,
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
const STATEMENT_FIELDS = new Set(['Query.orders', 'Query.seller', 'Query.outstandingShipments', 'Query.retailers', 'Query.items',
  'Query.events'])
/** Paged fields: their nodes count `limit` times. */
const PAGED_FIELDS = new Set(['Query.orders', 'Query.outstandingShipments', 'Query.retailers', 'Query.items', 'Query.events'])
const PAGE_NODES = new Set([
  'OrderConnection.nodes', 'OutstandingShipmentConnection.nodes', 'RetailerConnection.nodes', 'ItemConnection.nodes',
  'EventConnection.nodes'
])
const STATEMENT_COST = 250

/**
 * What one root field costs, as a linear form of the lengths of the lists under it, so the same measure
 * gives the estimate (each list as long as assumed: `estimated`) and the bill (each list as long as it came
 * back). A list is named by its path: the root field's response key, then field names (aliases and
 * fragments of one field merge, as their elements are the same).
 */
export interface CostForm {
  /** Points that do not depend on any list's length: the root field and the fields outside lists. */
  constant: number
  /** Points per element of the list at each path: its elements' own fields, not those of their lists. */
  perElement: Map<string, number>
  /** The assumed length of each list (all its elements on the page, across its parents). */
  estimated: Map<string, number>
}

/**
 * The cost of a form: with every list as estimated, or with the lists as long as they came back
 * (`lengths`; a list missing there had no elements).
 */
export function formCost (form: CostForm, lengths?: ReadonlyMap<string, number>): number {
  let cost = form.constant
  for (const [path, points] of form.perElement) cost += points * ((lengths ?? form.estimated).get(path) ?? 0)
  return cost
}

/** What one operation asks for: its depth (as Mercurius counts it), its cost, and each root field's form. */
export interface OperationLimits { depth: number, cost: number, roots: Map<string, CostForm> }

/** How a measure reads a document: the page size of a paged field, whether a selection counts at all. */
export interface MeasureRules {
  pageSize: (field: FieldNode) => number
  included: (selection: SelectionNode) => boolean
}

/** The static bound: a page size written in the document (a variable may be up to MAX_LIMIT), every selection. */
const WORST_CASE: MeasureRules = { pageSize: (field) => pageSize(field.arguments), included: () => true }

/**
 * Depth and cost of one operation in one pass, linear in the document: each fragment is measured once
 * per place it is used (memoised), so a fragment spread twice by a fragment spread twice by … costs one
 * visit, not 2^n. Depth counts as Mercurius's queryDepth does: a field one level below its parent, an
 * inline fragment one level too, a fragment spread none (its fields count from the spread).
 */
export function operationLimits (
  schema: GraphQLSchema, selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>,
  rules: MeasureRules = WORST_CASE
): OperationLimits {
  const query = schema.getQueryType()
  if (!query) return { depth: 0, cost: 0, roots: new Map() }
  const measured = new Measurer(schema, fragments, rules).selection(query, selectionSet, ROOT)
  const roots = new Map<string, CostForm>()
  let cost = 0
  for (const [key, form] of measured.roots) {
    roots.set(key, form)
    cost += formCost(form)
  }
  return { depth: measured.depth, cost, roots }
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

/** Where a selection stands: its path, the list whose elements it is part of, how many times it occurs. */
interface Place { path: string, list: string | null, times: number }
const ROOT: Place = { path: '', list: null, times: 1 }

/** A selection's depth and, per root field, the parts of its form (roots: keyed by response key). */
interface Measured { depth: number, roots: Map<string, CostForm> }

function emptyForm (): CostForm { return { constant: 0, perElement: new Map(), estimated: new Map() } }

function addForm (into: CostForm, from: CostForm): void {
  into.constant += from.constant
  for (const [path, points] of from.perElement) into.perElement.set(path, (into.perElement.get(path) ?? 0) + points)
  for (const [path, length] of from.estimated) into.estimated.set(path, length)
}

function addMeasured (into: Measured, from: Measured): void {
  into.depth = Math.max(into.depth, from.depth)
  for (const [key, form] of from.roots) {
    const known = into.roots.get(key)
    if (known) addForm(known, form)
    else into.roots.set(key, { ...form, perElement: new Map(form.perElement), estimated: new Map(form.estimated) })
  }
}

class Measurer {
  /** Per fragment and place: the fragment's own depth (from 0) and form. */
  private readonly memo = new Map<string, Measured>()
  /** Fragments being measured: a cycle (reported by the standard rules) counts as nothing. */
  private readonly visiting = new Set<string>()

  constructor (
    private readonly schema: GraphQLSchema,
    private readonly fragments: Map<string, FragmentDefinitionNode>,
    private readonly rules: MeasureRules
  ) {}

  /** Depth below the selection set's owner (1 for a set of leaves) and the form of everything in it. */
  selection (parent: GraphQLNamedType, set: SelectionSetNode, at: Place): Measured {
    const out: Measured = { depth: 0, roots: new Map() }
    for (const selection of set.selections) {
      if (!this.rules.included(selection)) continue
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        addMeasured(out, this.fragment(selection.name.value, parent, at))
        continue
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition
        const type = condition ? this.schema.getType(condition.name.value) ?? parent : parent
        const inner = this.selection(type, selection.selectionSet, at)
        addMeasured(out, { ...inner, depth: 1 + inner.depth })
        continue
      }
      addMeasured(out, this.field(parent, selection, at))
    }
    return out
  }

  private field (parent: GraphQLNamedType, selection: FieldNode, at: Place): Measured {
    const name = selection.name.value
    const field: GraphQLField<unknown, unknown> | undefined = !isObjectType(parent)
      ? undefined
      : name === '__schema' ? SchemaMetaFieldDef : name === '__type' ? TypeMetaFieldDef : parent.getFields()[name]
    const key = field ? `${parent.name}.${name}` : ''
    // A root field is its own bill (its response key: two aliases of `orders` are two pages); below it,
    // names.
    const root = at.path === ''
    const path = root ? (selection.alias ?? selection.name).value : `${at.path}/${name}`
    const here: Place = root ? { path, list: null, times: 1 } : { ...at, path }
    const own = emptyForm()
    // __typename, or an unknown field (the standard rules report it): 1, and its subtree for depth.
    const points = 1 + (field && STATEMENT_FIELDS.has(key) ? STATEMENT_COST : 0)
    if (here.list === null) own.constant += points
    else own.perElement.set(here.list, points)
    let inner: Measured = { depth: 0, roots: new Map() }
    if (selection.selectionSet) {
      if (!field) {
        inner = this.selection(parent, selection.selectionSet, here)
      } else {
        let below = here
        if (isListType(getNullableType(field.type))) {
          const elements = PAGE_NODES.has(key)
            ? this.pageOf(here)
            : key === '__Schema.types' ? Object.keys(this.schema.getTypeMap()).length : LIST_SIZE[key] ?? DEFAULT_LIST_SIZE
          const times = here.times * elements
          own.estimated.set(path, times)
          below = { path, list: path, times }
        } else if (PAGED_FIELDS.has(key)) {
          this.pages.set(path, this.rules.pageSize(selection))
        }
        inner = this.selection(getNamedType(field.type), selection.selectionSet, below)
      }
    }
    const rootKey = path.split('/')[0]!
    const measured: Measured = { depth: 1 + inner.depth, roots: new Map([[rootKey, own]]) }
    addMeasured(measured, inner)
    return measured
  }

  /** Page sizes by the path of their paged field (set where the field is met, read by its nodes). */
  private readonly pages = new Map<string, number>()

  private pageOf (nodes: Place): number {
    const connection = nodes.path.slice(0, nodes.path.lastIndexOf('/'))
    return this.pages.get(connection) ?? DEFAULT_LIMIT
  }

  private fragment (name: string, parent: GraphQLNamedType, at: Place): Measured {
    const fragment = this.fragments.get(name)
    // Unknown or cyclic fragments are reported by the standard rules.
    if (!fragment || this.visiting.has(name)) return { depth: 0, roots: new Map() }
    const key = `${name}\u0000${at.path}\u0000${at.list}\u0000${at.times}`
    const known = this.memo.get(key)
    if (known) return known
    const type = this.schema.getType(fragment.typeCondition.name.value) ?? parent
    this.visiting.add(name)
    const measured = this.selection(type, fragment.selectionSet, at)
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
