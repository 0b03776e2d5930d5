import type postgres from 'postgres'

/*
 * The bench's rows: realistic sync IDs (the seed's shapes), a third without a shop, quantities as a mix of
 * JSON numbers and numeric strings. A prefix per size keeps every size's keys fresh.
 */

export interface BenchRow {
  retailerSyncId: string
  shopSyncId: string | null
  offerSyncId: string
  outstandingQuantity: number | string
}

export function makeRows (count: number, prefix: string, bump = 0): BenchRow[] {
  const rows: BenchRow[] = new Array(count)
  for (let i = 0; i < count; i++) {
    const retailer = i % 2000
    rows[i] = {
      retailerSyncId: `RET-${prefix}-${String(retailer).padStart(5, '0')}`,
      shopSyncId: i % 3 === 0 ? null : `SHOP-${prefix}-${String(retailer).padStart(5, '0')}-${i % 3}`,
      offerSyncId: `OFF-${prefix}-${String(i).padStart(7, '0')}`,
      outstandingQuantity: i % 2 === 0 ? (i % 500) + bump + 0.25 : `${(i % 500) + bump}.500`
    }
  }
  return rows
}

/** COPY text format: backslash, tab, newline and carriage return are escaped; null is \N. */
function copyField (v: string | null): string {
  if (v === null) return '\\N'
  return /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!) : v
}

export function copyLines (rows: readonly BenchRow[], sellerId: number | null): string {
  const lines = new Array<string>(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    const fields = [
      copyField(r.retailerSyncId), copyField(r.shopSyncId), copyField(r.offerSyncId), String(r.outstandingQuantity)
    ]
    lines[i] = (sellerId === null ? fields : [String(sellerId), ...fields]).join('\t') + '\n'
  }
  return lines.join('')
}

/**
 * Streams COPY text into a COPY … FROM STDIN query. postgres.js never settles a COPY the server rejects,
 * so the bench gives up loudly after a timeout instead of hanging (its rows are valid, so it should not).
 */
export async function copyInto (query: postgres.PendingQuery<postgres.Row[]>, text: string,
  timeoutMs = 120_000): Promise<void> {
  const stream = await query.writable()
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`COPY did not finish within ${timeoutMs} ms`)), timeoutMs)
    stream.on('finish', () => { clearTimeout(timer); resolve() })
    stream.on('error', (err) => { clearTimeout(timer); reject(err) })
    const CHUNK = 1 << 20
    for (let start = 0; start < text.length; start += CHUNK) stream.write(text.slice(start, start + CHUNK))
    stream.end()
  })
}
