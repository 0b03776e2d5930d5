import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest, RequestError } from '../errors.js'
import { fingerprinted } from '../plugins/idempotency.js'
import { JsonArrayReader, readJsonArrayInto, type ElementParser, type JsonArraySink } from '../shipments/json-array-reader.js'

/*
 * The body of a bulk route that takes up to 100,000 rows (the shipment sync, the references sync): not
 * parsed up front but streamed element by element (readJsonArray) under the route's own large limit. A
 * route plugin that uses it is registered without fastify-plugin, so every other route keeps Fastify's
 * parser and the small default limit.
 */

/** The body stream itself becomes request.body; the handler reads it after authentication. JSON only. */
export function streamJsonBodies (app: FastifyInstance, limit: number): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', (request, payload, done) => {
    if (Number(request.headers['content-length']) > limit) {
      done(new RequestError.PayloadTooLarge(limit), undefined)
      return
    }
    done(null, payload)
  })
}

export interface ArrayBodyRules {
  limit: number
  maxRows: number
  notAnArray: { code: string, text: string }
  tooManyRows: { code: string, text: (max: number, got: number) => string }
  /** How each element is parsed (json-array-reader.ts); numbers keep their source text by default. */
  parse?: ElementParser
}

/**
 * Reads the request's JSON array, handing each of the first `maxRows` elements to `onRow`; refuses (400) a
 * body that is not a non-empty array or has more rows, and (413) one above the limit.
 */
export async function readArrayBody (
  request: FastifyRequest, reply: FastifyReply, rules: ArrayBodyRules, onRow: (record: unknown, index: number) => void
): Promise<void> {
  // Rows past the maximum are still read (to count them for the message) but not kept.
  const reader = new JsonArrayReader((record, index) => {
    if (index < rules.maxRows) onRow(record, index)
  }, rules.parse)
  await readArrayBodyInto(request, reply, rules, reader)
}

/**
 * The same checks, the body's bytes written to `sink` (which scans them, maybe in another thread, and
 * keeps no more than `maxRows` rows).
 */
export async function readArrayBodyInto (
  request: FastifyRequest, reply: FastifyReply, rules: Omit<ArrayBodyRules, 'parse'>, sink: JsonArraySink
): Promise<void> {
  const stream = request.body as AsyncIterable<Buffer> | undefined
  if (!stream || typeof stream[Symbol.asyncIterator] !== 'function') {
    throw badRequest(rules.notAnArray.code, rules.notAnArray.text)
  }
  // With an Idempotency-Key, the body's bytes are the request's fingerprint.
  const source = fingerprinted(request, stream)
  let body
  try {
    body = await readJsonArrayInto(source, rules.limit, sink)
  } catch (err) {
    // The rest of a too-large body is never read: the connection cannot be reused.
    if (err instanceof RequestError.PayloadTooLarge) reply.header('connection', 'close')
    throw err
  }
  if (body.kind !== 'array' || body.count === 0) throw badRequest(rules.notAnArray.code, rules.notAnArray.text)
  if (body.count > rules.maxRows) {
    throw badRequest(rules.tooManyRows.code, rules.tooManyRows.text(rules.maxRows, body.count))
  }
}
