import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import type { PlatformBatchResult, PlatformClient } from './platform.js'

/*
 * `order-exchange-client platform import FILE.ndjson`: a mixed NDJSON file, one record per line with a
 * `type` field, sent in the order the records refer to each other (docs/platform/api.md, "Principles"). The
 * file is read once per type, streaming, so memory holds one chunk of rows whatever the file's size; each
 * line keeps its line number, so a refused row is reported by where it is in the file.
 */

/** The order of a first import, and the route each type goes to. */
export const IMPORT_ORDER = ['seller', 'retailer', 'catalogue', 'deal', 'points', 'order', 'order-status'] as const
export type ImportType = (typeof IMPORT_ORDER)[number]

const CHUNK = 1000
/** Refusals listed per type in the summary (all are counted). */
const LISTED_ERRORS = 20

export interface TypeSummary {
  received: number
  inserted: number
  updated: number
  unchanged: number
  failed: number
  errors: Array<{ line: number, error: string, code: string }>
}

export interface ImportSummary {
  types: Partial<Record<ImportType, TypeSummary>>
  /** Lines that are not JSON objects with a known type: skipped, never sent. */
  badLines: Array<{ line: number, problem: string }>
}

type Line = { line: number, row: Record<string, unknown> }

async function * lines (file: string): AsyncGenerator<{ line: number, text: string }> {
  const reader = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })
  let n = 0
  for await (const text of reader) {
    n++
    if (text.trim() !== '') yield { line: n, text }
  }
}

function parse (text: string): { type: string, row: Record<string, unknown> } | string {
  let value: unknown
  try { value = JSON.parse(text) } catch { return 'not JSON' }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object'
  const { type, ...row } = value as Record<string, unknown>
  if (typeof type !== 'string' || !(IMPORT_ORDER as readonly string[]).includes(type)) {
    return `type must be one of ${IMPORT_ORDER.join(', ')}`
  }
  return { type, row }
}

async function sendChunk (
  client: PlatformClient, type: ImportType, chunk: Line[], summary: TypeSummary
): Promise<void> {
  const rows = chunk.map((l) => l.row)
  let result: PlatformBatchResult
  if (type === 'order-status') {
    const data = await client.orders.updateStatus(rows as never)
    result = {
      received: rows.length,
      inserted: 0,
      updated: data.successful - data.unchangedOrderIds.length,
      unchanged: data.unchangedOrderIds.length,
      failed: data.failed,
      errors: data.errors.map((e) => ({ index: e.index, id: e.orderId, error: e.error, code: e.code }))
    }
  } else {
    const send = {
      seller: client.sellers.upsert,
      retailer: client.retailers.upsert,
      catalogue: client.catalogue.upsert,
      deal: client.deals.upsert,
      points: client.points.add,
      order: client.orders.place
    }[type]
    result = await send(rows as never)
  }
  summary.received += result.received
  summary.inserted += result.inserted
  summary.updated += result.updated
  summary.unchanged += result.unchanged
  summary.failed += result.failed
  for (const e of result.errors) {
    if (summary.errors.length >= LISTED_ERRORS) break
    summary.errors.push({ line: chunk[e.index]!.line, error: e.error, code: e.code })
  }
}

export async function importFile (
  client: PlatformClient, file: string, progress: (line: string) => void
): Promise<ImportSummary> {
  const summary: ImportSummary = { types: {}, badLines: [] }
  for (const [pass, type] of IMPORT_ORDER.entries()) {
    let chunk: Line[] = []
    let seen = 0
    const flush = async (): Promise<void> => {
      if (chunk.length === 0) return
      const counts = summary.types[type] ??=
        { received: 0, inserted: 0, updated: 0, unchanged: 0, failed: 0, errors: [] }
      await sendChunk(client, type, chunk, counts)
      progress(`${type}: ${counts.received} sent, ${counts.failed} refused`)
      chunk = []
    }
    for await (const { line, text } of lines(file)) {
      const parsed = parse(text)
      if (typeof parsed === 'string') {
        // Reported once, in the first pass.
        if (pass === 0) summary.badLines.push({ line, problem: parsed })
        continue
      }
      if (parsed.type !== type) continue
      seen++
      chunk.push({ line, row: parsed.row })
      if (chunk.length >= CHUNK) await flush()
    }
    await flush()
    if (seen > 0) progress(`${type}: done (${seen} rows)`)
  }
  return summary
}
