// `npm run build`: the service compiled to dist/ (tsc, tsconfig.build.json), plus the files it reads at
// run time that tsc does not copy (the GraphQL operations GraphiQL opens with). The schema, migrations and
// demo data are read from the checkout root, as from src/.
import { cpSync, rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
rmSync(path.join(root, 'dist'), { recursive: true, force: true })
execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
cpSync(path.join(root, 'src/graphql/operations'), path.join(root, 'dist/graphql/operations'), { recursive: true, filter: (f) => !f.endsWith('.ts') })
console.log('built dist/: node dist/server.js (the service), node dist/cli/run.js (the CLI)')
