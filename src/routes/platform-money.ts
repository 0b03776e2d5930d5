import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest, requestError } from '../errors.js'
import type { Db } from '../db/client.js'
import { csvRows } from '../money/csv.js'
import { encodeCursor } from '../money/cursor.js'
import { LEDGER_LIST_SHAPE, ledgerList, sellerExists, type LedgerRow } from '../money/list-ledger.js'
import { PAYOUT_LIST_SHAPE, payoutList, type PayoutRow } from '../money/list-payouts.js'
import { parseListQuery, type ListShape, type MoneyListFilter } from '../money/list-query.js'
import { REFUND_LIST_SHAPE, refundList, type RefundRow } from '../money/list-refunds.js'
import { readMoneyPage, type MoneyList } from '../money/page.js'
import { settlePayouts } from '../money/settle-payouts.js'
import { settleRefunds } from '../money/settle-refunds.js'
import {
  DEFAULT_MONEY_PAGE, MAX_MONEY_PAGE, MAX_SETTLE_ID, MoneyCode, MoneyNotFoundCode, MoneyNotFoundText, MoneyText,
  SettleRowErrors as E
} from '../money/texts.js'
import { MAX_PLATFORM_ROWS } from '../platform/texts.js'
import { success } from '../rest-envelope.js'
import { checkedByTheRoute, documentedAnswers, failureExample, type Answer } from './documented.js'
import { batchData, batchRoute, platformConfig, platformUnauthorized, rowError } from './platform-batch.js'
import {
  restEndpoints, routePath, type Endpoint, type LedgerPageResponse, type PayoutPageResponse, type RefundPageResponse
} from './rest-contract.js'

/*
 * The marketplace's finance routes (docs/platform/money.md), platform key only: the refunds, payouts and a
 * seller's points ledger as keyset pages (or, with Accept: text/csv, the whole filtered list streamed as
 * CSV), and settling what finance paid, a bulk route like the other platform writes (platform-batch.ts).
 */

const refundExample: RefundPageResponse = success(MoneyText.refundsListed, {
  nodes: [{
    id: '311',
    orderId: '90412',
    companyId: 101,
    amount: '1250.00',
    currency: 'INR',
    status: 'MANUAL',
    reference: null,
    createdAt: '2026-11-27T09:15:02.481223Z',
    settledAt: null
  }, {
    id: '312',
    orderId: '90420',
    companyId: 101,
    amount: '310.50',
    currency: 'INR',
    status: 'SUCCEEDED',
    reference: 'UTR-2026-1128-0042',
    createdAt: '2026-11-27T10:02:44.100000Z',
    settledAt: '2026-11-28T04:45:00.000000Z'
  }],
  pageInfo: { hasNext: true, endCursor: encodeCursor('refunds', '312') }
})
const payoutExample: PayoutPageResponse = success(MoneyText.payoutsListed, {
  nodes: [{
    id: '77',
    orderId: '90398',
    companyId: 101,
    amount: '4800.00',
    currency: 'INR',
    status: 'SCHEDULED',
    scheduledFor: '2026-12-05',
    reference: null,
    paidAt: null
  }],
  pageInfo: { hasNext: false, endCursor: encodeCursor('payouts', '77') }
})
const ledgerExample: LedgerPageResponse = success(MoneyText.ledgerListed, {
  nodes: [{
    id: '5001',
    kind: 'TOP_UP',
    amount: '5000.00',
    balanceAfter: '5000.00',
    orderId: null,
    reference: 'TOPUP-2024-0001',
    createdAt: '2026-11-20T08:00:00.000000Z'
  }, {
    id: '5002',
    kind: 'ORDER_ACCEPTANCE',
    amount: '-25.00',
    balanceAfter: '4975.00',
    orderId: '90412',
    reference: null,
    createdAt: '2026-11-27T09:20:11.305117Z'
  }],
  pageInfo: { hasNext: false, endCursor: encodeCursor('ledger', '5002') }
})

/** Whether the client asked for the CSV export rather than a JSON page. */
const wantsCsv = (request: FastifyRequest): boolean => /(^|[\s,])text\/csv([\s;,]|$)/i.test(request.headers.accept ?? '')

/**
 * The CSV answer: its first batch read before the headers go out, so a database that cannot be reached
 * is still a 503 in the envelope; later failures cut the stream (the client sees an incomplete file).
 */
async function sendCsv<Row extends { id: string }> (reply: FastifyReply, db: Db, list: MoneyList<Row>,
  filter: MoneyListFilter): Promise<FastifyReply> {
  const rows = csvRows(db, list, filter)
  const head: string[] = []
  for (let i = 0; i < 2; i++) {
    const next = await rows.next()
    if (next.done === true) break
    head.push(next.value)
  }
  async function * all (): AsyncGenerator<string> {
    yield * head
    yield * rows
  }
  return reply.code(200).type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${list.name}.csv"`)
    .send(Readable.from(all()))
}

const listDescription = (what: string, filters: string) =>
  `${what}, oldest first, ${DEFAULT_MONEY_PAGE} a page by default (limit 1 to ${MAX_MONEY_PAGE}). Filters: ${filters}` +
  'from (inclusive) and to (exclusive) on the creation time. Page with after = pageInfo.endCursor while hasNext: ' +
  'the cursor is a position in this list (not an offset): rows added meanwhile come at the end and no row repeats. ' +
  'With Accept: text/csv the answer is the whole filtered list from `after` as CSV (RFC 4180, a header row, ' +
  'a cell starting = + - @ prefixed with \'), streamed. Any other query parameter is refused. Platform key only.'

function listAnswers (example: unknown, what: string): Record<number, Answer> {
  return {
    200: { description: `A page of ${what} (or, with Accept: text/csv, all of them as CSV)`, examples: { page: { summary: 'A page', value: example } } },
    400: {
      description: 'A query parameter that is unknown, repeated or out of its form: nothing was read',
      examples: {
        cursor: failureExample(badRequest(MoneyCode.after, MoneyText.after), 'A cursor of another list, or made up'),
        limit: failureExample(badRequest(MoneyCode.limit, MoneyText.limit), 'limit=0')
      }
    },
    401: platformUnauthorized('Missing, malformed, unknown or revoked platform key, a seller credential instead of it, or a key ' +
      'of the other environment: the same answer for each')
  }
}

interface ListRoute<Row extends { id: string }> {
  endpoint: Endpoint
  operationId: string
  summary: string
  description: string
  example: unknown
  what: string
  shape: ListShape
  list: MoneyList<Row>
  message: string
}

function listRoute<Row extends { id: string }> (
  app: FastifyInstance, route: ListRoute<Row>, extra: Record<number, Answer> = {}
): void {
  const db = app.database.db
  const { endpoint } = route
  app.route({
    method: 'GET',
    url: routePath(endpoint.path),
    onRequest: app.requirePlatformKey(),
    config: { rateLimit: platformConfig(app).rateLimit },
    // The query is checked by parseListQuery, with the texts finance reads (texts.ts).
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId: route.operationId,
      summary: route.summary,
      description: route.description,
      tags: ['Platform'],
      security: [{ platformKeyBearer: [] }],
      ...(endpoint.params !== undefined ? { params: endpoint.params } : {}),
      querystring: endpoint.query,
      response: documentedAnswers(endpoint, { ...listAnswers(route.example, route.what), ...extra })
    },
    handler: async (request, reply) => {
      const filter = parseListQuery(request.query, route.shape)
      const params = request.params as { companyId?: string }
      if (params.companyId !== undefined) {
        const companyId = /^[1-9][0-9]{0,9}$/.test(params.companyId) ? Number(params.companyId) : 0
        if (companyId < 1 || companyId > MAX_SETTLE_ID || !await sellerExists(db, companyId)) {
          throw requestError(404, MoneyNotFoundCode.sellerNotFound, MoneyNotFoundText.sellerNotFound(companyId))
        }
        filter.companyId = companyId
      }
      if (wantsCsv(request)) return sendCsv(reply, db, route.list, filter)
      return reply.code(200).send(success(route.message, await readMoneyPage(db, route.list, filter)))
    }
  })
}

const platformMoneyRoutes: FastifyPluginAsync = async (app) => {
  app.removeContentTypeParser('text/plain')
  const db = app.database.db
  listRoute<RefundRow>(app, {
    endpoint: restEndpoints.platformRefunds,
    operationId: 'listPlatformRefunds',
    summary: 'List refunds (finance)',
    description: listDescription('Every refund of an online-paid order rejected or cancelled; MANUAL ones are finance\'s to pay',
      'status, companyId, '),
    example: refundExample,
    what: 'refunds',
    shape: REFUND_LIST_SHAPE,
    list: refundList,
    message: MoneyText.refundsListed
  })
  listRoute<PayoutRow>(app, {
    endpoint: restEndpoints.platformPayouts,
    operationId: 'listPlatformPayouts',
    summary: 'List payouts to sellers (finance)',
    description: listDescription('What the marketplace owes each seller for prepaid orders; SCHEDULED ones are finance\'s to pay',
      'status, companyId, '),
    example: payoutExample,
    what: 'payouts',
    shape: PAYOUT_LIST_SHAPE,
    list: payoutList,
    message: MoneyText.payoutsListed
  })
  listRoute<LedgerRow>(app, {
    endpoint: restEndpoints.platformLedger,
    operationId: 'listPlatformSellerLedger',
    summary: 'List a seller\'s points ledger (finance)',
    description: listDescription('Every entry that moved the seller\'s points balance, each with the balance it left', ''),
    example: ledgerExample,
    what: 'ledger entries',
    shape: LEDGER_LIST_SHAPE,
    list: ledgerList,
    message: MoneyText.ledgerListed
  }, {
    404: {
      description: 'No seller has this companyId',
      examples: { unknown: failureExample(requestError(404, MoneyNotFoundCode.sellerNotFound, MoneyNotFoundText.sellerNotFound(999)), 'An unknown seller') }
    }
  })

  const settleDescription = (what: string, from: string, to: string) =>
    `1 to ${MAX_PLATFORM_ROWS} rows {id, reference, settledAt}: finance paid these ${what}, each ${from} → ${to} with its ` +
    'reference and settledAt (ISO-8601 with a time zone, not in the future; default now). The same row again is unchanged; ' +
    `another reference for a settled row, a row not ${from}, or an unknown id is refused by row and changes nothing. ` +
    'Two requests settling the same rows at once settle each exactly once. Platform key only.'
  batchRoute(app, restEndpoints.platformRefundsSettle, 'settle rows', MoneyText.refundsSettled,
    (rows, idempotency) => settleRefunds(db, rows, { idempotency }), {
      operationId: 'settlePlatformRefunds',
      summary: 'Mark MANUAL refunds as paid by finance',
      description: settleDescription('refunds', 'MANUAL', 'SUCCEEDED'),
      requestExamples: {
        refunds: {
          summary: 'Two refunds paid by bank transfer',
          value: [{ id: '311', reference: 'UTR-2026-1128-0042', settledAt: '2026-11-28T10:15:00+05:30' }, { id: '318', reference: 'UTR-2026-1128-0043' }]
        }
      },
      processed: success(MoneyText.refundsSettled, batchData(0, 1, 0, [rowError(1, '318', E.refundNotManual('318', 'PENDING'))])),
      resent: success(MoneyText.refundsSettled, batchData(0, 0, 1, [rowError(1, '318', E.refundNotManual('318', 'PENDING'))]))
    })
  batchRoute(app, restEndpoints.platformPayoutsSettle, 'settle rows', MoneyText.payoutsSettled,
    (rows, idempotency) => settlePayouts(db, rows, { idempotency }), {
      operationId: 'settlePlatformPayouts',
      summary: 'Mark SCHEDULED payouts as paid by finance',
      description: settleDescription('payouts', 'SCHEDULED', 'PAID'),
      requestExamples: { payouts: { summary: 'A payout paid by NEFT', value: [{ id: '77', reference: 'NEFT-N3312024' }] } },
      processed: success(MoneyText.payoutsSettled, batchData(0, 1, 0, [])),
      resent: success(MoneyText.payoutsSettled, batchData(0, 0, 1, []))
    })
}

export default platformMoneyRoutes
