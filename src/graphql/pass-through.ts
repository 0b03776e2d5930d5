import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  getNamedType, getOperationAST, isObjectType, Kind, specifiedRules, validate,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLObjectType, type GraphQLSchema,
  type OperationDefinitionNode
} from 'graphql'
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js'
import { getArgumentValues, getVariableValues } from 'graphql/execution/values.js'
import type { CostBucket } from '../cost-bucket.js'
import type { Caller } from '../credentials/service.js'
import type { Db } from '../db/client.js'
import { PlanNotCovered, type JsonEntry } from '../db/json-text.js'
import { parseOrderListInput, type OrderListQuery } from '../orders/order-list-input.js'
import { readOrderConnectionText } from '../orders/order-json.js'
import { parseOutstandingShipmentListInput, type OutstandingShipmentQuery } from '../shipments/outstanding-list-input.js'
import { readOutstandingConnectionText } from '../shipments/outstanding-json.js'
import { parseDocument } from './document-gate.js'
import { requestedCost, spendQueryCost } from './cost-limit.js'
import { DOCUMENT_LIMITS } from './limits.js'
import { GRAPHQL_RESPONSE_JSON, wantsGraphqlResponse } from './media-type.js'

/*
 * The pass-through (Hasura's approach): for a query whose root fields are `orders`,
 * `outstandingShipments` and `__typename`, PostgreSQL writes the JSON text of each selected connection
 * (orders/order-json.ts, shipments/outstanding-json.ts) and the answer is spliced together from those
 * texts, never parsed or re-serialised in Node. The selection it writes is the one graphql-js would
 * execute: the validated document's fields collected with graphql's own collectFields (aliases,
 * fragments, @skip/@include with the request's variables), in response-key order.
 *
 * It is an optimisation, never a behaviour: it answers only a document that is valid, runs one query
 * operation with well-formed variables and input, and is fully covered by the plan; everything else
 * (introspection, `seller`, errors of any kind, a selection it does not write) returns `undefined` and
 * the standard execution answers it — with the same document, the same error formatting, and the cost
 * decision already taken here (spendQueryCost), so nothing is spent twice. test/graphql-pass-through.test.ts
 * proves the two byte-identical over thousands of random documents.
 */

/** What the pass-through knows about a document text: parsed and valid, or not for it. */
type Prepared = { document: DocumentNode, fragments: Record<string, FragmentDefinitionNode> } | null

/** One root entry of the answer. */
type RootPart =
  | { key: string, kind: 'typename' }
  | { key: string, kind: 'orders', input: OrderListQuery | null, entries: JsonEntry[] }
  | { key: string, kind: 'outstandingShipments', input: OutstandingShipmentQuery | null, entries: JsonEntry[] }

export interface PassThroughContext { caller: Caller, db: Db, timeZone: string, costBucket: CostBucket | null }

/**
 * Parsed and validated documents by source text, most recent last. The validation is the one the
 * standard path runs (graphql's rules plus our depth and cost rule), so a document valid here is valid
 * there; one that is not valid is remembered as null and left to the standard path's error answer.
 */
export class PassThrough {
  private readonly documents = new Map<string, Prepared>()
  private readonly rules

  constructor (private readonly schema: GraphQLSchema, private readonly capacity = 1024) {
    this.rules = [...specifiedRules, DOCUMENT_LIMITS]
  }

  private prepare (text: string): Prepared {
    const known = this.documents.get(text)
    if (known !== undefined) {
      this.documents.delete(text)
      this.documents.set(text, known)
      return known
    }
    let prepared: Prepared = null
    try {
      const document = parseDocument(text)
      if (validate(this.schema, document, this.rules).length === 0) {
        const fragments: Record<string, FragmentDefinitionNode> = {}
        for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d
        prepared = { document, fragments }
      }
    } catch {
      prepared = null
    }
    this.documents.set(text, prepared)
    if (this.documents.size > this.capacity) this.documents.delete(this.documents.keys().next().value!)
    return prepared
  }

  /** The root parts of the answer, or null when the standard execution must answer. */
  plan (text: string, variables: Record<string, unknown> | null, operationName: string | null): { parts: RootPart[], document: DocumentNode } | null {
    const prepared = this.prepare(text)
    if (!prepared) return null
    const operation = getOperationAST(prepared.document, operationName)
    if (!operation || operation.operation !== 'query') return null
    const coerced = getVariableValues(this.schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 })
    if (coerced.errors) return null
    try {
      return { parts: this.rootParts(operation, prepared.fragments, coerced.coerced), document: prepared.document }
    } catch (err) {
      if (err instanceof PlanNotCovered) return null
      throw err
    }
  }

  private rootParts (operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>, variables: Record<string, unknown>): RootPart[] {
    const query = this.schema.getQueryType()!
    const parts: RootPart[] = []
    for (const [key, nodes] of collectFields(this.schema, fragments, variables, query, operation.selectionSet)) {
      const name = nodes[0]!.name.value
      if (name === '__typename') {
        parts.push({ key, kind: 'typename' })
        continue
      }
      if (name !== 'orders' && name !== 'outstandingShipments') throw new PlanNotCovered(`Query.${name}`)
      const field = query.getFields()[name]!
      const args = getArgumentValues(field, nodes[0]!, variables) as { input?: Record<string, unknown> | null }
      const entries = this.entries(getNamedType(field.type) as GraphQLObjectType, nodes, fragments, variables)
      parts.push(name === 'orders'
        ? { key, kind: name, input: (args.input ?? null) as OrderListQuery | null, entries }
        : { key, kind: name, input: (args.input ?? null) as OutstandingShipmentQuery | null, entries })
    }
    return parts
  }

  /** The plan of an object's sub-selection, in response-key order. */
  private entries (type: GraphQLObjectType, nodes: readonly FieldNode[], fragments: Record<string, FragmentDefinitionNode>, variables: Record<string, unknown>): JsonEntry[] {
    const entries: JsonEntry[] = []
    for (const [key, fieldNodes] of collectSubfields(this.schema, fragments, variables, type, nodes)) {
      const name = fieldNodes[0]!.name.value
      if (name === '__typename') {
        entries.push({ key, value: { kind: 'typename', name: type.name } })
        continue
      }
      const field = type.getFields()[name]
      if (!field || field.args.length > 0) throw new PlanNotCovered(`${type.name}.${name}`)
      const named = getNamedType(field.type)
      if (fieldNodes[0]!.selectionSet === undefined) {
        entries.push({ key, value: { kind: 'field', name } })
      } else if (isObjectType(named)) {
        entries.push({ key, value: { kind: 'field', name, entries: this.entries(named, fieldNodes, fragments, variables) } })
      } else {
        throw new PlanNotCovered(`${type.name}.${name}`)
      }
    }
    return entries
  }

  /**
   * Answers the request and returns true, or returns false (having sent nothing) when the standard
   * execution must answer it. (Not the reply itself: a reply is a thenable, and awaiting it waits for
   * the response to finish and yields undefined.)
   */
  async answer (request: FastifyRequest, reply: FastifyReply, context: PassThroughContext,
    text: string, variables: Record<string, unknown> | null, operationName: string | null): Promise<boolean> {
    const outcome = request.server.metrics.graphqlPassThrough
    const planned = this.plan(text, variables, operationName)
    if (!planned) { outcome.inc({ outcome: 'not_covered' }); return false }
    // The input rules, before anything is spent: a bad input is the standard path's error answer.
    let reads: Array<() => Promise<string>>
    try {
      reads = planned.parts.map((part) => {
        if (part.kind === 'typename') { const t = '"Query"'; return async () => t }
        if (part.kind === 'orders') {
          const filter = parseOrderListInput(part.input)
          const reader = { sellerId: context.caller.sellerId, storeIds: context.caller.storeIds }
          return () => readOrderConnectionText(context.db, reader, filter, part.entries, context.timeZone)
        }
        const filter = parseOutstandingShipmentListInput(part.input)
        return () => readOutstandingConnectionText(context.db, context.caller.sellerId, filter, part.entries)
      })
    } catch {
      outcome.inc({ outcome: 'input_refused' })
      return false
    }
    if (context.costBucket) {
      const cost = requestedCost(this.schema, planned.document, operationName)
      try {
        await spendQueryCost(context.costBucket, reply, context.caller.credentialId, cost)
      } catch {
        // Refused: the standard path answers with the same decision (and counts it).
        outcome.inc({ outcome: 'cost_refused' })
        return false
      }
    }
    let texts: string[]
    try {
      texts = await Promise.all(reads.map((read) => read()))
    } catch (err) {
      // A database error: the standard execution runs again and answers as it always does (503 …).
      request.log.debug({ err }, 'graphql pass-through failed; standard execution answers')
      outcome.inc({ outcome: 'database_error' })
      return false
    }
    let body = '{"data":{'
    planned.parts.forEach((part, i) => { body += `${i === 0 ? '' : ','}"${part.key}":${texts[i]!}` })
    body += '}'
    if (request.graphqlCost) body += `,"extensions":{"cost":${JSON.stringify(request.graphqlCost)}}`
    body += '}'
    reply.code(200).type(wantsGraphqlResponse(request) ? `${GRAPHQL_RESPONSE_JSON}; charset=utf-8` : 'application/json; charset=utf-8')
    outcome.inc({ outcome: 'answered' })
    reply.send(body)
    return true
  }
}
