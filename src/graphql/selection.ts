import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql'
import type { OrderSelection } from '../orders/read-orders.js'

/*
 * What the query selected under `orders`, so the SQL builds only the nested objects asked for. Aliases,
 * fragments and repeated fields are merged; @skip/@include are ignored (fetching a little more is
 * harmless, the response still holds only what was asked).
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

export function orderSelection (info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>): OrderSelection {
  const { fragments } = info
  const connection = children(info.fieldNodes, fragments)
  const pageInfo = children(connection.get('pageInfo') ?? [], fragments)
  const nodes = connection.get('nodes')
  const order = children(nodes ?? [], fragments)
  const items = order.get('orderItems')
  let orderItems: OrderSelection['orderItems'] = false
  if (items) {
    const item = children(items, fragments)
    const skuNodes = item.get('sku')
    const sku = skuNodes ? children(skuNodes, fragments) : null
    orderItems = {
      offer: item.has('offer'),
      item: item.has('item'),
      sku: sku ? { offers: sku.has('offers'), itemSellingUnits: sku.has('itemSellingUnits') } : false
    }
  }
  return { total: pageInfo.has('total'), nodes: nodes !== undefined, retailer: order.has('retailer'), shop: order.has('shop'), orderItems }
}
