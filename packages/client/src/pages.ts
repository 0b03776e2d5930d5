import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core'
import { GraphqlError, OrderExchangeError } from './errors.js'
import { OrderPageDocument, type OrderListInput, type OrderPageQuery } from './generated/graphql.js'
import { send, type Transport } from './http.js'
import { queryCostOf } from './pace.js'

/*
 * Reading orders page by page (client rules 1–2 of docs/api/orders.md): from page 1 until hasNext is false.
 */

/** A document that reads one page of orders: `$input: OrderListInput`, `orders { pageInfo, nodes }`. */
export type OrdersDocument<TNode> = DocumentTypeDecoration<{
  orders: { pageInfo: { page: number, hasNext: boolean, total?: number, limit?: number }, nodes: TNode[] } | null
}, { input?: OrderListInput | null }>

export type FullOrder = NonNullable<OrderPageQuery['orders']>['nodes'][number]

export interface OrderPage<TNode> {
  pageInfo: { page: number, hasNext: boolean, total?: number, limit?: number }
  nodes: TNode[]
}

export interface Credentials { accessToken?: string | undefined, apiKey?: string | undefined }

export const fullOrderDocument = <TNode>(): OrdersDocument<TNode> =>
  OrderPageDocument as unknown as OrdersDocument<TNode>

/** One page, with the service's Date header (its clock) beside it. */
export async function readPage<TNode> (
  transport: Transport,
  credentials: Credentials,
  document: OrdersDocument<TNode>,
  input: OrderListInput,
  signal?: AbortSignal
): Promise<OrderPage<TNode> & { date: string | null }> {
  return await readListPage<OrderPage<TNode>>(transport, credentials, documentText(document), 'orders', input, signal)
}

/**
 * One page of a paged list field (`orders`, `retailers`, `items`, `events`: `field(input: $input) { pageInfo nodes }`),
 * paced by the query's cost, with the service's Date header beside it.
 */
export async function readListPage<TPage> (
  transport: Transport,
  credentials: Credentials,
  query: string,
  field: string,
  input: { limit?: number | null, [field: string]: unknown },
  signal?: AbortSignal
): Promise<TPage & { date: string | null }> {
  if (!credentials.accessToken) throw new OrderExchangeError(`reading ${field} needs an accessToken`)
  // The cost of a read depends on its document and its page size (the service charges for the page asked for).
  const ticket = await transport.pacer?.admit(`${input.limit ?? 'default'}\n${query}`, signal)
  let answer
  try {
    answer = await send(transport, {
      method: 'POST',
      path: '/v2/graphql',
      headers: { authorization: `Bearer ${credentials.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables: { input } }),
      signal
    }, (status) => status === 400)
  } catch (err) {
    if (ticket) transport.pacer?.settle(ticket, undefined)
    throw err
  }
  if (ticket) transport.pacer?.settle(ticket, queryCostOf(answer.body))
  const body = answer.body as {
    data?: Record<string, TPage | null> | null
    errors?: Array<{ message: string, extensions?: { code?: string } }>
  }
  const page = body.data?.[field]
  if (body.errors?.length || !page) throw new GraphqlError(answer.status, body.errors ?? [{ message: 'no data' }], body)
  return { ...page, date: answer.date }
}

export async function * walkPages<TNode> (transport: Transport, credentials: Credentials, input: Omit<OrderListInput, 'page'>,
  options: { document?: OrdersDocument<TNode>, signal?: AbortSignal }): AsyncIterable<OrderPage<TNode>> {
  const document = options.document ?? fullOrderDocument<TNode>()
  for (let n = 1; ; n++) {
    const { date, ...current } = await readPage(transport, credentials, document, { ...input, page: n }, options.signal)
    yield current
    if (!current.pageInfo.hasNext) return
  }
}

/**
 * The query text of a typed document: a string document (codegen's documentMode 'string', the client
 * preset) as it is, a DocumentNode (graphql-tag, codegen's default) by the source it was parsed from.
 */
export function documentText (document: unknown): string {
  if (typeof document === 'string' || document instanceof String) return String(document)
  const body = (document as { loc?: { source?: { body?: unknown } } } | null)?.loc?.source?.body
  if (typeof body === 'string') return body
  throw new OrderExchangeError('the document has no query text: pass a string document, or a DocumentNode parsed with its location (graphql-tag, or print() it first)')
}
