import { GraphQLError } from 'graphql'

/*
 * The codes of GraphQL errors (extensions.code), and the one way a code is put on an error: where the
 * error is raised (the gate, validation, variable coercion, a resolver), never afterwards from its text.
 */

export type GraphqlErrorCode =
  | 'BAD_USER_INPUT' | 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED' | 'QUERY_TOO_DEEP' | 'QUERY_TOO_COMPLEX'
  | 'BAD_REQUEST' | 'INTERNAL_SERVER_ERROR' | 'SERVICE_UNAVAILABLE' | 'TIMEOUT'

/** The error with its code (and any other extensions), keeping where it points in the document. */
export function withCode (
  error: GraphQLError, code: GraphqlErrorCode, message = error.message, extra: Record<string, unknown> = {}
): GraphQLError {
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code, ...extra }
  })
}
