import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/client.js'

/*
 * schema/openapi.json: the OpenAPI document exactly as GET /v2/openapi.json serves it with the default
 * configuration, made by building the app (its routes are the source) without connecting to a database.
 * `npm run generate`; scripts/check-drift.sh fails CI when the committed file differs, and
 * test/routes/openapi.test.ts checks that the running service serves this very document.
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export async function openapiDocument (): Promise<object> {
  // postgres.js connects on the first query; building the app runs none.
  const database = openDatabase('postgres://generate@127.0.0.1:1/none')
  const app = await buildApp({ config: loadConfig({ DATABASE_URL: database.url }), database })
  try {
    await app.ready()
    return app.swagger()
  } finally {
    await app.close()
    await database.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await writeFile(path.join(root, 'schema/openapi.json'), `${JSON.stringify(await openapiDocument(), null, 2)}\n`)
}
