import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GraphQLError } from 'graphql'
import { graphqlContext } from './context.js'
import { RequestAdmission } from './admission.js'
import { DocumentRejected } from './document-gate.js'
import { sendGraphqlErrors } from './error-body.js'
import { formatRejectedRequest } from './errors.js'
import { requestCost, settleQueryCost } from './cost-limit.js'
import { sendGraphql } from './media-type.js'
import { PassThrough } from './pass-through.js'
import { describeOperation, recordCost, recordExecution } from './operation-span.js'
import type { Span } from '../tracing/tracing.js'
import { RequestError } from '../errors.js'
import { MAX_JSON_DEPTH, scanJson } from '../http/json-body.js'

/*
 * POST (and GET, for queries) /v2/graphql: our own routes in front of Mercurius's executor, so that
 * what a request may carry is decided here. `query` must be GraphQL source text that passes the
 * document gate (bounded, parseable), validation and the coercion of its variables (admission.ts, which
 * codes each error where it is raised); only then does Mercurius see it (cache, execution),
 * unless the pass-through (pass-through.ts) can answer it with PostgreSQL's own JSON text.
 */

export const GRAPHQL_PATH = '/v2/graphql'

const JsonObject = Type.Record(Type.String(), Type.Unknown())

/** GraphQL over HTTP's request parameters; unset optional ones may be sent as null. */
export const GraphqlRequestSchema = Type.Object({
  query: Type.Optional(Type.String({ description: 'GraphQL source text (not a JSON-encoded document)' })),
  variables: Type.Optional(Type.Union([JsonObject, Type.Null()])),
  operationName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  extensions: Type.Optional(Type.Union([JsonObject, Type.Null()]))
})
type GraphqlRequest = Static<typeof GraphqlRequestSchema>

/** GET carries variables and extensions as JSON text in the query string. */
const GraphqlQueryStringSchema = Type.Object({
  query: Type.Optional(Type.String()),
  variables: Type.Optional(Type.String()),
  operationName: Type.Optional(Type.String()),
  extensions: Type.Optional(Type.String())
})

function badRequest (message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } })
}

class RequestRejected extends Error {
  constructor (readonly error: GraphQLError) { super(error.message) }
}

/** A GET parameter that must hold a JSON object (or be absent). */
function jsonObjectParam (name: string, text: string | undefined): Record<string, unknown> | null {
  if (text === undefined || text === '') return null
  // Bounded as every JSON body is (http/json-body.ts), before JSON.parse sees it.
  if (scanJson(text).kind === 'too-deep') {
    const tooDeep = new RequestError.JsonTooDeep(MAX_JSON_DEPTH)
    throw new RequestRejected(new GraphQLError(`Invalid request: ${name}: ${tooDeep.message}`, { extensions: { code: tooDeep.code } }))
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new RequestRejected(badRequest(`Invalid request: ${name} must be a JSON object`))
  }
  if (value === null) return null
  if (typeof value !== 'object' || Array.isArray(value)) throw new RequestRejected(badRequest(`Invalid request: ${name} must be a JSON object`))
  return value as Record<string, unknown>
}

export function registerGraphqlRoutes (app: FastifyInstance): void {
  const admission = new RequestAdmission(app.graphql.schema)
  const passThrough = app.config.GRAPHQL_PASS_THROUGH ? new PassThrough(app.graphql.schema) : null

  // `application/graphql` carries the query text itself as the body.
  app.addContentTypeParser('application/graphql', { parseAs: 'string' }, (_request, body, done) => { done(null, { query: body }) })

  /** Answers one request; `span` (tracing on) is told the operation, the path that answered it and its cost. */
  async function run (
    request: FastifyRequest, reply: FastifyReply, params: GraphqlRequest, span?: Span
  ): Promise<unknown> {
    const reject = (errors: readonly GraphQLError[]): FastifyReply => {
      recordExecution(span, 'rejected')
      const codes = errors.map((e) => e.extensions.code)
      request.log.info({ codes, reason: errors[0]?.message.slice(0, 200) }, 'graphql request rejected')
      return sendGraphqlErrors(request, reply, 400, errors.map((e) => e.toJSON()))
    }
    const { query, variables, operationName } = params
    if (typeof query !== 'string' || query.trim() === '') {
      return reject([badRequest('The request body must contain a query')])
    }
    try {
      const document = admission.document(query)
      admission.checkVariables(document, operationName ?? null, variables ?? null)
      request.graphqlOperationName = operationName ?? null
      if (span) describeOperation(span, document, operationName ?? null)
      // What this request costs, with its own page sizes and directives: worked out once, spent by the
      // pass-through or by the standard execution's hook, billed after either (cost-limit.ts).
      if (app.costBucket) {
        request.graphqlCostPlan = requestCost(app.graphql.schema, document, operationName ?? null, variables ?? {})
      }
      const context = graphqlContext(request)
      if (passThrough) {
        const answered = await passThrough.answer(request, reply, { ...context, costBucket: app.costBucket },
          query, variables ?? null, operationName ?? null)
        if (answered) {
          recordExecution(span, 'pass-through')
          return reply
        }
      }
      recordExecution(span, 'standard')
      const result = await reply.graphql(query, context, variables ?? undefined, operationName ?? undefined)
      // What the query cost and what is left of the budget (cost-limit.ts), as Shopify reports it: the
      // root fields that produced data are billed for what they returned.
      if (app.costBucket && request.caller) {
        const answered = Object.entries(result.data ?? {}).filter(([, value]) => value !== null).map(([key]) => key)
        await settleQueryCost(app.costBucket, reply, request.caller.credentialId, answered)
      }
      const cost = request.graphqlCost
      const body = cost ? { ...result, extensions: { ...result.extensions, cost } } : result
      // Mercurius set the status (errors.ts): 400 only when the document could not run (bad variables).
      return sendGraphql(request, reply, reply.statusCode, body, reply.statusCode === 400)
    } catch (err) {
      if (err instanceof DocumentRejected) return reject(err.errors)
      const code = (err as { code?: unknown }).code
      if (typeof code === 'string' && code.startsWith('MER_ERR_GQL_')) {
        recordExecution(span, 'rejected')
        const { statusCode, response } = formatRejectedRequest(err as Error & { errors?: Error[] })
        request.log.info({ statusCode, errors: response.errors?.map((e) => e.message.slice(0, 200)) }, 'graphql request rejected')
        return sendGraphqlErrors(request, reply, statusCode, response.errors ?? [])
      }
      throw err
    } finally {
      // A request that spent and then failed before its bill (a thrown error) gets everything back.
      if (app.costBucket && request.caller) {
        await settleQueryCost(app.costBucket, reply, request.caller.credentialId, [])
      }
      if (span) recordCost(span, request.graphqlCost)
    }
  }

  /** With tracing on, the request in a span of the operation's own, inside the HTTP request's. */
  const answer = (request: FastifyRequest, reply: FastifyReply, params: GraphqlRequest): Promise<unknown> =>
    app.tracing
      ? app.tracing.span('GraphQL Operation', {}, (span) => run(request, reply, params, span))
      : run(request, reply, params)

  app.post(GRAPHQL_PATH, { schema: { body: GraphqlRequestSchema } },
    (request, reply) => answer(request, reply, request.body as GraphqlRequest))

  app.get(GRAPHQL_PATH, { schema: { querystring: GraphqlQueryStringSchema } }, async (request, reply) => {
    const q = request.query as Static<typeof GraphqlQueryStringSchema>
    let params: GraphqlRequest
    try {
      params = { query: q.query, operationName: q.operationName, variables: jsonObjectParam('variables', q.variables), extensions: jsonObjectParam('extensions', q.extensions) }
    } catch (err) {
      if (err instanceof RequestRejected) return sendGraphqlErrors(request, reply, 400, [err.error.toJSON()])
      throw err
    }
    return answer(request, reply, params)
  })
}
