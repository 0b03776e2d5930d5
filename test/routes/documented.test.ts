import Fastify from 'fastify'
import t from 'tap'
import { checkedByTheRoute, commonAnswers, documentedAnswers, documentedBody } from '../../src/routes/documented.js'
import { restEndpoints } from '../../src/routes/rest-contract.js'

/*
 * What the REST routes' schemas share (src/routes/documented.ts): an answer is the contract's schema for
 * its status with the route's words, a status the contract does not have stops the build, and a body the
 * route checks itself is documented without Fastify refusing it.
 */

t.test('an answer is the contract\'s schema for its status, with its words; another status is refused', async (t) => {
  const endpoint = restEndpoints.shipmentSync
  type Documented = Record<number, Record<string, object>>
  const answers = documentedAnswers(endpoint, { 429: commonAnswers(1000)[429]! }) as Documented
  t.same(Object.keys(answers), ['429'])
  t.equal(answers[429]!.title, 'RequestFailure', 'the contract\'s schema of the 429')
  t.same(answers[429]!.properties, endpoint.responses[429].properties)
  t.match(answers[429], {
    description: /requests-per-minute budget/,
    'x-examples': { rateLimited: { value: { statusCode: 429, code: 'RATE_LIMITED' } } },
    headers: { 'Retry-After': { schema: { type: 'integer' } } }
  })
  t.throws(() => documentedAnswers(endpoint, { 404: { description: 'No such thing', examples: {} } }),
    /PUT \/v2\/shipments\/outstanding\/sync-data: 404 is not one of its answers/,
    'the sync has no 404 in the contract: documenting one stops the app from being built')
})

t.test('a body the route checks itself is documented, not validated', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  const body = documentedBody(restEndpoints.statusUpdate.request, { none: { summary: 'An example', value: {} } })
  app.post('/checked-by-the-route', { validatorCompiler: checkedByTheRoute, schema: { body } }, async (request) => ({ got: request.body }))
  const undocumented = restEndpoints.statusUpdate.request
  app.post('/validated', { schema: { body: undocumented } }, async (request) => ({ got: request.body }))
  const payload = { order_status: 'not an array' }
  const checked = await app.inject({ method: 'POST', url: '/checked-by-the-route', payload })
  t.equal(checked.statusCode, 200, 'the handler gets the body as sent, to answer with its own texts')
  t.same(checked.json(), { got: payload })
  const validated = await app.inject({ method: 'POST', url: '/validated', payload })
  t.equal(validated.statusCode, 400, 'the same schema, validated by Fastify, would refuse the whole request')
})
