import type { FastifyPluginAsync } from 'fastify'
import { withIdempotency } from '../plugins/idempotency.js'
import { ReferenceEngine } from '../references/reference-engine.js'
import { MAX_REFERENCE_ROWS } from '../references/schemas.js'
import { syncReferences } from '../references/sync-references.js'
import { ReferenceCode, ReferenceText } from '../references/texts.js'
import { success } from '../rest-envelope.js'
import { restEndpoints } from './rest-contract.js'
import { readArrayBodyInto, streamJsonBodies } from './streamed-json-array.js'

/*
 * PUT /v2/references/sync-data: the seller's own sync IDs for its retailers, shops, items and offers, up to
 * 100,000 rows streamed as the shipment sync's are (registered without fastify-plugin for the same reason:
 * its own body parser and limit). Authenticated as the shipment sync: the seller's API key in x-api-key.
 * The rows are read and decided in the references thread (reference-engine.ts), given by the options (the
 * app's, so that it closes with the app).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The references thread of this app (tests stop it to see what a crash of it does). */
    referenceEngine: ReferenceEngine
  }
}

const referencesSyncRoutes: FastifyPluginAsync<{ engine: ReferenceEngine }> = async (app, { engine }) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES
  streamJsonBodies(app, limit)

  const { path, responses } = restEndpoints.referencesSync
  app.put(path, {
    bodyLimit: limit,
    schema: { response: { 200: responses[200], 400: responses[400], 401: responses[401] } },
    onRequest: app.requireCredential('api-key', 'x-api-key'),
    config: {
      idempotent: true,
      rateLimit: { max: app.config.RATE_LIMIT_SYNC_PER_MINUTE, timeWindow: 60_000 }
    }
  }, async (request, reply) => {
    const job = engine.open(MAX_REFERENCE_ROWS)
    try {
      await readArrayBodyInto(request, reply, {
        limit,
        maxRows: MAX_REFERENCE_ROWS,
        notAnArray: { code: ReferenceCode.notAnArray, text: ReferenceText.notAnArray },
        tooManyRows: { code: ReferenceCode.tooManyRows, text: ReferenceText.tooManyRows }
      }, job)
      const sellerId = request.caller!.sellerId
      const result = await withIdempotency(request, reply,
        (idempotency) => syncReferences(app.database.db, sellerId, job, { idempotency }),
        ({ received, inserted, updated, unchanged, failed, matched }) => {
          request.log.info({ sellerId, received, inserted, updated, unchanged, failed, matched }, 'sync IDs synced')
        })
      return success(ReferenceText.success, result)
    } finally {
      job.close()
    }
  })
}

export default referencesSyncRoutes
