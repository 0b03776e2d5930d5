import http from 'node:http'
import { postgraphile } from 'postgraphile'
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber'
import { makePgService } from 'postgraphile/adaptors/pg'
import { grafserv } from 'postgraphile/grafserv/node'

/*
 * The generic engine of the comparison: PostGraphile 5 with its Amber preset over the service's tables,
 * as a team would put it in front of this database (index behaviours off, so the condition and orderBy
 * the page needs exist). Needs Promise.withResolvers: started with --import bench/lib/promise-with-resolvers.mjs.
 * A one-day page is a set-returning function (PostGraphile's way to a range filter), created by run.ts.
 */

export async function startPostgraphile (url: string, poolMax: number): Promise<{
  server: http.Server, close: () => Promise<void>
}> {
  const preset: GraphileConfig.Preset = {
    extends: [PostGraphileAmberPreset],
    disablePlugins: ['PgIndexBehaviorsPlugin'],
    pgServices: [makePgService({ connectionString: url, schemas: ['public'], poolConfig: { max: poolMax } })],
    grafserv: { graphqlPath: '/graphql', watch: false },
    grafast: { explain: false }
  }
  const pgl = postgraphile(preset)
  const serv = pgl.createServ(grafserv)
  const server = http.createServer()
  serv.addTo(server)
  await serv.ready()
  return { server, close: async () => { server.close(); await pgl.release() } }
}
