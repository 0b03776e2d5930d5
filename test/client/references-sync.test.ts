import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { checkReferenceRow, createClient, unmappedRows, type ReferenceRow } from '@order-exchange/client'
import { checkReferenceRow as serviceCheck } from '../../src/references/reference-row.js'
import { faultProxy, serve, type Served } from '../helpers/client.js'

/*
 * client.references.sync and the CLI's `references sync` / `references unmapped` against the real service:
 * the row rules checked before sending (in the service's words), chunks merged with the caller's indexes,
 * and the round trip unmapped → fill in → sync → nothing unmapped.
 */

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/client/dist/cli.js')
const exec = promisify(execFile)

async function cli (
  args: string[], env: Record<string, string>
): Promise<{ code: number, stdout: string, stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number, stdout: string, stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

/** Clears seller 1's sync IDs of every retailer and shop, its first items and their offers: work to map. */
async function unmapSome (served: Served): Promise<void> {
  const { sql } = served.database
  await sql`update seller_retailers set sync_id = null where seller_id = 1`
  await sql`update seller_shops set sync_id = null where seller_id = 1`
  const items = await sql`select id from items where seller_id = 1 order by id limit 5`
  const ids = items.map((i) => i.id as number)
  await sql`update items set item_sync_id = null where id in ${sql(ids)}`
  await sql`update offers set offer_sync_id = null where seller_id = 1 and sku_id in (select id from skus where item_id in ${sql(ids)})`
}

t.test('what the client finds wrong with a row, the service says in the same words and code', async (t) => {
  const rows: unknown[] = [
    null, [], 'row', {},
    { type: 'RETAILER', id: 1, syncId: 'R-1' },
    { type: 'SHOP', id: 2, syncId: null },
    { type: 'retailer', id: 1, syncId: 'R' },
    { type: 'ITEM', id: 0, syncId: 'I' },
    { type: 'ITEM', id: 1.5, syncId: 'I' },
    { type: 'ITEM', id: '7', syncId: 'I' },
    { type: 'OFFER', id: 2_147_483_648, syncId: 'O' },
    { type: 'OFFER', id: 3, syncId: '' },
    { type: 'OFFER', id: 3, syncId: 'x'.repeat(201) },
    { type: 'OFFER', id: 3, syncId: 'x'.repeat(200) },
    { type: 'OFFER', id: 3, syncId: 'tab\there' },
    { type: 'OFFER', id: 3, syncId: 'nbsp\u0085' },
    { type: 'OFFER', id: 3, syncId: 7 },
    { type: 'OFFER', id: 3 },
    { id: -1, syncId: '' }
  ]
  for (const row of rows) {
    const service = serviceCheck(JSON.parse(JSON.stringify(row)))
    const expected = service.error === undefined ? null : { error: service.error.text, code: service.error.code }
    t.same(checkReferenceRow(row), expected, JSON.stringify(row))
  }
})

t.test('bad rows are refused before any request, by index and field; an input of only bad rows sends nothing', async (t) => {
  const served = await serve(t, { orders: 0 })
  let requests = 0
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    fetch: async (i, init) => { requests++; return fetch(i, init) }
  })
  const result = await client.references.sync([
    { type: 'RETAILER', id: 0, syncId: 'R' },
    { type: 'SHOP' as ReferenceRow['type'], id: 5, syncId: 'bad\nline' },
    { type: 'BRAND' as ReferenceRow['type'], id: 5, syncId: 'B' }
  ])
  t.equal(requests, 0, 'nothing sent')
  t.same(result, {
    received: 3,
    inserted: 0,
    updated: 0,
    unchanged: 0,
    failed: 3,
    errors: [
      { index: 0, error: 'id must be a positive integer (the id as the orders read shows it)', code: 'INVALID_ID' },
      { index: 1, error: 'syncId must be a non-empty string of at most 200 characters without control characters, or null to clear the mapping', code: 'INVALID_SYNC_ID' },
      { index: 2, error: 'type must be one of RETAILER, SHOP, ITEM, OFFER', code: 'INVALID_TYPE' }
    ],
    matched: { retailers: 0, shops: 0, offers: 0 }
  })
  await t.rejects(createClient({ baseUrl: served.baseUrl }).references.sync([]), /needs an apiKey/)
})

t.test('round trip in chunks: unmapped → fill in → sync → nothing unmapped; errors by the caller\'s index; swaps across chunks', async (t) => {
  const served = await serve(t, { orders: 60 })
  await unmapSome(served)
  const bodies: number[][] = []
  const keys = new Set<string>()
  const client = createClient({
    baseUrl: served.baseUrl,
    apiKey: served.apiKey,
    accessToken: served.accessToken,
    fetch: async (input, init) => {
      if (String(input).includes('/v2/references/sync-data')) {
        bodies.push((JSON.parse(String(init?.body)) as ReferenceRow[]).map((r) => r.id))
        keys.add(new Headers(init?.headers).get('idempotency-key') ?? '')
      }
      return fetch(input, init)
    }
  })
  const todo = unmappedRows(await client.references.unmapped())
  const types = new Set(todo.map((r) => r.type))
  t.ok(todo.length > 10, `${todo.length} unmapped records (${[...types].join(', ')})`)
  const rows: ReferenceRow[] = todo.map((r) => ({ type: r.type, id: r.id, syncId: `MINE-${r.type}-${r.id}` }))
  // A record that is not the seller's (the service refuses it), a row the client refuses, and the sixth
  // record again at the end: a duplicate, which goes in the sixth row's request to be found there.
  rows.push({ type: 'ITEM', id: 2_000_000_000, syncId: 'NOPE' })
  rows.push({ type: 'ITEM', id: -3, syncId: 'NOPE-2' })
  rows.push({ ...rows[5]!, syncId: 'AGAIN' })
  const n = todo.length

  const result = await client.references.sync(rows, { chunkSize: 4 })
  t.equal(bodies.length, Math.ceil((n + 2) / 4), 'requests of at most 4 rows, the bad row not sent')
  t.ok(bodies.every((b) => b.length <= 4))
  t.ok(bodies.some((b) => b.filter((id) => id === rows[5]!.id).length === 2), 'a record\'s two rows in one request')
  t.equal(keys.size, bodies.length, 'an Idempotency-Key per request')
  t.equal(result.received, n + 3)
  t.equal(result.inserted, n, 'every unmapped record got its sync ID (the first of the two rows)')
  t.equal(result.updated + result.unchanged, 0)
  t.same(result.errors.map((e) => [e.index, e.code]), [[n, 'RECORD_NOT_FOUND'], [n + 1, 'INVALID_ID'], [n + 2, 'DUPLICATE_RECORD']],
    'the errors by the caller\'s index')
  t.match(result.errors[2]!.error, /in the row at index 5$/, 'the other row named by the caller\'s index too')
  t.equal(result.failed, 3)
  t.same(unmappedRows(await client.references.unmapped()), [], 'nothing unmapped')
  const again = await client.references.sync(rows.slice(0, n), { chunkSize: 4 })
  t.match(again, { unchanged: n, inserted: 0, updated: 0, failed: 0 }, 'sent again: unchanged')

  // Two retailers swap their sync IDs, in different requests: refused SYNC_ID_TAKEN at first, then sent
  // again together and applied.
  const retailers = todo.filter((r) => r.type === 'RETAILER').slice(0, 2)
  t.equal(retailers.length, 2, 'two retailers to swap')
  const [a, b] = [retailers[0]!, retailers[1]!]
  bodies.length = 0
  const filler = todo.filter((r) => r.type === 'ITEM').slice(0, 2).map((r) => ({ type: r.type, id: r.id, syncId: `MINE-${r.type}-${r.id}` }))
  t.equal(filler.length, 2)
  const swap = await client.references.sync([
    { type: 'RETAILER', id: a.id, syncId: `MINE-RETAILER-${b.id}` }, filler[0]!,
    { type: 'RETAILER', id: b.id, syncId: `MINE-RETAILER-${a.id}` }, filler[1]!
  ], { chunkSize: 2 })
  t.same(bodies, [[a.id, filler[0]!.id], [b.id, filler[1]!.id], [a.id, b.id]], 'two requests, then the refused rows together')
  t.match(swap, { received: 4, updated: 2, unchanged: 2, failed: 0, errors: [] })
  const stored = await served.database.sql`select retailer_id, sync_id from seller_retailers where seller_id = 1 and retailer_id in ${served.database.sql([a.id, b.id])} order by retailer_id`
  t.same(stored.map((r) => [r.retailer_id, r.sync_id]).sort(), [[a.id, `MINE-RETAILER-${b.id}`], [b.id, `MINE-RETAILER-${a.id}`]].sort())
})

t.test('a chunk\'s answer lost after the service applied it: the retry (same Idempotency-Key) gets that answer', async (t) => {
  const served = await serve(t, { orders: 30 })
  await unmapSome(served)
  const reader = createClient({ baseUrl: served.baseUrl, accessToken: served.accessToken })
  const rows: ReferenceRow[] = unmappedRows(await reader.references.unmapped()).slice(0, 6)
    .map((r) => ({ type: r.type, id: r.id, syncId: `MINE-${r.type}-${r.id}` }))
  t.equal(rows.length, 6)
  // The second request's answer is lost once.
  const proxy = await faultProxy(t, served.baseUrl, (i) => i === 1 ? 'lose-answer' : 'pass')
  const client = createClient({ baseUrl: proxy.url, apiKey: served.apiKey, retry: { baseDelayMs: 1, maxDelayMs: 5 } })
  const result = await client.references.sync(rows, { chunkSize: 3 })
  t.same(proxy.requests.map((r) => r.action), ['pass', 'lose-answer', 'pass'])
  t.equal(proxy.requests[1]!.idempotencyKey, proxy.requests[2]!.idempotencyKey, 'the retry carried the lost attempt\'s key')
  t.not(proxy.requests[0]!.idempotencyKey, proxy.requests[1]!.idempotencyKey, 'each chunk its own key')
  t.match(result, { received: 6, inserted: 6, unchanged: 0, failed: 0 }, 'the lost attempt\'s answer: inserted, not unchanged')
})

t.test('CLI: references unmapped → fill in the CSV → references sync → nothing unmapped; exit codes', async (t) => {
  const served = await serve(t, { orders: 40 })
  await unmapSome(served)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-refs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = {
    ORDER_EXCHANGE_BASE_URL: served.baseUrl,
    ORDER_EXCHANGE_API_KEY: served.apiKey,
    ORDER_EXCHANGE_ACCESS_TOKEN: served.accessToken
  }

  const listed = await cli(['references', 'unmapped'], env)
  t.equal(listed.code, 0, listed.stderr)
  const [header, ...lines] = listed.stdout.trimEnd().split('\n')
  t.equal(header, 'type,id,syncId,name')
  t.ok(lines.length > 5, `${lines.length} unmapped records`)
  t.match(listed.stderr, `${lines.length} records without a sync ID`)
  t.ok(lines.every((l) => /^(RETAILER|SHOP|ITEM|OFFER),\d+,,/.test(l)), 'each with an empty syncId to fill in')

  // Filled in (a quoted sync ID with a comma and quotes for the first), with a BOM and CRLF; a bad row.
  const filled = lines.map((l, i) => {
    const [type, id] = l.split(',')
    return `${type},${id},${i === 0 ? '"MINE, ""first"""' : `MINE-${type}-${id}`},ignored`
  })
  const bad = path.join(dir, 'bad.csv')
  writeFileSync(bad, `\ufefftype,id,syncId,name\r\n${filled.join('\r\n')}\r\nITEM,x7,MINE-X,\r\n`)
  const partial = await cli(['references', 'sync', bad], env)
  t.equal(partial.code, 1, 'a refused row: exit 1')
  t.match(JSON.parse(partial.stdout), { received: lines.length + 1, inserted: lines.length, failed: 1, errors: [{ index: lines.length, code: 'INVALID_ID' }] })
  t.match(partial.stderr, `${lines.length + 1} rows: ${lines.length} inserted, 0 updated, 0 unchanged, 1 failed`)
  t.match(partial.stderr, `row ${lines.length}: id must be a positive integer`)

  const after = await cli(['references', 'unmapped'], env)
  t.same(after, { code: 0, stdout: 'type,id,syncId,name\n', stderr: '0 records without a sync ID\n' }, 'nothing unmapped')
  const [first] = lines[0]!.split(',')
  const table = first === 'RETAILER' ? 'seller_retailers' : first === 'SHOP' ? 'seller_shops' : null
  if (table) {
    const id = Number(lines[0]!.split(',')[1])
    const column = table === 'seller_retailers' ? 'retailer_id' : 'shop_id'
    const [row] = await served.database.sql`select sync_id from ${served.database.sql(table)} where seller_id = 1 and ${served.database.sql(column)} = ${id}`
    t.equal(row!.sync_id, 'MINE, "first"', 'the quoted cell read whole')
  }

  // An empty syncId cell clears the mapping: exit 0 when every row applied.
  const clear = path.join(dir, 'clear.csv')
  const [type1, id1] = filled[1]!.split(',')
  writeFileSync(clear, `type,id,syncId\n${type1},${id1},\n`)
  const cleared = await cli(['references', 'sync', clear], env)
  t.equal(cleared.code, 0, cleared.stderr)
  t.match(JSON.parse(cleared.stdout), { received: 1, updated: 1, failed: 0 })
  const back = await cli(['references', 'unmapped'], env)
  t.match(back.stdout, `\n${type1},${id1},,`, 'unmapped again')

  t.match(await cli(['references', 'sync'], env), { code: 2, stderr: /references sync needs a file/ })
  writeFileSync(path.join(dir, 'nohead.csv'), 'type,id\nRETAILER,1\n')
  t.match(await cli(['references', 'sync', path.join(dir, 'nohead.csv')], env), { code: 2, stderr: /the CSV header has no syncId column/ })
  t.match(await cli(['references', 'sync', clear], { ...env, ORDER_EXCHANGE_API_KEY: 'oxs_test_ak_nope' }), { code: 1, stderr: /order-exchange-client: / })
  t.ok(readFileSync(clear, 'utf8').length > 0)
})
