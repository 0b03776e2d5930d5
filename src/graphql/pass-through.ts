import { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  getArgumentValues, getNamedType, getOperationAST, getVariableValues, isObjectType, Kind, specifiedRules, validate,
  visit,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLObjectType, type GraphQLSchema,
  type OperationDefinitionNode, type VariableNode
} from 'graphql'
import { collectFields, collectSubfields } from 'graphql/execution/collectFields.js'
import type { CostBucket } from '../cost-bucket.js'
import type { Caller } from '../credentials/service.js'
import type { Db } from '../db/client.js'
import { PlanNotCovered, type JsonEntry, type SurroundText } from '../db/json-text.js'
import type { JsonAnswer } from '../db/statements.js'
import { InvalidInputError } from '../errors.js'
import { parseEventListInput, type EventListQuery } from '../events/event-list-input.js'
import { checkEventEntries, readEventConnectionText } from '../events/event-json.js'
import { parseOrderListInput, type OrderListQuery } from '../orders/order-list-input.js'
import { readOrderConnectionText } from '../orders/order-json.js'
import { parseOutstandingShipmentListInput, type OutstandingShipmentQuery } from '../shipments/outstanding-list-input.js'
import { readOutstandingConnectionText } from '../shipments/outstanding-json.js'
import { parseDocument } from './document-gate.js'
import { recordListLengths, settleQueryCost, spendQueryCost, type QueryCost } from './cost-limit.js'
import { DOCUMENT_LIMITS } from './limits.js'
import { GRAPHQL_RESPONSE_JSON, wantsGraphqlResponse } from './media-type.js'

/*
 * The pass-through (Hasura's approach): for a query whose root fields are `orders`,
 * `outstandingShipments`, `events` and `__typename`, PostgreSQL writes the JSON text of each selected
 * connection (orders/order-json.ts, shipments/outstanding-json.ts, events/event-json.ts: an event's
 * order only with the full selection it was stored with) and the answer is spliced together from those
 * texts, never parsed or re-serialised in Node. The selection it writes is the one graphql-js would
 * execute: the validated document's fields collected with graphql's own collectFields (aliases,
 * fragments, @skip/@include with the request's variables), in response-key order.
 *
 * It is an optimisation, never a behaviour: it answers only a document that is valid, runs one query
 * operation with well-formed variables and input, and is fully covered by the plan; everything else
 * (introspection, `seller`, errors of any kind, a selection it does not write) returns `undefined` and
 * the standard execution answers it — with the same document, the same error formatting, and the cost
 * decision already taken here (spendQueryCost), so nothing is spent twice. test/graphql/pass-through.test.ts
 * proves the two byte-identical over thousands of random documents.
 */

/**
 * What the pass-through knows about a document text: parsed and valid (or null: not for it), the
 * variables its directives read (the only ones the selection depends on), and its selections and costs
 * as worked out so far (per operation and directive values: the same document sent again costs a lookup).
 */
type Prepared = {
  document: DocumentNode
  fragments: Record<string, FragmentDefinitionNode>
  directiveVariables: string[]
  selections: Map<string, RootSelection[]>
} | null

/** A root field of the answer as selected; its arguments are read per request. */
type RootSelection =
  | { key: string, kind: 'typename' }
  | { key: string, kind: 'orders' | 'outstandingShipments' | 'events', node: FieldNode, entries: JsonEntry[], entriesKey: string }

/** One root entry of the answer. */
type RootPart =
  | { key: string, kind: 'typename' }
  | { key: string, kind: 'orders', input: OrderListQuery | null, entries: JsonEntry[], entriesKey: string }
  | { key: string, kind: 'outstandingShipments', input: OutstandingShipmentQuery | null, entries: JsonEntry[], entriesKey: string }
  | { key: string, kind: 'events', input: EventListQuery | null, entries: JsonEntry[], entriesKey: string }

/** Selections kept per document (distinct operation names and directive values). */
const SELECTIONS_PER_DOCUMENT = 16

/** What ends the answer: the data object, and the cost extension when a budget was spent. */
function answerClosing (cost: QueryCost | null): string {
  return cost ? `},"extensions":{"cost":${JSON.stringify(cost)}}}` : '}}'
}

/**
 * The text around root part `index` of an answer whose root keys are `keys`, so that the parts written in
 * order are the whole body: `{"data":{` and the key before the first, `,` and the key before each other,
 * the closing after the last — unless `closed` is false: then the server writes the closing itself, once
 * the bill is known (the cost extension).
 */
export function answerSurround (keys: readonly string[], index: number, closed = true): SurroundText {
  return {
    before: `${index === 0 ? '{"data":{' : ','}${JSON.stringify(keys[index])}:`,
    after: closed && index === keys.length - 1 ? answerClosing(null) : ''
  }
}

/**
 * Sends the parts of a body as they are: one buffer as it is, several as a stream with their total length
 * (a page of 300 KB is not copied into a new buffer to add a few bytes after it).
 */
function sendChunks (reply: FastifyReply, chunks: Buffer[]): void {
  if (chunks.length === 1) {
    reply.send(chunks[0])
    return
  }
  reply.header('content-length', chunks.reduce((n, c) => n + c.length, 0))
  reply.send(Readable.from(chunks, { objectMode: false }))
}

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
        const directiveVariables = new Set<string>()
        const collect = { Variable: (v: VariableNode) => { directiveVariables.add(v.name.value) } }
        visit(document, { Directive: (directive) => { visit(directive, collect) } })
        prepared = {
          document,
          fragments,
          directiveVariables: [...directiveVariables].sort(),
          selections: new Map()
        }
      }
    } catch {
      prepared = null
    }
    this.documents.set(text, prepared)
    if (this.documents.size > this.capacity) this.documents.delete(this.documents.keys().next().value!)
    return prepared
  }

  /** The root parts of the answer, or null when the standard execution must answer. */
  plan (
    text: string, variables: Record<string, unknown> | null, operationName: string | null
  ): { parts: RootPart[], document: DocumentNode } | null {
    const prepared = this.prepare(text)
    if (!prepared) return null
    const operation = getOperationAST(prepared.document, operationName)
    if (!operation || operation.operation !== 'query') return null
    const definitions = operation.variableDefinitions ?? []
    const coerced = getVariableValues(this.schema, definitions, variables ?? {}, { maxErrors: 1 })
    if (coerced.errors) return null
    const values = coerced.coerced
    const key = JSON.stringify([operationName, prepared.directiveVariables.map((name) => values[name] ?? null)])
    let selections = prepared.selections.get(key)
    if (!selections) {
      try {
        selections = this.rootSelections(operation, prepared.fragments, values)
      } catch (err) {
        if (err instanceof PlanNotCovered) return null
        throw err
      }
      if (prepared.selections.size >= SELECTIONS_PER_DOCUMENT) {
        prepared.selections.delete(prepared.selections.keys().next().value!)
      }
      prepared.selections.set(key, selections)
    }
    const query = this.schema.getQueryType()!
    const parts = selections.map((s): RootPart => {
      if (s.kind === 'typename') return s
      const args = getArgumentValues(query.getFields()[s.kind]!, s.node, values) as {
        input?: Record<string, unknown> | null
      }
      const { key, entries, entriesKey } = s
      if (s.kind === 'orders') return { key, kind: s.kind, input: (args.input ?? null) as OrderListQuery | null, entries, entriesKey }
      if (s.kind === 'events') return { key, kind: s.kind, input: (args.input ?? null) as EventListQuery | null, entries, entriesKey }
      return { key, kind: s.kind, input: (args.input ?? null) as OutstandingShipmentQuery | null, entries, entriesKey }
    })
    return { parts, document: prepared.document }
  }

  private rootSelections (
    operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>,
    variables: Record<string, unknown>
  ): RootSelection[] {
    const query = this.schema.getQueryType()!
    const selections: RootSelection[] = []
    for (const [key, nodes] of collectFields(this.schema, fragments, variables, query, operation.selectionSet)) {
      const name = nodes[0]!.name.value
      if (name === '__typename') {
        selections.push({ key, kind: 'typename' })
        continue
      }
      if (name !== 'orders' && name !== 'outstandingShipments' && name !== 'events') throw new PlanNotCovered(`Query.${name}`)
      const field = query.getFields()[name]!
      const entries = this.entries(getNamedType(field.type) as GraphQLObjectType, nodes, fragments, variables)
      if (name === 'events') checkEventEntries(entries)
      selections.push({ key, kind: name, node: nodes[0]!, entries, entriesKey: JSON.stringify(entries) })
    }
    return selections
  }

  /** The plan of an object's sub-selection, in response-key order. */
  private entries (
    type: GraphQLObjectType, nodes: readonly FieldNode[], fragments: Record<string, FragmentDefinitionNode>,
    variables: Record<string, unknown>
  ): JsonEntry[] {
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
    const spends = context.costBucket !== null
    let reads: Array<(around: SurroundText) => Promise<JsonAnswer>>
    try {
      reads = planned.parts.map((part) => {
        if (part.kind === 'typename') {
          return async (around) => ({ body: Buffer.from(`${around.before}"Query"${around.after}`), lengths: null })
        }
        if (part.kind === 'orders') {
          const filter = parseOrderListInput(part.input)
          const reader = { sellerId: context.caller.sellerId, storeIds: context.caller.storeIds }
          return (around) => readOrderConnectionText(context.db, reader, filter, part.entries, context.timeZone, around,
            part.entriesKey, spends)
        }
        if (part.kind === 'events') {
          const filter = parseEventListInput(part.input)
          const reader = { sellerId: context.caller.sellerId, storeIds: context.caller.storeIds }
          return (around) =>
            readEventConnectionText(context.db, reader, filter, part.entries, around, part.entriesKey, spends)
        }
        const filter = parseOutstandingShipmentListInput(part.input)
        return (around) =>
          readOutstandingConnectionText(context.db, context.caller.sellerId, filter, part.entries, around, spends)
      })
    } catch {
      outcome.inc({ outcome: 'input_refused' })
      return false
    }
    if (context.costBucket) {
      try {
        await spendQueryCost(context.costBucket, reply, context.caller.credentialId, request.graphqlCostPlan?.cost ?? 0)
      } catch {
        // Refused: the standard path answers with the same decision (and counts it).
        outcome.inc({ outcome: 'cost_refused' })
        return false
      }
    }
    // Each root part is written with the answer's text around it (the envelope and its key), so the parts
    // in order are the body: for one root field without a cost to report, the body is the buffer
    // PostgreSQL's bytes arrived in, sent without being copied, decoded or encoded again.
    const keys = planned.parts.map((part) => part.key)
    const costed = request.graphqlCost !== null
    let answers: JsonAnswer[]
    try {
      answers = await Promise.all(reads.map((read, i) => read(answerSurround(keys, i, !costed))))
    } catch (err) {
      // A database error: the standard execution runs again and answers as it always does (503 …). An
      // input only the database can judge (an event cursor older than the events kept) is refused there too.
      request.log.debug({ err }, 'graphql pass-through failed; standard execution answers')
      outcome.inc({ outcome: err instanceof InvalidInputError ? 'input_refused' : 'database_error' })
      return false
    }
    const chunks = answers.map((answer) => answer.body)
    if (costed) {
      // Billed for the lists as they came back (PostgreSQL counted them in the same statement), then closed.
      answers.forEach((answer, i) => {
        if (answer.lengths) recordListLengths(request, keys[i]!, Object.entries(answer.lengths))
      })
      await settleQueryCost(context.costBucket!, reply, context.caller.credentialId, keys)
      chunks.push(Buffer.from(answerClosing(request.graphqlCost)))
    }
    // No root part (every root field skipped): the envelope alone.
    if (keys.length === 0) chunks.unshift(Buffer.from(costed ? '{"data":{' : `{"data":{${answerClosing(null)}`))
    reply.code(200).type(wantsGraphqlResponse(request) ? `${GRAPHQL_RESPONSE_JSON}; charset=utf-8` : 'application/json; charset=utf-8')
    outcome.inc({ outcome: 'answered' })
    sendChunks(reply, chunks)
    return true
  }
}
