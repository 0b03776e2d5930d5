import fs from 'node:fs'
import t from 'tap'
import { GraphQLError, buildSchema, type ValidationRule } from 'graphql'
import { RequestAdmission, RULES } from '../../src/graphql/admission.js'
import { DocumentRejected } from '../../src/graphql/document-gate.js'
import { formatRejectedRequest } from '../../src/graphql/errors.js'
import { SCHEMA_PATH } from '../../src/graphql/plugin.js'
import { build } from '../helpers/build.js'
import { createSeller, credential } from '../helpers/fixtures.js'

/*
 * A GraphQL error's code (and so its status) comes from the step that raised it — the parse, validation,
 * the coercion of variables — never from graphql-js's wording of it.
 */

const schema = buildSchema(fs.readFileSync(SCHEMA_PATH, 'utf8'))
const ORDERS = 'query Q($input: OrderListInput) { orders(input: $input) { pageInfo { page } } }'
const REQUIRED = ORDERS.replace('OrderListInput)', 'OrderListInput!)')

function rejection (fn: () => void): readonly GraphQLError[] {
  try {
    fn()
  } catch (err) {
    if (err instanceof DocumentRejected) return err.errors
    throw err
  }
  throw new Error('not rejected')
}

t.test('each step codes its own errors', async (t) => {
  const admission = new RequestAdmission(schema)
  const [syntax] = rejection(() => admission.document('{ orders { '))
  t.equal(syntax!.extensions.code, 'GRAPHQL_PARSE_FAILED', 'the parse')
  const [invalid] = rejection(() => admission.document('{ orders { nodes { price } } }'))
  t.equal(invalid!.extensions.code, 'GRAPHQL_VALIDATION_FAILED', 'validation')
  const document = admission.document(ORDERS)
  const [coercion] = rejection(() => admission.checkVariables(document, null, { input: { limit: 'ten' } }))
  t.same(coercion!.extensions, { code: 'BAD_USER_INPUT', field: 'limit' }, 'a variable\'s coercion, naming the field')
  const [missing] = rejection(() => admission.checkVariables(admission.document(REQUIRED), null, null))
  t.same(missing!.extensions, { code: 'BAD_USER_INPUT' }, 'a required variable not given')
  const [nested] = rejection(() => admission.checkVariables(document, null, { input: 'x' }))
  t.same(nested!.extensions, { code: 'BAD_USER_INPUT' }, 'not an object: no field to name')
  t.doesNotThrow(() => admission.checkVariables(document, null, { input: { limit: 5 } }), 'good variables pass')
  t.doesNotThrow(() => admission.checkVariables(document, 'Other', {}), 'no such operation: left to execution')
})

t.test('the wording does not decide the code', async (t) => {
  // A validation error worded like a syntax error, and one like a variable error: still validation's.
  const misleading: ValidationRule = (context) => ({
    Document (node) {
      context.reportError(new GraphQLError('Syntax Error: worded like the parser', { nodes: [node] }))
      const worded = 'Variable "$input" got invalid value "x" at "input.limit"; reworded'
      context.reportError(new GraphQLError(worded, { nodes: [node] }))
    }
  })
  const admission = new RequestAdmission(schema, [...RULES, misleading])
  const errors = rejection(() => admission.document('{ seller { name } }'))
  t.same(errors.map((e) => e.extensions.code), ['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_VALIDATION_FAILED'])
  t.notOk(errors.some((e) => 'field' in e.extensions), 'no field read out of a text')

  // Validation stopped by its own budget points at nothing in the document, whatever its message says.
  const aborted: ValidationRule = (context) => ({
    Document () { context.reportError(new GraphQLError('Anything at all')) }
  })
  const [budget] = rejection(() => new RequestAdmission(schema, [...RULES, aborted]).document('{ seller { name } }'))
  t.equal(budget!.extensions.code, 'QUERY_TOO_COMPLEX')

  // An uncoded request-level error that reaches the formatter is a document that cannot run, whatever it says.
  const messages = [
    'Syntax Error: Unexpected <EOF>.',
    'Variable "$input" got invalid value "x" at "input.limit"; no',
    'Validation aborted.'
  ]
  for (const message of messages) {
    const { statusCode, response } = formatRejectedRequest(new GraphQLError(message))
    t.equal(statusCode, 400, message)
    t.same(response.errors![0]!.extensions, { code: 'GRAPHQL_VALIDATION_FAILED' }, message)
  }
})

t.test('over HTTP: a syntax, a validation and a variable error get their status and code', async (t) => {
  const { app, database } = await build(t)
  const { sellerId } = await createSeller(database)
  const token = await credential(database, sellerId, 'access-token')
  const post = (payload: object) => app.inject({
    method: 'POST',
    url: '/v2/graphql',
    payload,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  })
  const cases: Array<[string, object, string, Record<string, unknown>]> = [
    ['syntax', { query: '{ seller { name ' }, 'GRAPHQL_PARSE_FAILED', {}],
    ['validation', { query: '{ seller { price } }' }, 'GRAPHQL_VALIDATION_FAILED', {}],
    ['variable', { query: ORDERS, variables: { input: { page: 1.5 } } }, 'BAD_USER_INPUT', { field: 'page' }],
    ['required variable missing', { query: REQUIRED }, 'BAD_USER_INPUT', {}]
  ]
  for (const [name, payload, code, extra] of cases) {
    for (const run of [1, 2]) {
      const res = await post(payload)
      t.equal(res.statusCode, 400, `${name} (run ${run})`)
      t.equal(res.json().data, null, name)
      t.same(res.json().errors[0].extensions, { code, ...extra }, `${name} (run ${run})`)
    }
  }
  const wrongMethod = await app.inject({
    method: 'PUT', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }
  })
  t.equal(wrongMethod.statusCode, 405, 'a method the path does not take')
  t.same(wrongMethod.json().errors[0].extensions, { code: 'METHOD_NOT_ALLOWED' }, 'answered in the GraphQL shape')
})
