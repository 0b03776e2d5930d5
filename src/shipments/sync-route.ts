import type { FastifyPluginAsync } from 'fastify'
import { BadRequestError, PayloadTooLargeError, SyncErrorText, type Envelope } from '../errors.js'
import { readJsonArray } from './json-array-reader.js'
import { SyncBatchBuilder } from './sync-batch.js'
import { syncOutstandingShipments, type OutstandingShipmentSyncResult } from './sync-outstanding.js'

/*
 * PUT /v2/shipments/outstanding/sync-data (spec 4.3). Registered without fastify-plugin on purpose: the
 * JSON body of this route is not parsed up front but streamed row by row (readJsonArray), under its own
 * large limit; every other route keeps Fastify's parser and the small default limit.
 */

export const SYNC_PATH = '/v2/shipments/outstanding/sync-data'
export const MAX_SYNC_ROWS = 100_000
export const SYNC_SUCCESS_MESSAGE = 'Outstanding shipments synced successfully'

const shipmentSyncRoutes: FastifyPluginAsync = async (app) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES

  // The body stream itself becomes request.body; the handler reads it after authentication. JSON only
  // (no text/plain): anything else is 415.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', (request, payload, done) => {
    if (Number(request.headers['content-length']) > limit) {
      done(new PayloadTooLargeError(`Request body is larger than the limit of ${limit} bytes`), undefined)
      return
    }
    done(null, payload)
  })

  app.put(SYNC_PATH, {
    bodyLimit: limit,
    onRequest: app.requireCredential('api-key', 'x-api-key')
  }, async (request, reply): Promise<Envelope<OutstandingShipmentSyncResult>> => {
    const stream = request.body as AsyncIterable<Buffer> | undefined
    if (!stream || typeof stream[Symbol.asyncIterator] !== 'function') throw new BadRequestError(SyncErrorText.notAnArray)
    const builder = new SyncBatchBuilder()
    let body
    try {
      // Rows past the maximum are still read (to count them for the message) but not kept.
      body = await readJsonArray(stream, limit, (record, index) => { if (index < MAX_SYNC_ROWS) builder.add(record) })
    } catch (err) {
      // The rest of a too-large body is never read: the connection cannot be reused.
      if (err instanceof PayloadTooLargeError) reply.header('connection', 'close')
      throw err
    }
    if (body.kind !== 'array' || body.count === 0) throw new BadRequestError(SyncErrorText.notAnArray)
    if (body.count > MAX_SYNC_ROWS) throw new BadRequestError(SyncErrorText.tooManyRows(MAX_SYNC_ROWS, body.count))

    const sellerId = request.caller!.sellerId
    const result = await syncOutstandingShipments(app.database.sql, sellerId, builder.finish())
    const { received, inserted, updated, unchanged, duplicates, failed } = result
    request.log.info({ sellerId, received, inserted, updated, unchanged, duplicates, failed }, 'outstanding shipments synced')
    return { error: false, status: true, statusCode: 200, message: SYNC_SUCCESS_MESSAGE, data: result }
  })
}

export default shipmentSyncRoutes
