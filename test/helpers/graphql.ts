// A typed GraphQL request to /v2/graphql through app.inject, and its reply.
import { print } from 'graphql'
import type { TypedDocumentNode } from '@graphql-typed-document-node/core'
import type { FastifyInstance } from 'fastify'

export interface GraphqlReply<TData> {
  statusCode: number
  body: {
    data: TData | null
    errors?: Array<{ message: string, path?: string[], extensions?: Record<string, unknown> }>
  }
  raw: string
}

/** POST a typed document (or raw query text) to /v2/graphql with a bearer token, through app.inject. */
export async function graphql<TData, TVariables> (
  app: FastifyInstance, token: string | null, document: TypedDocumentNode<TData, TVariables> | string,
  variables?: TVariables
): Promise<GraphqlReply<TData>> {
  const res = await app.inject({
    method: 'POST',
    url: '/v2/graphql',
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
    payload: { query: typeof document === 'string' ? document : print(document), variables }
  })
  return { statusCode: res.statusCode, body: res.json(), raw: res.body }
}
