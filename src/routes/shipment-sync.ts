import type { FastifyPluginAsync } from 'fastify'
import { badRequest } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { SyncBatchBuilder } from '../shipments/sync-batch.js'
import { MAX_SYNC_ROWS } from '../shipments/schemas.js'
import { checkOutstandingShipmentRow } from '../shipments/sync-row.js'
import { syncOutstandingShipments } from '../shipments/sync-outstanding.js'
import { SyncCode, SyncText } from '../shipments/texts.js'
import { success } from '../rest-envelope.js'
import {
  checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody, failureExample, invalidJson, tooDeep
} from './documented.js'
import { restEndpoints, type SyncResponse } from './rest-contract.js'
import { readArrayBody, streamJsonBodies } from './streamed-json-array.js'

/*
 * PUT /v2/shipments/outstanding/sync-data (docs/api/shipments.md). Registered without fastify-plugin on purpose: the
 * JSON body of this route is not parsed up front but streamed row by row (streamed-json-array.ts), under
 * its own large limit; every other route keeps Fastify's parser and the small default limit.
 */

const refused = checkOutstandingShipmentRow({ retailerSyncId: 'RET-1-00003', shopSyncId: null, offerSyncId: '', outstandingQuantity: 4 })
if (refused.error === undefined) throw new Error('the example row must be one the service refuses')
const synced: SyncResponse = success(SyncText.success, {
  received: 3,
  inserted: 1,
  updated: 1,
  unchanged: 0,
  duplicates: 0,
  failed: 1,
  errors: [{ index: 2, error: refused.error.text, code: refused.error.code }],
  unmatched: {
    retailerSyncIds: { count: 1, examples: ['RET-NEW-0042'] },
    shopSyncIds: { count: 0, examples: [] },
    offerSyncIds: { count: 0, examples: [] }
  }
})

const shipmentSyncRoutes: FastifyPluginAsync = async (app) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES
  streamJsonBodies(app, limit)

  const endpoint = restEndpoints.shipmentSync
  app.put(endpoint.path, {
    bodyLimit: limit,
    // The body is streamed and checked row by row (a bad row is reported, not the request refused).
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId: 'syncOutstandingShipments',
      summary: 'Replace outstanding shipment quantities',
      description: `A JSON array of 1 to ${MAX_SYNC_ROWS} rows; each row sets the quantity of its key (retailer, shop, offer). ` +
        'Bad rows are skipped and reported by index; the last valid row of a key wins; sync IDs that match nothing are stored and ' +
        `reported in data.unmatched. One request is one transaction, so sending it again is safe. Body at most ${limit} bytes, streamed.`,
      tags: ['Shipments'],
      security: [{ apiKeyHeader: [] }],
      body: documentedBody(endpoint.request, {
        rows: {
          summary: 'Two rows: with a shop, and without one (null); a quantity as a numeric string is stored as written',
          value: [
            { retailerSyncId: 'RET-1-00001', shopSyncId: 'SHOP-1-00001', offerSyncId: 'VAR-1-001', outstandingQuantity: 12 },
            { retailerSyncId: 'RET-NEW-0042', shopSyncId: null, offerSyncId: 'VAR-1-002', outstandingQuantity: '10.500' }
          ]
        }
      }),
      response: documentedAnswers(endpoint, {
        200: {
          description: 'Every row was processed; bad rows are in data.errors by index, unknown sync IDs in data.unmatched',
          examples: { synced: { summary: 'Of three rows: one new, one changed, one refused (an empty offerSyncId); a retailer not known yet', value: synced } }
        },
        400: {
          description: 'The body is not a non-empty JSON array, has too many rows, or is not valid JSON (nothing is written)',
          examples: {
            notAnArray: failureExample(badRequest(SyncCode.notAnArray, SyncText.notAnArray), 'Not a non-empty array'),
            tooManyRows: failureExample(badRequest(SyncCode.tooManyRows, SyncText.tooManyRows(MAX_SYNC_ROWS, 100_001)), `More than ${MAX_SYNC_ROWS} rows`),
            invalidJson,
            tooDeep: tooDeep(MAX_JSON_DEPTH)
          }
        },
        ...commonAnswers(limit)
      })
    },
    onRequest: app.requireCredential('api-key', 'x-api-key'),
    config: {
      idempotent: true,
      rateLimit: { max: app.config.RATE_LIMIT_SYNC_PER_MINUTE, timeWindow: 60_000 }
    }
  }, async (request, reply) => {
    const builder = new SyncBatchBuilder()
    await readArrayBody(request, reply, {
      limit,
      maxRows: MAX_SYNC_ROWS,
      notAnArray: { code: SyncCode.notAnArray, text: SyncText.notAnArray },
      tooManyRows: { code: SyncCode.tooManyRows, text: SyncText.tooManyRows }
    }, (record) => builder.add(record))

    const sellerId = request.caller!.sellerId
    const result = await withIdempotency(request, reply,
      (idempotency) => syncOutstandingShipments(app.database.db, sellerId, builder.finish(), { idempotency }),
      ({ received, inserted, updated, unchanged, duplicates, failed }) => {
        const counts = { received, inserted, updated, unchanged, duplicates, failed }
        request.log.info({ sellerId, ...counts }, 'outstanding shipments synced')
        const rows = app.metrics.syncRows
        rows.inc({ outcome: 'inserted' }, inserted)
        rows.inc({ outcome: 'updated' }, updated)
        rows.inc({ outcome: 'unchanged' }, unchanged)
        rows.inc({ outcome: 'duplicate' }, duplicates)
        rows.inc({ outcome: 'failed' }, failed)
      })
    return success(SyncText.success, result)
  })
}

export default shipmentSyncRoutes
