import type { Config } from '../config.js'
import { badRequest, RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import { checkReferenceRow } from '../references/reference-row.js'
import { ReferenceCode, ReferenceErrors, ReferenceText } from '../references/texts.js'
import type { ItemError } from '../item-error.js'
import { success } from '../rest-envelope.js'
import { MAX_REFERENCE_ROWS, type ReferencesResponse } from './rest-contract.js'
import { commonResponses, failureExample, type EndpointDoc } from './rest-docs.js'

/*
 * What the OpenAPI document says about PUT /v2/references/sync-data beyond its schemas; every example is
 * built from the feature's own texts (references/texts.ts) and typed against the route's answer.
 */

const rowError = (index: number, { code, text }: ItemError) => ({ index, error: text, code })

export function referencesDocs (config: Config): { referencesSync: EndpointDoc } {
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
  return {
    referencesSync: {
      operationId: 'syncReferences',
      summary: 'Set your own sync IDs for retailers, shops, items and offers',
      description: `A JSON array of 1 to ${MAX_REFERENCE_ROWS} rows {type, id, syncId}; each row sets (or, with null, clears) ` +
        'your sync ID for one record, by the id the orders read shows. A record you do not see is answered like one that ' +
        'does not exist. A sync ID maps one record of a type: uniqueness is checked on the result of the whole request, ' +
        'so one request may swap two sync IDs. The next orders read shows the new sync IDs; data.matched counts your stored ' +
        'outstanding shipment rows that now match. One request is one transaction, so sending it again is safe ' +
        `(it answers unchanged). Body at most ${config.SYNC_BODY_LIMIT_BYTES} bytes, streamed.`,
      tag: 'References',
      security: 'apiKeyHeader',
      requestExamples: {
        rows: {
          summary: 'A retailer mapped, two shops swapping their sync IDs, an offer cleared',
          value: [
            { type: 'RETAILER', id: 12, syncId: 'CUST-0042' },
            { type: 'SHOP', id: 51, syncId: 'OUTLET-2' },
            { type: 'SHOP', id: 52, syncId: 'OUTLET-1' },
            { type: 'OFFER', id: 301, syncId: null }
          ]
        }
      },
      responses: {
        200: {
          description: 'Every row was processed; refused rows are in data.errors by index (nothing of them applied)',
          examples: { synced: { summary: 'One new mapping, two changed (a swap), two refused', value: synced } }
        },
        400: {
          description: 'The body is not a non-empty JSON array, has too many rows, or is not valid JSON (nothing is written)',
          examples: {
            notAnArray: failureExample(badRequest(ReferenceCode.notAnArray, ReferenceText.notAnArray), 'Not a non-empty array'),
            tooManyRows: failureExample(badRequest(ReferenceCode.tooManyRows, ReferenceText.tooManyRows(MAX_REFERENCE_ROWS, 100_001)), `More than ${MAX_REFERENCE_ROWS} rows`),
            invalidJson: failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON'),
            tooDeep: failureExample(new RequestError.JsonTooDeep(MAX_JSON_DEPTH), `Arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`)
          }
        },
        ...commonResponses(config.SYNC_BODY_LIMIT_BYTES)
      }
    }
  }
}
