import type { FastifyPluginAsync } from 'fastify'
import { withIdempotency } from '../plugins/idempotency.js'
import { SyncBatchBuilder } from '../shipments/sync-batch.js'
import { MAX_SYNC_ROWS } from '../shipments/schemas.js'
import { syncOutstandingShipments } from '../shipments/sync-outstanding.js'
import { SyncCode, SyncText } from '../shipments/texts.js'
import { success } from '../rest-envelope.js'
import { restEndpoints } from './rest-contract.js'
import { readArrayBody, streamJsonBodies } from './streamed-json-array.js'

/*
 * PUT /v2/shipments/outstanding/sync-data (docs/api/shipments.md). Registered without fastify-plugin on purpose: the
 * JSON body of this route is not parsed up front but streamed row by row (streamed-json-array.ts), under
 * its own large limit; every other route keeps Fastify's parser and the small default limit.
 */

const shipmentSyncRoutes: FastifyPluginAsync = async (app) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES
  streamJsonBodies(app, limit)

  const { path, responses } = restEndpoints.shipmentSync
  app.put(path, {
    bodyLimit: limit,
    schema: { response: { 200: responses[200], 400: responses[400], 401: responses[401] } },
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
