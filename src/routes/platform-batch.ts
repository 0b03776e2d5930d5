import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest, RequestError } from '../errors.js'
import { MAX_JSON_DEPTH } from '../http/json-body.js'
import type { IdempotencyRequest, Replayable } from '../idempotency/idempotency-key.js'
import type { PlatformBatchData } from '../platform/schemas.js'
import { MAX_PLATFORM_ROWS, PlatformCode, PlatformText } from '../platform/texts.js'
import { withIdempotency } from '../plugins/idempotency.js'
import { success } from '../rest-envelope.js'
import {
  checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody, failureExample, invalidJson, tooDeep,
  unauthorized, type Answer, type Examples
} from './documented.js'
import type { Endpoint, PlatformBatchResponse } from './rest-contract.js'

/*
 * A bulk route of the marketplace (docs/platform/api.md), platform key only: the request-level checks (a
 * non-empty array of at most MAX_PLATFORM_ROWS rows: a 400 without data), then one service call through
 * withIdempotency, its per-row results wrapped in the envelope, and the route's schema for the document.
 * Rows are checked by the service, one by one, so the schema documents the body rather than validating it
 * (a schema error would refuse the whole request for one bad row).
 */

/** The rows of a body, or a 400 that says what was expected. */
function rowsOf (body: unknown, what: string): unknown[] {
  if (!Array.isArray(body) || body.length === 0) {
    throw badRequest(PlatformCode.notAnArray, PlatformText.notAnArray(what))
  }
  if (body.length > MAX_PLATFORM_ROWS) throw badRequest(PlatformCode.tooManyRows, PlatformText.tooManyRows(body.length))
  return body
}

export type Service = (rows: unknown[], idempotency: IdempotencyRequest | undefined, request: FastifyRequest) =>
Promise<Replayable<PlatformBatchData>>

/** A refused row of the answer, as the service writes it (for the examples). */
export const rowError = (index: number, id: number | string | null, { code, text }: { code: string, text: string }) =>
  ({ index, id, error: text, code })

/** A batch's counts, as the service writes them (for the examples). */
export const batchData = (inserted: number, updated: number, unchanged: number,
  errors: ReturnType<typeof rowError>[]) => {
  const received = inserted + updated + unchanged + errors.length
  return { received, inserted, updated, unchanged, failed: errors.length, errors }
}

/** The route's config: every platform route takes an Idempotency-Key and has a budget per key. */
export function platformConfig (app: FastifyInstance) {
  // The marketplace's key is trusted with the data, not with the machine: each route has a budget per key,
  // as the seller routes have (a 1,000-row batch a request, 600 a minute by default: 10,000 rows a second).
  return { idempotent: true, rateLimit: { max: app.config.RATE_LIMIT_PLATFORM_PER_MINUTE, timeWindow: 60_000 } }
}

/** The platform key's 401, the same answer for each way it fails. */
export const platformUnauthorized = (description: string): Answer => ({ description, examples: { unauthorized } })

export interface BatchDoc {
  operationId: string
  summary: string
  description: string
  requestExamples: Examples
  /** What the example is answered, and what it is answered when sent again. */
  processed: PlatformBatchResponse
  resent: PlatformBatchResponse
}

function batchAnswers (bodyLimit: number, what: string, processed: PlatformBatchResponse,
  resent: PlatformBatchResponse): Record<number, Answer> {
  return {
    200: {
      description: 'Every row was processed, also when every row was refused: refusals are in data.errors by index',
      examples: {
        processed: { summary: 'Rows inserted, updated and refused', value: processed },
        resent: { summary: 'The same batch sent again: nothing changes', value: resent }
      }
    },
    400: {
      description: `The body is not a non-empty JSON array, has more than ${MAX_PLATFORM_ROWS} rows, is not valid JSON, nests ` +
        `more than ${MAX_JSON_DEPTH} levels deep or holds a number a double cannot hold exactly ` +
        '(a request-level failure: no data, nothing written)',
      examples: {
        notAnArray: failureExample(badRequest(PlatformCode.notAnArray, PlatformText.notAnArray(what)), 'Not a non-empty array'),
        tooManyRows: failureExample(
          badRequest(PlatformCode.tooManyRows, PlatformText.tooManyRows(MAX_PLATFORM_ROWS + 1)),
          `More than ${MAX_PLATFORM_ROWS} rows`),
        invalidJson,
        tooDeep: tooDeep(MAX_JSON_DEPTH),
        inexactNumber: failureExample(
          new RequestError.InexactNumber('rows[3].price', '0.1000000000000000000001', '0.1'),
          'A number a double cannot hold exactly (send a numeric string): it would not be stored as sent')
      }
    },
    ...commonAnswers(bodyLimit),
    401: platformUnauthorized('Missing, malformed, unknown or revoked platform key, a seller credential instead of it, or a key ' +
      'of the other environment: the same answer for each')
  }
}

/** Adds a bulk route: `what` names its rows in the 400 text, `message` is its answer's. */
export function batchRoute (app: FastifyInstance, endpoint: Endpoint & { request: TSchema }, what: string,
  message: string, service: Service, doc: BatchDoc): void {
  const { operationId, summary, description, requestExamples, processed, resent } = doc
  app.route({
    method: endpoint.method,
    url: endpoint.path,
    onRequest: app.requirePlatformKey(),
    // Money and quantities are stored exactly (docs/platform/api.md): a number JSON.parse would round is a
    // 400 naming its path (plugins/json-body.ts). Not the update-status (platform-orders.ts): its body and per-order
    // answers are the seller endpoint's (an Order_id that is not an integer is that order's error).
    config: { ...platformConfig(app), exactNumbers: true },
    validatorCompiler: checkedByTheRoute,
    schema: {
      operationId,
      summary,
      description,
      tags: ['Platform'],
      security: [{ platformKeyBearer: [] }],
      body: documentedBody(endpoint.request, requestExamples),
      response: documentedAnswers(endpoint, batchAnswers(app.config.BODY_LIMIT_BYTES, what, processed, resent))
    },
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const rows = rowsOf(request.body, what)
      const data = await withIdempotency(request, reply,
        (idempotency) => service(rows, idempotency, request), () => {})
      return reply.code(200).send(success(message, data))
    }
  })
}
