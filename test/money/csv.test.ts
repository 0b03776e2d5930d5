import t from 'tap'
import { setupMoney } from '../helpers/money.js'
import { PLATFORM_PAYOUTS_PATH, PLATFORM_REFUNDS_PATH } from '../../src/routes/rest-contract.js'
import { csvCell, csvLine, csvRows } from '../../src/money/csv.js'
import { refundList } from '../../src/money/list-refunds.js'
import { parseListQuery } from '../../src/money/list-query.js'
import { REFUND_LIST_SHAPE } from '../../src/money/list-refunds.js'

/*
 * The CSV export (Accept: text/csv, docs/platform/money.md): RFC 4180 quoting, cells a spreadsheet would
 * run as formulas neutralised, every row of the filtered list (not one page) read a batch at a time.
 */

t.test('cells: quoting and formula injection', async (t) => {
  t.equal(csvCell(null), '')
  t.equal(csvCell(12), '12')
  t.equal(csvCell('plain'), 'plain')
  t.equal(csvCell('a,b'), '"a,b"')
  t.equal(csvCell('say "hi"'), '"say ""hi"""')
  t.equal(csvCell('two\r\nlines'), '"two\r\nlines"')
  for (const formula of ['=1+1', '+1', '@SUM(A1)', '-2+3', '\tx', '=HYPERLINK("http://x")']) {
    t.ok(csvCell(formula).replace(/^"/, '').startsWith('\''), `${JSON.stringify(formula)} neutralised`)
  }
  t.equal(csvCell('-120.50'), '-120.50', 'a negative amount stays a number')
  t.equal(csvLine(['a', null, 'b,c']), 'a,,"b,c"\r\n')
})

t.test('the export: header, every row across batches, hostile references', async (t) => {
  const { get, refund, database, post } = await setupMoney(t)
  const ids: string[] = []
  for (let i = 0; i < 7; i++) ids.push(await refund(i))
  await post('/v2/platform/refunds/settle', [
    { id: ids[0], reference: '=HYPERLINK("http://evil")' }, { id: ids[1], reference: 'UTR, "quoted"' }
  ])
  // Read two rows a statement: the export is the list walked by its keyset, chunk by chunk.
  const chunks: string[] = []
  for await (const chunk of csvRows(database.db, refundList, parseListQuery({}, REFUND_LIST_SHAPE), ['id', 'reference'], 2)) chunks.push(chunk)
  t.equal(chunks.length, 1 + 4, 'the header, then one chunk per batch of 2')
  t.equal(chunks[0], 'id,reference\r\n')
  t.equal(chunks.slice(1).join('').split('\r\n').length - 1, 7)

  const res = await get(`${PLATFORM_REFUNDS_PATH}?limit=1`, { accept: 'text/csv' })
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/csv/)
  t.match(res.headers['content-disposition'], /attachment; filename="refunds.csv"/)
  const lines = res.body.split('\r\n')
  t.equal(lines[0], 'id,orderId,companyId,amount,currency,status,reference,createdAt,settledAt')
  t.equal(lines.length, 1 + 7 + 1, 'every row, not one page (limit is a page size), and a final CRLF')
  t.match(lines[1], new RegExp(`^${ids[0]},.*,SUCCEEDED,"'=HYPERLINK\\(""http://evil""\\)",`))
  t.match(lines[2], /,"UTR, ""quoted""",/)

  const filtered = await get(`${PLATFORM_REFUNDS_PATH}?status=MANUAL`, { accept: 'text/csv' })
  t.equal(filtered.body.split('\r\n').length, 1 + 5 + 1, 'the filter applies')
  const payouts = await get(PLATFORM_PAYOUTS_PATH, { accept: 'text/csv' })
  t.equal(payouts.body, 'id,orderId,companyId,amount,currency,status,scheduledFor,reference,paidAt\r\n', 'no rows: the header')
  const bad = await get(`${PLATFORM_REFUNDS_PATH}?limit=0`, { accept: 'text/csv' })
  t.equal(bad.statusCode, 400, 'a bad query is refused before anything is streamed')
  t.equal(bad.json().code, 'INVALID_LIMIT')
})
