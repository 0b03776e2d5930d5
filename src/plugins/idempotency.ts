import type { Hash } from 'node:crypto'
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import {
  idempotencyKeyOf, startFingerprint, type IdempotencyRequest, type Replayable
} from '../idempotency/idempotency-key.js'
import { REPLAYED_HEADER } from '../rest-envelope.js'
import { stringifyJson } from '../http/stringify-deep.js'

/*
 * The HTTP half of Idempotency-Key; the transactional half (claim, store with the work, replay, purge) is
 * idempotency/idempotency-key.ts, which the service runs on the transaction of its work. A mutating route
 * says `config: { idempotent: true }` and answers through withIdempotency, which reads the key, fingerprints
 * the request, marks a replay with Idempotent-Replayed and keeps a replay out of the metrics. A route that
 * says so and answers 2xx without withIdempotency, or the reverse, is a 500: a key is never silently ignored.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route changes data: it honours an Idempotency-Key by answering through withIdempotency. */
    idempotent?: boolean
  }
  interface FastifyRequest {
    idempotency: IdempotencyState | null
  }
}

interface IdempotencyState {
  /** The fingerprint of a body the route streams itself, hashed as it was read. */
  streamed?: Hash
  answered: boolean
}

function stateOf (request: FastifyRequest): IdempotencyState {
  request.idempotency ??= { answered: false }
  return request.idempotency
}

const isStream = (body: unknown): boolean =>
  typeof (body as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] === 'function'

async function * hashing (stream: AsyncIterable<Buffer>, hash: Hash): AsyncIterable<Buffer> {
  for await (const chunk of stream) {
    hash.update(chunk)
    yield chunk
  }
}

/**
 * The body of a route that streams it instead of having it parsed: with an Idempotency-Key (a malformed
 * one is a 400 here, before the body is read), its bytes are the fingerprint, hashed as they go by.
 */
export function fingerprinted (request: FastifyRequest, stream: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  if (idempotencyKeyOf(request.headers['idempotency-key']) === undefined) return stream
  const hash = startFingerprint(request.method, request.routeOptions.url!)
  stateOf(request).streamed = hash
  return hashing(stream, hash)
}

/** Method, path and body: the body as parsed (JSON, so spacing does not count) unless the route streamed it. */
function fingerprintOf (request: FastifyRequest, state: IdempotencyState): string {
  if (state.streamed) return state.streamed.digest('hex')
  if (isStream(request.body)) {
    throw new Error(`${request.routeOptions.url} streams its body: read it through fingerprinted()`)
  }
  // stringifyJson: JSON.stringify's text, but a value too deep for its stack does not throw (a 500).
  return startFingerprint(request.method, request.routeOptions.url!).update(stringifyJson(request.body) ?? '').digest('hex')
}

/**
 * Runs a mutating route's work under the request's Idempotency-Key: `work` hands the key to the service,
 * which runs it with `idempotent` on its transaction. A replayed answer gets Idempotent-Replayed: true;
 * only a first answer is counted (`count`: metrics, logs).
 */
export async function withIdempotency<T extends object> (
  request: FastifyRequest,
  reply: FastifyReply,
  work: (idempotency: IdempotencyRequest | undefined) => Promise<Replayable<T>>,
  count: (answer: T) => void
): Promise<T> {
  if (request.routeOptions.config.idempotent !== true) {
    throw new Error(`${request.routeOptions.url} answers through withIdempotency: its config must say idempotent: true`)
  }
  const state = stateOf(request)
  const key = idempotencyKeyOf(request.headers['idempotency-key'])
  let idempotency: IdempotencyRequest | undefined
  if (key !== undefined) {
    // Keys are per credential (a seller's or the platform key): an idempotent route requires one.
    const credentialId = (request.caller ?? request.platformCaller)?.credentialId
    if (credentialId === undefined) throw new Error(`${request.routeOptions.url} is idempotent but takes no credential`)
    idempotency = { credentialId, key, fingerprint: fingerprintOf(request, state) }
  }
  const { replayed, ...answer } = await work(idempotency)
  state.answered = true
  if (replayed) reply.header(REPLAYED_HEADER, 'true')
  else count(answer as T)
  return answer as T
}

const answeredThroughWrapper: onSendHookHandler = async (request, reply) => {
  if (reply.statusCode < 300 && request.idempotency?.answered !== true) {
    throw new Error(`${request.routeOptions.url} is idempotent but answered without withIdempotency`)
  }
}

export default fp(async function idempotencyPlugin (app) {
  app.decorateRequest('idempotency', null)
  app.addHook('onRoute', (route) => {
    if (route.config?.idempotent !== true) return
    const own = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]
    route.onSend = [...own, answeredThroughWrapper]
  })
}, { name: 'idempotency', dependencies: ['auth'] })
