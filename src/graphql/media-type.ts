import type { FastifyReply, FastifyRequest } from 'fastify'

/*
 * GraphQL over HTTP's two response media types. `application/json` is what the contract shows and stays
 * the default (a client that sends no Accept, or `*\/*`, gets exactly today's answers). A client that
 * prefers `application/graphql-response+json` gets that content type, and a request error (the document
 * never ran: unparsable, invalid, bad variables, a bad body) comes without a `data` entry, as the
 * GraphQL-over-HTTP spec asks for that media type. Status codes are the same under both: 400 for request
 * errors, 200 when there is data. The 401 body is the contract's under both.
 */

export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json'
const JSON_TYPE = 'application/json'

/** The q of each media range of an Accept header (RFC 9110), lower-cased, parameters other than q ignored. */
function acceptRanges (accept: string): Array<{ range: string, q: number }> {
  return accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    const value = q === undefined ? 1 : Number(q.slice(2))
    return { range, q: Number.isFinite(value) ? value : 0 }
  })
}

/** How much a client wants a media type: the q of the most specific range that matches it. */
function quality (ranges: Array<{ range: string, q: number }>, type: string): number {
  const [major] = type.split('/')
  const exact = ranges.find((r) => r.range === type)
  if (exact) return exact.q
  const wild = ranges.find((r) => r.range === `${major}/*`) ?? ranges.find((r) => r.range === '*/*')
  return wild?.q ?? 0
}

/** Whether to answer this request as application/graphql-response+json. */
export function wantsGraphqlResponse (request: FastifyRequest): boolean {
  const accept = request.headers.accept
  if (typeof accept !== 'string' || !accept.toLowerCase().includes(GRAPHQL_RESPONSE_JSON)) return false
  const ranges = acceptRanges(accept)
  const graphql = ranges.find((r) => r.range === GRAPHQL_RESPONSE_JSON)?.q ?? 0
  return graphql > 0 && graphql >= quality(ranges, JSON_TYPE)
}

/**
 * Sends a GraphQL body in the media type the client asked for. `requestError` marks a body of a
 * request that never ran; under application/graphql-response+json its `data: null` is left out.
 */
export function sendGraphql (
  request: FastifyRequest, reply: FastifyReply, statusCode: number, body: { data?: unknown, errors?: unknown },
  requestError: boolean
): FastifyReply {
  reply.code(statusCode)
  if (!wantsGraphqlResponse(request)) return reply.send(body)
  reply.type(`${GRAPHQL_RESPONSE_JSON}; charset=utf-8`)
  if (requestError && statusCode !== 401 && body.data === null) {
    const { data, ...withoutData } = body
    return reply.send(withoutData)
  }
  return reply.send(body)
}
