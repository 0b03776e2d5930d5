import type { FastifyPluginAsync } from 'fastify'
import { badRequest } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import type { ItemError } from '../item-error.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { ReferenceEngine } from '../references/reference-engine.js'
import { checkReferenceRow } from '../references/reference-row.js'
import { MAX_REFERENCE_ROWS } from '../references/schemas.js'
import { syncReferences } from '../references/sync-references.js'
import { ReferenceCode, ReferenceErrors, ReferenceText } from '../references/texts.js'
import { success } from '../rest-envelope.js'
import {
  checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody, failureExample, invalidJson, tooDeep
} from './documented.js'
import { restEndpoints, type ReferencesResponse } from './rest-contract.js'
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

const rowError = (index: number, { code, text }: ItemError) => ({ index, error: text, code })
const badRow = checkReferenceRow({ type: 'OFFER', id: 77, syncId: '' })
if (badRow.error === undefined) throw new Error('the example row must be one the service refuses')
const synced: ReferencesResponse = success(ReferenceText.success, {
  received: 5,
  inserted: 1,
  updated: 2,
  unchanged: 0,
  failed: 2,
  errors: [rowError(3, ReferenceErrors.notFound('ITEM', 999999)), rowError(4, badRow.error)],
  matched: { retailers: 3, shops: 0, offers: 0 }
})

const referencesSyncRoutes: FastifyPluginAsync<{ engine: ReferenceEngine }> = async (app, { engine }) => {
  const limit = app.config.SYNC_BODY_LIMIT_BYTES
  streamJsonBodies(app, limit)

  const endpoint = restEndpoints.referencesSync
  app.put(endpoint.path, {
    bodyLimit: limit,
    // The body is streamed and checked row by row (a bad row is reported, not the request refused).
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId: 'syncReferences',
      summary: 'Set your own sync IDs for retailers, shops, items and offers',
      description: `A JSON array of 1 to ${MAX_REFERENCE_ROWS} rows {type, id, syncId}; each row sets (or, with null, clears) ` +
        'your sync ID for one record, by the id the orders read shows. A record you do not see is answered like one that ' +
        'does not exist. A sync ID maps one record of a type: uniqueness is checked on the result of the whole request, ' +
        'so one request may swap two sync IDs. The next orders read shows the new sync IDs; data.matched counts your stored ' +
        'outstanding shipment rows that now match. One request is one transaction, so sending it again is safe ' +
        `(it answers unchanged). Body at most ${limit} bytes, streamed.`,
      tags: ['References'],
      security: [{ apiKeyHeader: [] }],
      body: documentedBody(endpoint.request, {
        rows: {
          summary: 'A retailer mapped, two shops swapping their sync IDs, an offer cleared',
          value: [
            { type: 'RETAILER', id: 12, syncId: 'CUST-0042' },
            { type: 'SHOP', id: 51, syncId: 'OUTLET-2' },
            { type: 'SHOP', id: 52, syncId: 'OUTLET-1' },
            { type: 'OFFER', id: 301, syncId: null }
          ]
        }
      }),
      response: documentedAnswers(endpoint, {
        200: {
          description: 'Every row was processed; refused rows are in data.errors by index (nothing of them applied)',
          examples: { synced: { summary: 'One new mapping, two changed (a swap), two refused', value: synced } }
        },
        400: {
          description: 'The body is not a non-empty JSON array, has too many rows, or is not valid JSON (nothing is written)',
          examples: {
            notAnArray: failureExample(badRequest(ReferenceCode.notAnArray, ReferenceText.notAnArray), 'Not a non-empty array'),
            tooManyRows: failureExample(badRequest(ReferenceCode.tooManyRows, ReferenceText.tooManyRows(MAX_REFERENCE_ROWS, 100_001)), `More than ${MAX_REFERENCE_ROWS} rows`),
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
