import type {
  ItemListInput, ItemPageQuery, RetailerListInput, RetailerPageQuery
} from './generated/graphql.js'
import { ItemPageDocument, RetailerPageDocument } from './generated/graphql.js'
import type { Transport } from './http.js'
import { documentText, readListPage, type Credentials } from './pages.js'

/*
 * client.references: the seller's reference lists (`retailers`, `items`), to map the marketplace's
 * retailers, shops, items and offers onto the client's own records before (or while) orders arrive.
 */

export type ReferenceRetailer = NonNullable<RetailerPageQuery['retailers']>['nodes'][number]
export type ReferenceItem = NonNullable<ItemPageQuery['items']>['nodes'][number]

export interface ReferencePage<TNode> {
  pageInfo: { page: number, hasNext: boolean, total: number, limit: number }
  nodes: TNode[]
}

/** What is not mapped yet: each retailer and item as the lists give it, whole (all its shops, SKUs and offers). */
export interface Unmapped { retailers: ReferenceRetailer[], items: ReferenceItem[] }

export interface ReferencesApi {
  /** Every page of the retailers linked to the seller (with their shops), from page 1 until hasNext is false. */
  retailers: (
    input?: Omit<RetailerListInput, 'page'>, options?: { signal?: AbortSignal }
  ) => AsyncIterable<ReferencePage<ReferenceRetailer>>
  /** Every page of the seller's items (with their SKUs and offers), from page 1 until hasNext is false. */
  items: (
    input?: Omit<ItemListInput, 'page'>, options?: { signal?: AbortSignal }
  ) => AsyncIterable<ReferencePage<ReferenceItem>>
  /**
   * Everything still missing one of the seller's sync IDs: walks both lists with `unmapped: true`
   * (pages of 100 unless `limit` says otherwise). A retailer comes with all its shops when it or one of its
   * shops has no sync ID; an item with all its SKUs and offers when it or one of its offers has none.
   */
  unmapped: (options?: { limit?: number, signal?: AbortSignal }) => Promise<Unmapped>
}

async function * walk<TNode> (
  transport: Transport, credentials: Credentials, query: string, field: string,
  input: { limit?: number | null, unmapped?: boolean | null }, signal?: AbortSignal
): AsyncIterable<ReferencePage<TNode>> {
  for (let page = 1; ; page++) {
    const { date, ...current } = await readListPage<ReferencePage<TNode>>(
      transport, credentials, query, field, { ...input, page }, signal)
    yield current
    if (!current.pageInfo.hasNext) return
  }
}

export function referencesApi (transport: Transport, credentials: Credentials): ReferencesApi {
  const retailers = (input: Omit<RetailerListInput, 'page'> = {}, options: { signal?: AbortSignal } = {}) =>
    walk<ReferenceRetailer>(transport, credentials, documentText(RetailerPageDocument), 'retailers', input, options.signal)
  const items = (input: Omit<ItemListInput, 'page'> = {}, options: { signal?: AbortSignal } = {}) =>
    walk<ReferenceItem>(transport, credentials, documentText(ItemPageDocument), 'items', input, options.signal)
  return {
    retailers,
    items,
    async unmapped (options = {}) {
      const input = { unmapped: true, limit: options.limit ?? 100 }
      const found: Unmapped = { retailers: [], items: [] }
      for await (const page of retailers(input, options)) found.retailers.push(...page.nodes)
      for await (const page of items(input, options)) found.items.push(...page.nodes)
      return found
    }
  }
}
