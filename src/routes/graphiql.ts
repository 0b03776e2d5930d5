import { createReadStream, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { FastifyPluginAsync } from 'fastify'
import { parse, print, type DocumentNode } from 'graphql'
import { fileURLToPath } from 'node:url'

/*
 * GraphiQL at /graphiql: a public page whose GraphQL calls carry the access token the user puts in its
 * header editor (the page holds no secret, and /v2/graphql still checks every call). Its scripts and
 * styles come from the installed graphiql and React packages, served here: no CDN, so it works on a
 * closed network and the page runs exactly the versions in package-lock.json.
 */

export const GRAPHIQL_PATH = '/graphiql'

const require = createRequire(import.meta.url)
const packageDir = (name: string): string => path.dirname(require.resolve(`${name}/package.json`))

const ASSETS: Record<string, { file: string, type: string }> = {
  'react.production.min.js': { file: path.join(packageDir('react'), 'umd/react.production.min.js'), type: 'text/javascript' },
  'react-dom.production.min.js': { file: path.join(packageDir('react-dom'), 'umd/react-dom.production.min.js'), type: 'text/javascript' },
  'graphiql.min.js': { file: path.join(packageDir('graphiql'), 'graphiql.min.js'), type: 'text/javascript' },
  'graphiql.min.css': { file: path.join(packageDir('graphiql'), 'graphiql.min.css'), type: 'text/css' }
}

const OPERATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../graphql/operations/orders.graphql')

/** The default tab: the contract's orders query, the Orders operation with every field. */
export function exampleQuery (): string {
  const document = parse(readFileSync(OPERATIONS, 'utf8'))
  const wanted: DocumentNode = {
    ...document,
    definitions: document.definitions.filter((d) => (d.kind === 'OperationDefinition' && d.name?.value === 'Orders') || d.kind === 'FragmentDefinition')
  }
  return `# The orders of the seller whose access token is in Headers below.\n# Walk pages from 1 until pageInfo.hasNext is false.\n${print(wanted)}\n`
}

const EXAMPLE_VARIABLES = JSON.stringify({ input: { page: 1, limit: 5 } }, null, 2)
// ASCII only: a header value is a byte string, and fetch refuses the whole call over one '…'.
const EXAMPLE_HEADERS = JSON.stringify({ Authorization: 'Bearer <paste an access token: oxs_test_at_...>' }, null, 2)

/** JSON for a <script> element: no sequence in it can close the element. */
const scriptJson = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c')

function page (graphqlPath: string): string {
  const settings = { url: graphqlPath, query: exampleQuery(), variables: EXAMPLE_VARIABLES, headers: EXAMPLE_HEADERS }
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>GraphiQL · Order Exchange Service</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${GRAPHIQL_PATH}/assets/graphiql.min.css">
  <style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head>
<body>
  <div id="graphiql">Loading GraphiQL…</div>
  <script src="${GRAPHIQL_PATH}/assets/react.production.min.js"></script>
  <script src="${GRAPHIQL_PATH}/assets/react-dom.production.min.js"></script>
  <script src="${GRAPHIQL_PATH}/assets/graphiql.min.js"></script>
  <script id="settings" type="application/json">${scriptJson(settings)}</script>
  <script>
    const settings = JSON.parse(document.getElementById('settings').textContent)
    // The fetcher sends what the Headers tab holds (the access token) with every call.
    const fetcher = GraphiQL.createFetcher({ url: settings.url })
    ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, {
      fetcher,
      defaultQuery: settings.query,
      variables: settings.variables,
      defaultHeaders: settings.headers,
      defaultEditorToolsVisibility: 'headers',
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false
    }))
  </script>
</body>
</html>
`
}

const graphiqlRoutes: FastifyPluginAsync<{ graphqlPath: string }> = async (app, options) => {
  const html = page(options.graphqlPath)
  app.get(GRAPHIQL_PATH, async (_request, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html))
  app.get(`${GRAPHIQL_PATH}/assets/:name`, async (request, reply) => {
    const { name } = request.params as { name: string }
    if (!Object.hasOwn(ASSETS, name)) return reply.callNotFound()
    const asset = ASSETS[name]!
    return reply.type(asset.type).header('cache-control', 'public, max-age=86400').send(createReadStream(asset.file))
  })
}

export default graphiqlRoutes
