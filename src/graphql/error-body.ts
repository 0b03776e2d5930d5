import type { FastifyReply, FastifyRequest } from 'fastify'
import type { GraphQLFormattedError } from 'graphql'
import { sendGraphql } from './media-type.js'

/*
 * The one writer of the body of a GraphQL request that could not run at all (401, 400 before execution,
 * 405, 413, 415, 429, 503): `data: null` and its errors, each with a code a client can branch on, in the
 * media type the client asked for.
 */
export function sendGraphqlErrors (request: FastifyRequest, reply: FastifyReply, statusCode: number,
  errors: readonly GraphQLFormattedError[]): FastifyReply {
  return sendGraphql(request, reply, statusCode, { data: null, errors }, statusCode < 500)
}
