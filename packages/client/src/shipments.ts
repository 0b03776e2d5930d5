import { OrderExchangeError } from './errors.js'
import type { SyncData, SyncResponse, SyncRow } from './generated/rest.js'
import { MAX_SYNC_ROWS, QUANTITY_PATTERN, RowErrorCode, RowErrorText, SYNC_ID_MAX_LENGTH } from './generated/rules.js'
import { send, type Transport } from './http.js'
import type { Credentials } from './pages.js'

/*
 * The outstanding shipment sync (docs/api/shipments.md). The client checks what a row needs before sending
 * (each bad row reported with its index, never sent), sends large inputs in chunks, and merges what the
 * chunks report into one answer whose indexes are those of the caller's array.
 *
 * Every row of one key (retailer, shop, offer) goes in the same request, in the caller's order, so the
 * service's rule "the last valid row of a key wins" and its duplicates count mean the same as if the
 * whole input had been one request.
 */

/** Rows per request by default: well under the service's 100,000. */
export const DEFAULT_SYNC_CHUNK = 50_000
/** Bytes of rows per request at most: a quarter of the service's default body limit (32 MiB). */
export const SYNC_CHUNK_BYTES = 8 * 1024 * 1024

const QUANTITY = new RegExp(QUANTITY_PATTERN)
const SYNC_ID_FIELDS = ['retailerSyncId', 'shopSyncId', 'offerSyncId'] as const

function isSyncId (value: unknown): boolean {
  return typeof value === 'string' && value.length > 0 && value.length <= SYNC_ID_MAX_LENGTH
}

/**
 * What the checks before sending (docs/api/shipments.md) find wrong with a row, as the service would say
 * it (text and code, generated from its contract): every broken field in the service's field order, the
 * code of the first; null when nothing.
 * What only the service can judge (a negative or oversized quantity, text it cannot store) is left to it.
 */
export function checkRow (row: unknown): { error: string, code: string } | null {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    return { error: RowErrorText.notAnObject, code: RowErrorCode.notAnObject }
  }
  const r = row as Record<string, unknown>
  const problems: Array<[string, string]> = []
  for (const field of SYNC_ID_FIELDS) {
    const value = r[field]
    if (value === undefined) {
      if (field !== 'shopSyncId') problems.push([RowErrorText.required[field], RowErrorCode.missing])
    } else if (!isSyncId(value) && !(field === 'shopSyncId' && value === null)) {
      problems.push([RowErrorText.invalid[field], RowErrorCode.syncId])
    }
  }
  const q = r.outstandingQuantity
  if (q === undefined) {
    problems.push([RowErrorText.required.outstandingQuantity, RowErrorCode.missing])
  } else if (!((typeof q === 'number' && Number.isFinite(q)) || (typeof q === 'string' && QUANTITY.test(q)))) {
    problems.push([RowErrorText.invalid.outstandingQuantity, RowErrorCode.quantity])
  }
  return problems.length > 0 ? { error: problems.map(([text]) => text).join('; '), code: problems[0]![1] } : null
}

/** Rule 4, client side: retailerSyncId and offerSyncId present, outstandingQuantity numeric. */
export function rowProblem (row: unknown): string | null {
  return checkRow(row)?.error ?? null
}

export interface SyncOptions {
  /** Rows per request (default 50,000, at most 100,000); a request also stays under SYNC_CHUNK_BYTES. */
  chunkSize?: number
  signal?: AbortSignal
}

export interface ShipmentsApi {
  /**
   * Replaces the outstanding quantities of the given rows. Counts are summed over the requests sent;
   * `unmatched` counts are per request summed, so an ID unmatched in two requests counts twice.
   */
  sync: (rows: readonly SyncRow[], options?: SyncOptions) => Promise<SyncData>
}

interface Indexed { index: number, row: SyncRow, text: string }

/** Requests of whole keys: each chunk takes keys in order of their first row until it is full. */
function chunksByKey (rows: Indexed[], maxRows: number, maxBytes: number): Indexed[][] {
  const chunkOf = new Map<string, number>()
  const chunks: Array<{ rows: Indexed[], bytes: number }> = []
  for (const row of rows) {
    const key = JSON.stringify([row.row.retailerSyncId, row.row.shopSyncId ?? null, row.row.offerSyncId])
    let at = chunkOf.get(key)
    if (at === undefined) {
      const last = chunks[chunks.length - 1]
      const full = !last || last.rows.length >= maxRows || last.bytes + row.text.length > maxBytes
      if (full) chunks.push({ rows: [], bytes: 0 })
      at = chunks.length - 1
      chunkOf.set(key, at)
    }
    const chunk = chunks[at]!
    chunk.rows.push(row)
    chunk.bytes += row.text.length + 1
  }
  return chunks.map((c) => c.rows)
}

type Ids = SyncData['unmatched']['retailerSyncIds']

function mergeIds (a: Ids, b: Ids): Ids {
  return { count: a.count + b.count, examples: [...new Set([...a.examples, ...b.examples])].slice(0, 10) }
}

export function shipmentsApi (transport: Transport, credentials: Credentials): ShipmentsApi {
  async function sync (rows: readonly SyncRow[], options: SyncOptions = {}): Promise<SyncData> {
    if (!credentials.apiKey) throw new OrderExchangeError('the shipment sync needs an apiKey')
    const chunkSize = Math.max(1, Math.min(options.chunkSize ?? DEFAULT_SYNC_CHUNK, MAX_SYNC_ROWS))
    const none = { count: 0, examples: [] }
    const total: SyncData = {
      received: rows.length,
      inserted: 0,
      updated: 0,
      unchanged: 0,
      duplicates: 0,
      failed: 0,
      errors: [],
      unmatched: { retailerSyncIds: none, shopSyncIds: none, offerSyncIds: none }
    }
    // Checked here first: a bad row is reported with its own index and never sent.
    const good: Indexed[] = []
    rows.forEach((row, index) => {
      const problem = checkRow(row)
      if (problem) total.errors.push({ index, ...problem })
      else good.push({ index, row, text: JSON.stringify(row) })
    })
    for (const chunk of chunksByKey(good, chunkSize, SYNC_CHUNK_BYTES)) {
      const answer = await send(transport, {
        method: 'PUT',
        path: '/v2/shipments/outstanding/sync-data',
        // One key per request, kept across its retries: a retry after a lost answer gets that answer.
        headers: { 'x-api-key': credentials.apiKey, 'content-type': 'application/json', 'idempotency-key': globalThis.crypto.randomUUID() },
        body: `[${chunk.map((c) => c.text).join(',')}]`,
        signal: options.signal
      })
      const data = (answer.body as SyncResponse).data
      total.inserted += data.inserted
      total.updated += data.updated
      total.unchanged += data.unchanged
      total.duplicates += data.duplicates
      for (const e of data.errors) total.errors.push({ ...e, index: chunk[e.index]?.index ?? e.index })
      total.unmatched = {
        retailerSyncIds: mergeIds(total.unmatched.retailerSyncIds, data.unmatched.retailerSyncIds),
        shopSyncIds: mergeIds(total.unmatched.shopSyncIds, data.unmatched.shopSyncIds),
        offerSyncIds: mergeIds(total.unmatched.offerSyncIds, data.unmatched.offerSyncIds)
      }
    }
    total.errors.sort((a, b) => a.index - b.index)
    total.failed = total.errors.length
    return total
  }
  return { sync }
}
