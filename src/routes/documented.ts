import type { TSchema } from '@sinclair/typebox'
import type { FastifySchemaCompiler } from 'fastify'
import { RequestError } from '../errors.js'
import { failure } from '../rest-envelope.js'
import type { Endpoint, RequestFailure } from './rest-contract.js'

/*
 * What the REST routes' own schemas share for the OpenAPI document, which @fastify/swagger collects from
 * them (openapi.ts): an answer of the contract with its words and examples, the answers every route may
 * give, and the validator of a body a route documents but checks itself. Each route builds its examples
 * from its feature's texts, typed against the contract's static types (test/routes/openapi.test.ts also
 * checks each against its schema), so an example cannot drift from what the service sends.
 */

export type Examples = Record<string, { summary: string, value: unknown }>

export interface Answer {
  description: string
  examples: Examples
  /** Headers the answer carries, documented (Retry-After on a 503). */
  headers?: Record<string, { description: string, schema: { type: 'integer' | 'string' } }>
}

/** The envelope the root error handler makes of a coded error. */
export const failureExample = (
  error: { statusCode?: number, message: string, code: string }, summary: string
): { summary: string, value: RequestFailure } =>
  ({ summary, value: failure(error.statusCode ?? 400, error.message, error.code) })

export const invalidJson = failureExample(new RequestError.InvalidJson(), 'The body is not valid JSON')

export const tooDeep = (depth: number) =>
  failureExample(new RequestError.JsonTooDeep(depth), `Arrays and objects nested more than ${depth} levels deep`)

export const unauthorized = failureExample(new RequestError.Unauthorized(), 'Every authentication failure')

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before retrying (the request is safe to repeat)', schema: { type: 'integer' as const } } }

/** The answers every route with a body may give: authentication, body size, content type, failures inside. */
export function commonAnswers (bodyLimit: number): Record<number, Answer> {
  return {
    401: {
      description: 'Missing, malformed, unknown or revoked API key, an access token instead of a key, or a key of the other environment',
      examples: { unauthorized }
    },
    409: {
      description: 'The first request with this Idempotency-Key is still running: retry when it has finished',
      examples: { inUse: failureExample(new RequestError.IdempotencyKeyInUse(), 'The same key, while its first request runs') }
    },
    413: {
      description: `The body is larger than the limit (${bodyLimit} bytes)`,
      examples: { tooLarge: failureExample(new RequestError.PayloadTooLarge(bodyLimit), 'Body over the limit') }
    },
    415: {
      description: 'The body is not application/json',
      examples: { notJson: failureExample(new RequestError.UnsupportedMediaType(), 'Another content type') }
    },
    422: {
      description: 'The Idempotency-Key was used before with a different request (method, path or body)',
      examples: { reused: failureExample(new RequestError.IdempotencyKeyReused(), 'A key reused for another request') }
    },
    429: {
      description: 'Over the credential\'s requests-per-minute budget for this endpoint; nothing was done. ' +
        'Retry-After says when to try again; RateLimit-Limit / RateLimit-Remaining / RateLimit-Reset come with every answer',
      headers: { 'Retry-After': { description: 'Seconds until the budget allows a request again', schema: { type: 'integer' } } },
      examples: { rateLimited: failureExample(new RequestError.RateLimited('at most 120 requests a minute per credential on this endpoint; retry in 42 s'), 'Too many requests') }
    },
    500: {
      description: 'A failure inside the service; nothing of the request was applied. Details are in the service log under the x-request-id',
      examples: { internal: failureExample(new RequestError.Internal(), 'Failure inside') }
    },
    503: {
      description: 'The database cannot be reached or was too slow, or the process is shedding load; nothing was applied ' +
        '(or, if the connection was lost at commit, everything: repeating the request is safe either way)',
      headers: retryAfter,
      examples: {
        unavailable: failureExample(new RequestError.ServiceUnavailable(), 'Database unavailable'),
        timeout: failureExample(new RequestError.Timeout(), 'A statement ran past its timeout'),
        overloaded: failureExample(new RequestError.Overloaded(), 'The process is shedding load')
      }
    }
  }
}

/** The body as the document shows it: the contract's request schema, with examples of it. */
export const documentedBody = <S extends TSchema>(request: S, examples: Examples) => ({ ...request, 'x-examples': examples })

/**
 * A route's `response`: each answer it documents, with the contract's schema for that status and its words.
 * A status the contract does not list for the endpoint stops the app from being built.
 */
export function documentedAnswers (endpoint: Endpoint, answers: Record<number, Answer>): Record<number, object> {
  return Object.fromEntries(Object.entries(answers).map(([status, answer]) => {
    const schema = (endpoint.responses as Partial<Record<string, TSchema>>)[status]
    if (schema === undefined) throw new Error(`${endpoint.method} ${endpoint.path}: ${status} is not one of its answers in rest-contract.ts`)
    return [status, {
      ...schema, description: answer.description, 'x-examples': answer.examples, ...(answer.headers ? { headers: answer.headers } : {})
    }]
  }))
}

/**
 * The validator of a body the route documents but checks itself, an item or a row at a time with the
 * contract's own texts: a schema error would refuse the whole request for one bad row, without them.
 */
export const checkedByTheRoute: FastifySchemaCompiler<unknown> = () => () => true
