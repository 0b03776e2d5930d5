#!/usr/bin/env node
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import {
  createClient, createPlatformClient, OrderExchangeError, unmappedRows,
  type EventCheckpoint, type ReferenceRow, type SyncRow
} from './index.js'
import { FileCheckpointStore } from './node.js'
import { importFile } from './platform-import.js'

/*
 * order-exchange-client: the client for integrations that are not TypeScript shops.
 *
 *   order-exchange-client orders export --from 2026-11-01 --to 2026-11-30 > orders.ndjson
 *   order-exchange-client shipments sync rows.csv      (or rows.json, or - for JSON on stdin)
 *   order-exchange-client platform import records.ndjson   (the marketplace: a mixed file, platform key)
 *   order-exchange-client references unmapped > mapping.csv  (fill in the syncId column, then:)
 *   order-exchange-client references sync mapping.csv     (or .json, or - for JSON on stdin)
 *   order-exchange-client events follow --checkpoint events.json [--types order.placed,…] [--interval-ms 5000]
 *
 * The base address and credentials come from --base-url/--token/--api-key or ORDER_EXCHANGE_BASE_URL,
 * ORDER_EXCHANGE_ACCESS_TOKEN, ORDER_EXCHANGE_API_KEY. Exit codes: 0 done, 1 failed, 2 bad usage.
 */

const USAGE = `usage:
  order-exchange-client orders export --from YYYY-MM-DD --to YYYY-MM-DD [--limit N]   one order per line (NDJSON) on stdout
  order-exchange-client shipments sync FILE.csv|FILE.json|-                           the merged result (JSON) on stdout
  order-exchange-client references unmapped                                          what has no sync ID yet, as CSV (type,id,syncId,name)
                                                                                      on stdout, to fill in and send back with references sync
  order-exchange-client references sync FILE.csv|FILE.json|-                          your sync IDs (CSV header type,id,syncId: an empty syncId
                                                                                      clears the mapping); the merged result (JSON) on stdout
  order-exchange-client events follow --checkpoint FILE [--types T,T] [--interval-ms N]
                                                                                      each event after the checkpoint once, one per line (NDJSON) on
                                                                                      stdout, the checkpoint moved past each line written; returns when
                                                                                      caught up, or with --interval-ms follows on until SIGINT/SIGTERM
  order-exchange-client platform import FILE.ndjson                                   one record a line with a "type" (seller, retailer,
                                                                                      catalogue, deal, points, order, order-status), sent in that order;
                                                                                      progress on stderr, the summary (JSON) on stdout
options: --base-url URL  --token ACCESS_TOKEN  --api-key API_KEY  --platform-key PLATFORM_KEY
  (or ORDER_EXCHANGE_BASE_URL, ORDER_EXCHANGE_ACCESS_TOKEN, ORDER_EXCHANGE_API_KEY, ORDER_EXCHANGE_PLATFORM_KEY)`

class UsageError extends Error {}

/** RFC 4180 CSV: quoted fields, doubled quotes, CRLF or LF. */
export function parseCsv (text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++ } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') {
      quoted = true
    } else if (c === ',') {
      row.push(field); field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      row.push(field); field = ''
      if (row.some((f) => f !== '')) rows.push(row)
      row = []
    } else {
      field += c
    }
  }
  row.push(field)
  if (row.some((f) => f !== '')) rows.push(row)
  return rows
}

/**
 * A CSV file's lines under its header (a leading BOM dropped), each as a getter of a named column's cell:
 * '' for an empty or absent cell, undefined for a column the header lacks. Every named column but the
 * optional ones must be in the header; other columns are ignored.
 */
function csvRecords<Name extends string> (
  text: string, names: readonly Name[], optional: readonly Name[] = []
): Array<(name: Name) => string | undefined> {
  const [header, ...lines] = parseCsv(text.replace(/^\ufeff/, ''))
  if (!header) return []
  const columns = new Map<Name, number>()
  for (const name of names) {
    const index = header.findIndex((h) => h.trim() === name)
    if (index >= 0) columns.set(name, index)
    else if (!optional.includes(name)) throw new UsageError(`the CSV header has no ${name} column`)
  }
  return lines.map((cells) => (name: Name) => {
    const index = columns.get(name)
    return index === undefined ? undefined : cells[index] ?? ''
  })
}

/** CSV rows under a header naming the fields; an empty shopSyncId is null; quantities keep their text. */
export function rowsFromCsv (text: string): SyncRow[] {
  const fields = ['retailerSyncId', 'shopSyncId', 'offerSyncId', 'outstandingQuantity'] as const
  return csvRecords(text, fields, ['shopSyncId']).map((cell) => ({
    retailerSyncId: cell('retailerSyncId') ?? '',
    shopSyncId: cell('shopSyncId') || null,
    offerSyncId: cell('offerSyncId') ?? '',
    outstandingQuantity: cell('outstandingQuantity') ?? ''
  }))
}

/**
 * References CSV (header type,id,syncId; other columns ignored): an empty syncId is null (clear the
 * mapping); an id that is not written as a whole number stays text, which the row check refuses by index.
 */
export function referenceRowsFromCsv (text: string): ReferenceRow[] {
  return csvRecords(text, ['type', 'id', 'syncId'] as const).map((cell) => {
    const id = cell('id')!.trim()
    return {
      type: cell('type')!.trim() as ReferenceRow['type'],
      id: /^\d+$/.test(id) ? Number(id) : id as unknown as number,
      syncId: cell('syncId') || null
    }
  })
}

/** One CSV field, quoted when it has to be. */
function csvField (value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value
}

/** Reads rows from a .csv file (with the given reader), or JSON from any other file or stdin (-). */
async function readRows<Row> (file: string, fromCsv: (text: string) => Row[]): Promise<Row[]> {
  const text = file === '-' ? await readStdin() : await readFile(file, 'utf8')
  const rows = file.toLowerCase().endsWith('.csv') ? fromCsv(text) : JSON.parse(text) as Row[]
  if (!Array.isArray(rows)) throw new UsageError('the JSON file must hold an array of rows')
  return rows
}

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

export async function main (
  argv: string[],
  env: NodeJS.ProcessEnv,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'base-url': { type: 'string' },
        token: { type: 'string' },
        'api-key': { type: 'string' },
        'platform-key': { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        limit: { type: 'string' },
        checkpoint: { type: 'string' },
        types: { type: 'string' },
        'interval-ms': { type: 'string' },
        help: { type: 'boolean' }
      }
    })
    if (values.help) { out.write(`${USAGE}\n`); return 0 }
    const baseUrl = values['base-url'] ?? env.ORDER_EXCHANGE_BASE_URL
    if (!baseUrl) throw new UsageError('no base address: --base-url or ORDER_EXCHANGE_BASE_URL')
    const client = createClient({ baseUrl, accessToken: values.token ?? env.ORDER_EXCHANGE_ACCESS_TOKEN, apiKey: values['api-key'] ?? env.ORDER_EXCHANGE_API_KEY })
    const [group, command, file] = positionals

    if (group === 'orders' && command === 'export') {
      if (!values.from || !values.to) throw new UsageError('orders export needs --from and --to (YYYY-MM-DD)')
      const limit = values.limit === undefined ? 100 : Number(values.limit)
      let written = 0
      for await (const page of client.orders.pages({ fromDate: values.from, toDate: values.to, limit })) {
        for (const order of page.nodes) out.write(`${JSON.stringify(order)}\n`)
        written += page.nodes.length
        err.write(`\rpage ${page.pageInfo.page}: ${written} of ${page.pageInfo.total ?? '?'} orders`)
      }
      err.write('\n')
      return 0
    }
    if (group === 'events' && command === 'follow') {
      if (!values.checkpoint) throw new UsageError('events follow needs --checkpoint FILE (where the last sequence written is kept)')
      const intervalMs = values['interval-ms'] === undefined ? undefined : Number(values['interval-ms'])
      if (intervalMs !== undefined && !(Number.isInteger(intervalMs) && intervalMs > 0)) {
        throw new UsageError('--interval-ms must be a whole number of milliseconds above 0')
      }
      // Following on stops at SIGINT/SIGTERM between events: the checkpoint then names the last line written.
      const stop = new AbortController()
      const onSignal = () => stop.abort()
      process.once('SIGINT', onSignal).once('SIGTERM', onSignal)
      try {
        const result = await client.events.follow({
          checkpoint: new FileCheckpointStore<EventCheckpoint>(values.checkpoint),
          types: values.types?.split(',').map((type) => type.trim()),
          limit: values.limit === undefined ? undefined : Number(values.limit),
          intervalMs,
          signal: stop.signal,
          // The checkpoint moves past an event once its line is handed to stdout, so a crash in between
          // writes that one line again on the next run (de-duplicate on its id if that matters).
          handle: (event) => new Promise<void>((resolve, reject) => {
            out.write(`${JSON.stringify(event)}\n`, (error) => error ? reject(error) : resolve())
          })
        })
        err.write(`${result.handled} events; the checkpoint is after ${result.after}\n`)
      } catch (e) {
        // Stopped by a signal (whichever way the abort surfaced: between events, in a read, in the pause).
        if (!stop.signal.aborted) throw e
        err.write('stopped\n')
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal)
      }
      return 0
    }
    if (group === 'platform' && command === 'import') {
      if (!file) throw new UsageError('platform import needs an NDJSON file')
      const platformKey = values['platform-key'] ?? env.ORDER_EXCHANGE_PLATFORM_KEY
      if (!platformKey) throw new UsageError('no platform key: --platform-key or ORDER_EXCHANGE_PLATFORM_KEY')
      const summary = await importFile(createPlatformClient({ baseUrl, platformKey }), file, (line) => err.write(`${line}\n`))
      out.write(`${JSON.stringify(summary)}\n`)
      for (const bad of summary.badLines) err.write(`line ${bad.line}: ${bad.problem} (skipped)\n`)
      const refused = Object.values(summary.types).some((t) => t.failed > 0)
      return refused || summary.badLines.length > 0 ? 1 : 0
    }
    if (group === 'shipments' && command === 'sync') {
      if (!file) throw new UsageError('shipments sync needs a file (.csv or .json, or - for JSON on stdin)')
      const rows = await readRows(file, rowsFromCsv)
      const result = await client.shipments.sync(rows)
      out.write(`${JSON.stringify(result)}\n`)
      err.write(`${result.received} rows: ${result.inserted} inserted, ${result.updated} updated, ${result.unchanged} unchanged, ${result.failed} failed\n`)
      return 0
    }
    if (group === 'references' && command === 'sync') {
      if (!file) throw new UsageError('references sync needs a file (.csv with header type,id,syncId, or .json, or - for JSON on stdin)')
      const rows = await readRows(file, referenceRowsFromCsv)
      if (rows.length === 0) throw new UsageError('references sync: the file has no rows')
      const result = await client.references.sync(rows)
      out.write(`${JSON.stringify(result)}\n`)
      const { matched } = result
      err.write(`${result.received} rows: ${result.inserted} inserted, ${result.updated} updated, ${result.unchanged} unchanged, ${result.failed} failed; ` +
        `shipment rows newly matched: ${matched.retailers} retailers, ${matched.shops} shops, ${matched.offers} offers\n`)
      // By index from 0: in a CSV the first line under the header is row 0.
      for (const e of result.errors) err.write(`row ${e.index}: ${e.error} (${e.code})\n`)
      return result.failed > 0 ? 1 : 0
    }
    if (group === 'references' && command === 'unmapped') {
      const rows = unmappedRows(await client.references.unmapped())
      out.write('type,id,syncId,name\n')
      for (const row of rows) out.write(`${row.type},${row.id},,${csvField(row.name)}\n`)
      err.write(`${rows.length} records without a sync ID\n`)
      return 0
    }
    throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`)
  } catch (e) {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      err.write(`order-exchange-client: ${(e as Error).message}\n${USAGE}\n`)
      return 2
    }
    err.write(`order-exchange-client: ${e instanceof OrderExchangeError ? e.message : String(e)}\n`)
    return 1
  }
}

// Run as a program (not when imported by a test).
if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/order-exchange-client')) {
  process.exitCode = await main(process.argv.slice(2), process.env, process.stdout, process.stderr)
}
