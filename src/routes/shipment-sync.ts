import type { FastifyPluginAsync } from 'fastify'
import { badRequest, RequestError } from '../errors.js'
import { fingerprinted, withIdempotency } from '../plugins/idempotency.js'
import { readJsonArray } from '../shipments/json-array-reader.js'
import { SyncBatchBuilder } from '../shipments/sync-batch.js'
import { MAX_SYNC_ROWS } from '../shipments/schemas.js'
import { syncOutstandingShipments } from '../shipments/sync-outstanding.js'
import { SyncCode, SyncText } from '../shipments/texts.js'
import { success } from '../rest-envelope.js'
import { restEndpoints } from './rest-contract.js'

/*
 * PUT /v2/shipments/outstanding/sync-data (spec 4.3). Registered without fastify-plugin on purpose: the
 * JSON body of this route is not parsed up front but streamed row by row (readJsonArray), under its own
 * large limit; every other route keeps Fastify's parser and the small default limit.
 */

const shipmentSyncRoutes: FastifyPluginAsync = async (app) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES

  // The body stream itself becomes request.body; the handler reads it after authentication. JSON only
  // (no text/plain): anything else is 415.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', (request, payload, done) => {
    if (Number(request.headers['content-length']) > limit) {
      done(new RequestError.PayloadTooLarge(limit), undefined)
      return
    }
    done(null, payload)
  })

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
    const stream = request.body as AsyncIterable<Buffer> | undefined
    if (!stream || typeof stream[Symbol.asyncIterator] !== 'function') throw badRequest(SyncCode.notAnArray, SyncText.notAnArray)
    // With an Idempotency-Key, the body's bytes are the request's fingerprint.
    const source = fingerprinted(request, stream)
    const builder = new SyncBatchBuilder()
    let body
    try {
      // Rows past the maximum are still read (to count them for the message) but not kept.
      body = await readJsonArray(source, limit, (record, index) => { if (index < MAX_SYNC_ROWS) builder.add(record) })
    } catch (err) {
      // The rest of a too-large body is never read: the connection cannot be reused.
      if (err instanceof RequestError.PayloadTooLarge) reply.header('connection', 'close')
      throw err
    }
    if (body.kind !== 'array' || body.count === 0) throw badRequest(SyncCode.notAnArray, SyncText.notAnArray)
    if (body.count > MAX_SYNC_ROWS) {
      throw badRequest(SyncCode.tooManyRows, SyncText.tooManyRows(MAX_SYNC_ROWS, body.count))
    }

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
