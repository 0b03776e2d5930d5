import {
  getNamedType, isObjectType, Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLObjectType,
  type GraphQLResolveInfo, type SelectionSetNode
} from 'graphql'
import type { JsonEntry } from '../db/json-text.js'
import { entriesOf, type Model } from '../db/read-model.js'
import { pageInfoEntries } from '../paging/page-info.js'

/*
 * What the standard execution reads for a list query: every field of each object the query reached, so
 * the SQL builds only the nested objects asked for and graphql-js picks the fields from whole objects.
 * Aliases, fragments and repeated fields are merged; @skip/@include are ignored (fetching a little more
 * is harmless, the response still holds only what was asked).
 */

type Fragments = Record<string, FragmentDefinitionNode>

/** The fields under a set of field nodes, by field name, merged across aliases and fragments. */
function children (nodes: readonly FieldNode[], fragments: Fragments): Map<string, FieldNode[]> {
  const out = new Map<string, FieldNode[]>()
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>): void => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) {
        const list = out.get(s.name.value)
        if (list) list.push(s)
        else out.set(s.name.value, [s])
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        visit(s.selectionSet, seen)
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value)
        visit(fragments[s.name.value]?.selectionSet, seen)
      }
    }
  }
  for (const node of nodes) visit(node.selectionSet, new Set())
  return out
}

/** Every field of `model`, and of each nested object the nodes select (recursively). */
function objectEntries (model: Model, nodes: readonly FieldNode[], fragments: Fragments): JsonEntry[] {
  const selected = children(nodes, fragments)
  return entriesOf(model, (name, nested) => {
    const sub = selected.get(name)
    return sub ? objectEntries(nested, sub, fragments) : undefined
  })
}

/**
 * What the standard execution reads for a connection field (orders, outstandingShipments): its pageInfo,
 * total only when selected (it may cost a count), and its nodes when selected, each object whole.
 */
export function connectionEntries (model: Model, info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>): JsonEntry[] {
  const connection = children(info.fieldNodes, info.fragments)
  const pageInfo = children(connection.get('pageInfo') ?? [], info.fragments)
  const entries: JsonEntry[] = [{ key: 'pageInfo', value: { kind: 'field', name: 'pageInfo', entries: pageInfoEntries(pageInfo.has('total')) } }]
  const nodes = connection.get('nodes')
  if (nodes) entries.push({ key: 'nodes', value: { kind: 'field', name: 'nodes', entries: objectEntries(model, nodes, info.fragments) } })
  return entries
}

/** Where a connection field's nodes select `name` (aliases and fragments merged), or undefined. */
export function nodeFieldNodes (
  info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>, name: string
): FieldNode[] | undefined {
  const nodes = children(info.fieldNodes, info.fragments).get('nodes')
  return nodes === undefined ? undefined : children(nodes, info.fragments).get(name)
}

/**
 * The first field the `nodes` (of object type `type`) select that `allowed` does not hold, as
 * `Type.field`, or null when every selected field is there (__typename always is).
 */
export function fieldOutside (
  type: GraphQLObjectType, nodes: readonly FieldNode[], fragments: Fragments, allowed: readonly JsonEntry[]
): string | null {
  for (const [name, sub] of children(nodes, fragments)) {
    if (name === '__typename') continue
    const entry = allowed.find((e) => e.value.kind === 'field' && e.value.name === name)
    if (!entry || entry.value.kind !== 'field') return `${type.name}.${name}`
    const named = getNamedType(type.getFields()[name]?.type)
    if (entry.value.entries && isObjectType(named)) {
      const inner = fieldOutside(named, sub, fragments, entry.value.entries)
      if (inner !== null) return inner
    }
  }
  return null
}
