import {
  GraphQLError, coerceInputValue, getOperationAST, getVariableValues, isInputType, isNonNullType, specifiedRules,
  typeFromAST, validate, type DocumentNode, type GraphQLSchema, type ValidationRule, type VariableDefinitionNode
} from 'graphql'
import { withCode } from './coded-error.js'
import { DocumentRejected, parseDocument } from './document-gate.js'
import { DOCUMENT_LIMITS } from './limits.js'

/*
 * What a request must pass before anything runs, in graphql's own order: parse (the document gate),
 * validation, then coercion of the variables. Each step codes the errors it raises, so the code and the
 * status follow from where an error came from, never from graphql-js's wording. Mercurius does the same
 * steps again and finds nothing more.
 */

/** What every /v2/graphql document is validated with: graphql's own rules and our depth and cost bounds. */
export const RULES: readonly ValidationRule[] = [...specifiedRules, DOCUMENT_LIMITS]
/** graphql's default: past this many, validate adds one error saying it stopped. */
const MAX_VALIDATION_ERRORS = 100
const MAX_VARIABLE_ERRORS = 50
type Variables = Record<string, unknown> | null
const TOO_COMPLEX = 'The document is too complex to validate (too many fields or fragments of the same name): ' +
  'simplify or split it'

/** Validation's errors, coded: every rule points into the document; an error pointing nowhere is validate giving up. */
function validationErrors (
  schema: GraphQLSchema, document: DocumentNode, rules: readonly ValidationRule[]
): GraphQLError[] {
  const errors = validate(schema, document, rules, { maxErrors: MAX_VALIDATION_ERRORS })
  const last = errors.length > MAX_VALIDATION_ERRORS ? errors.length - 1 : -1
  return errors.map((error, i) => {
    if (typeof error.extensions.code === 'string') return error
    // Out of its work budget (pairwise field comparison, fragment spreads): the document is the problem.
    if (error.locations === undefined && i !== last) return withCode(error, 'QUERY_TOO_COMPLEX', TOO_COMPLEX)
    return withCode(error, 'GRAPHQL_VALIDATION_FAILED')
  })
}

/**
 * The input field each coercion error of a variable is about, in the order graphql reports them (it
 * gives the path only inside its text): a field when the bad value is one level inside the input object.
 */
function invalidFields (
  schema: GraphQLSchema, definition: VariableDefinitionNode, inputs: Record<string, unknown>
): Array<string | undefined> {
  const type = typeFromAST(schema, definition.type)
  const name = definition.variable.name.value
  if (!isInputType(type) || !Object.hasOwn(inputs, name)) return []
  if (inputs[name] === null && isNonNullType(type)) return []
  const fields: Array<string | undefined> = []
  coerceInputValue(inputs[name], type, (path) => {
    fields.push(path.length === 1 && typeof path[0] === 'string' ? path[0] : undefined)
  })
  return fields
}

/** The variables' coercion errors, each BAD_USER_INPUT, with the field when there is one. */
function variableErrors (
  schema: GraphQLSchema, definitions: readonly VariableDefinitionNode[], inputs: Record<string, unknown>
): GraphQLError[] {
  const coerced = getVariableValues(schema, definitions, inputs, { maxErrors: MAX_VARIABLE_ERRORS })
  if (!coerced.errors) return []
  const fields = new Map(definitions.map((d) => [d as unknown, invalidFields(schema, d, inputs)]))
  return coerced.errors.map((error) => {
    const field = fields.get(error.nodes?.[0])?.shift()
    return withCode(error, 'BAD_USER_INPUT', error.message, field === undefined ? {} : { field })
  })
}

/**
 * Documents admitted or refused, by source text, most recent last: a client sends the same few documents
 * over and over, and a repeat costs one Map lookup instead of a lex, a parse and a validation.
 */
export class RequestAdmission {
  private readonly documents = new Map<string, DocumentNode | readonly GraphQLError[]>()
  constructor (private readonly schema: GraphQLSchema, private readonly rules: readonly ValidationRule[] = RULES,
    private readonly capacity = 1024) {}

  /** The parsed, valid document of `text`; throws DocumentRejected with coded errors otherwise. */
  document (text: string): DocumentNode {
    let known = this.documents.get(text)
    if (known !== undefined) {
      this.documents.delete(text)
    } else {
      try {
        const document = parseDocument(text)
        const errors = validationErrors(this.schema, document, this.rules)
        known = errors.length > 0 ? errors : document
      } catch (err) {
        if (!(err instanceof DocumentRejected)) throw err
        known = err.errors
      }
    }
    this.documents.set(text, known)
    if (this.documents.size > this.capacity) this.documents.delete(this.documents.keys().next().value!)
    if (Array.isArray(known)) throw new DocumentRejected(known)
    return known as DocumentNode
  }

  /** Throws DocumentRejected when the variables do not fit the operation's declared types. */
  checkVariables (document: DocumentNode, operationName: string | null, variables: Variables): void {
    // No such operation: execution reports it (coded as a document that cannot run).
    const operation = getOperationAST(document, operationName)
    if (!operation) return
    const errors = variableErrors(this.schema, operation.variableDefinitions ?? [], variables ?? {})
    if (errors.length > 0) throw new DocumentRejected(errors)
  }
}
