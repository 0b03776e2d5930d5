import type {
  ItemListInput, ItemPageQuery, RetailerListInput, RetailerPageQuery
} from './generated/graphql.js'
import { ItemPageDocument, RetailerPageDocument } from './generated/graphql.js'
import { OrderExchangeError } from './errors.js'
import type { ReferenceRow, ReferencesData, ReferencesResponse } from './generated/rest.js'
import {
  MAX_REFERENCE_ROWS, REFERENCE_ID_MAX, REFERENCE_SYNC_ID_FORBIDDEN, REFERENCE_TYPES, ReferenceErrorCode,
  ReferenceErrorText, SYNC_ID_MAX_LENGTH
} from './generated/rules.js'
import { send, type Transport } from './http.js'
import { documentText, readListPage, type Credentials } from './pages.js'
import { SYNC_CHUNK_BYTES } from './shipments.js'

/*
 * client.references: the seller's reference lists (`retailers`, `items`), to map the marketplace's
 * retailers, shops, items and offers onto the client's own records before (or while) orders arrive, and
 * `sync`, which sends the client's sync IDs for them (PUT /v2/references/sync-data).
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
  /**
   * Sends the seller's sync IDs (`syncId: null` clears one). Every row is checked first by the service's
   * rules (a bad row is reported with its index and the service's text and code, and never sent); more rows
   * than one request takes go in several requests, each with its own Idempotency-Key, and the answers are
   * merged: counts and `matched` summed, `errors[].index` that of the caller's array. Needs the apiKey.
   */
  sync: (rows: readonly ReferenceRow[], options?: ReferencesSyncOptions) => Promise<ReferencesData>
}

export interface ReferencesSyncOptions {
  /** Rows per request (default and most 100,000); a request also stays under SYNC_CHUNK_BYTES. */
  chunkSize?: number
  signal?: AbortSignal
}

/** Rows per request by default: the service's limit (a row is ~60 bytes, so 100,000 are ~6 MB). */
export const DEFAULT_REFERENCES_CHUNK = MAX_REFERENCE_ROWS

const TYPES = new Set<string>(REFERENCE_TYPES)
const FORBIDDEN = new RegExp(REFERENCE_SYNC_ID_FORBIDDEN)

/**
 * What the service's row rules find wrong with a references row, in its words and code (generated from its
 * texts): every broken field in the order type, id, syncId, the code of the first; null when nothing. Text
 * the database cannot store (UNSTORABLE_TEXT) is left to the service, as the shipment sync's check does.
 */
export function checkReferenceRow (row: unknown): { error: string, code: string } | null {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    return { error: ReferenceErrorText.notAnObject, code: ReferenceErrorCode.notAnObject }
  }
  const { type, id, syncId } = row as Record<string, unknown>
  const problems: Array<[string, string]> = []
  if (type === undefined) problems.push([ReferenceErrorText.required.type, ReferenceErrorCode.missing])
  else if (typeof type !== 'string' || !TYPES.has(type)) problems.push([ReferenceErrorText.invalid.type, ReferenceErrorCode.type])
  if (id === undefined) problems.push([ReferenceErrorText.required.id, ReferenceErrorCode.missing])
  else if (typeof id !== 'number' || !Number.isInteger(id) || id < 1 || id > REFERENCE_ID_MAX) {
    problems.push([ReferenceErrorText.invalid.id, ReferenceErrorCode.id])
  }
  if (syncId === undefined) {
    problems.push([ReferenceErrorText.required.syncId, ReferenceErrorCode.missing])
  } else if (syncId !== null && (typeof syncId !== 'string' || syncId.length === 0 ||
    syncId.length > SYNC_ID_MAX_LENGTH || FORBIDDEN.test(syncId))) {
    problems.push([ReferenceErrorText.invalid.syncId, ReferenceErrorCode.syncId])
  }
  return problems.length > 0 ? { error: problems.map(([text]) => text).join('; '), code: problems[0]![1] } : null
}

/**
 * Each unmapped record as a row to fill in (`syncId: null`), with its name to tell them apart: the
 * retailers and shops, items and offers that `unmapped()` found without a sync ID.
 */
export function unmappedRows (unmapped: Unmapped): Array<ReferenceRow & { name: string }> {
  const rows: Array<ReferenceRow & { name: string }> = []
  for (const r of unmapped.retailers) {
    if (r.syncId === null) rows.push({ type: 'RETAILER', id: r.id, syncId: null, name: r.name })
    for (const s of r.shops) if (s.syncId === null) rows.push({ type: 'SHOP', id: s.id, syncId: null, name: s.shopName })
  }
  for (const i of unmapped.items) {
    if (i.itemSyncId === null) rows.push({ type: 'ITEM', id: i.id, syncId: null, name: i.itemName })
    for (const k of i.skus) {
      for (const f of k.offers) {
        if (f.offerSyncId === null) rows.push({ type: 'OFFER', id: f.id, syncId: null, name: `${i.itemName} / ${k.skuNickName}` })
      }
    }
  }
  return rows
}

interface Indexed { index: number, row: ReferenceRow, text: string }

/**
 * Requests that each hold what one request would have to judge together: the rows of one record (so a
 * record sent twice is DUPLICATE_RECORD) and the rows setting one sync ID of a type (DUPLICATE_SYNC_ID) are
 * kept in one request, in the caller's order. Groups are packed whole in order of their first row; a group
 * larger than a request on its own is split.
 */
function chunksByGroup (rows: Indexed[], maxRows: number, maxBytes: number): Indexed[][] {
  const parent = rows.map((_, i) => i)
  const find = (i: number): number => {
    while (parent[i] !== i) { parent[i] = parent[parent[i]!]!; i = parent[i]! }
    return i
  }
  const firstOf = new Map<string, number>()
  rows.forEach((r, i) => {
    const keys = [`r\u0000${r.row.type}\u0000${r.row.id}`]
    if (r.row.syncId !== null) keys.push(`s\u0000${r.row.type}\u0000${r.row.syncId}`)
    for (const key of keys) {
      const first = firstOf.get(key)
      if (first === undefined) firstOf.set(key, i)
      else parent[find(i)] = find(first)
    }
  })
  const groups = new Map<number, Indexed[]>()
  rows.forEach((r, i) => {
    const root = find(i)
    const group = groups.get(root)
    if (group) group.push(r)
    else groups.set(root, [r])
  })
  const chunks: Indexed[][] = []
  let current: Indexed[] = []
  let bytes = 0
  for (const group of groups.values()) {
    const size = group.reduce((n, r) => n + r.text.length + 1, 0)
    if (current.length > 0 && (current.length + group.length > maxRows || bytes + size > maxBytes)) {
      chunks.push(current); current = []; bytes = 0
    }
    for (const r of group) {
      if (current.length >= maxRows || (current.length > 0 && bytes + r.text.length + 1 > maxBytes)) {
        chunks.push(current); current = []; bytes = 0
      }
      current.push(r)
      bytes += r.text.length + 1
    }
  }
  if (current.length > 0) chunks.push(current)
  return chunks.map((c) => c.sort((a, b) => a.index - b.index))
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
  async function sendChunks (chunks: Indexed[][], total: ReferencesData, signal?: AbortSignal): Promise<void> {
    for (const chunk of chunks) {
      const answer = await send(transport, {
        method: 'PUT',
        path: '/v2/references/sync-data',
        // One key per request, kept across its retries: a retry after a lost answer gets that answer.
        headers: { 'x-api-key': credentials.apiKey!, 'content-type': 'application/json', 'idempotency-key': globalThis.crypto.randomUUID() },
        body: `[${chunk.map((c) => c.text).join(',')}]`,
        signal
      })
      const data = (answer.body as ReferencesResponse).data
      total.inserted += data.inserted
      total.updated += data.updated
      total.unchanged += data.unchanged
      total.matched.retailers += data.matched.retailers
      total.matched.shops += data.matched.shops
      total.matched.offers += data.matched.offers
      // DUPLICATE_RECORD and DUPLICATE_SYNC_ID name the other row by its index in the request: the caller's too.
      const callerIndex = (i: number) => chunk[i]?.index ?? i
      for (const e of data.errors) {
        const error = e.error.replace(/in the row at index (\d+)/, (_, i: string) => `in the row at index ${callerIndex(Number(i))}`)
        total.errors.push({ ...e, error, index: callerIndex(e.index) })
      }
    }
  }

  async function sync (rows: readonly ReferenceRow[], options: ReferencesSyncOptions = {}): Promise<ReferencesData> {
    if (!credentials.apiKey) throw new OrderExchangeError('the references sync needs an apiKey')
    const chunkSize = Math.max(1, Math.min(options.chunkSize ?? DEFAULT_REFERENCES_CHUNK, MAX_REFERENCE_ROWS))
    const total: ReferencesData = {
      received: rows.length,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      failed: 0,
      errors: [],
      matched: { retailers: 0, shops: 0, offers: 0 }
    }
    // Checked here first: a bad row is reported with its own index and never sent.
    const good: Indexed[] = []
    rows.forEach((row, index) => {
      const problem = checkReferenceRow(row)
      if (problem) total.errors.push({ index, ...problem })
      else good.push({ index, row, text: JSON.stringify({ type: row.type, id: row.id, syncId: row.syncId }) })
    })
    const chunks = chunksByGroup(good, chunkSize, SYNC_CHUNK_BYTES)
    await sendChunks(chunks, total, options.signal)
    if (chunks.length > 1) {
      // One request judges "taken" on its own result, so a sync ID freed by a row of a later request (or two
      // records swapping theirs across requests) was refused SYNC_ID_TAKEN. Those rows (nothing of them was
      // applied) are sent once more, together, now that every other request is applied.
      const taken = new Set(total.errors.filter((e) => e.code === ReferenceErrorCode.taken).map((e) => e.index))
      if (taken.size > 0) {
        total.errors = total.errors.filter((e) => !taken.has(e.index))
        const again = good.filter((r) => taken.has(r.index))
        await sendChunks(chunksByGroup(again, chunkSize, SYNC_CHUNK_BYTES), total, options.signal)
      }
    }
    total.errors.sort((a, b) => a.index - b.index)
    total.failed = total.errors.length
    return total
  }

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
    },
    sync
  }
}
