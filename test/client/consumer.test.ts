import { execFile } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import * as client from '@order-exchange/client'

/*
 * The package as a consumer gets it: a project outside it (test/fixtures/consumer) compiles against its
 * published entry points and declarations, and its browser entry point needs nothing of Node.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const exec = promisify(execFile)

t.test('a consumer project compiles against the package, and the types refuse what the service would', async (t) => {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc')
  const fixture = path.join(ROOT, 'test/fixtures/consumer/tsconfig.json')
  const { stdout } = await exec(process.execPath, [tsc, '-p', fixture]).catch((err: { stdout: string, stderr: string }) => {
    t.fail(`tsc failed:\n${err.stdout}${err.stderr}`)
    return { stdout: '' }
  })
  t.equal(stdout, '', 'no errors, and every @ts-expect-error line is an error')
  // The same file with the expectations removed must not compile: the types really do refuse those lines.
  const dir = path.join(ROOT, 'test/fixtures/consumer')
  const source = readFileSync(path.join(dir, 'consumer.ts'), 'utf8')
  const expected = (source.match(/^\s*\/\/ @ts-expect-error/gm) ?? []).length
  t.equal(expected, 4, 'four lines the types should refuse')
  const stripped = path.join(dir, `stripped-${process.pid}.ts`)
  const config = path.join(dir, `tsconfig-${process.pid}.json`)
  t.teardown(() => { rmSync(stripped, { force: true }); rmSync(config, { force: true }) })
  writeFileSync(stripped, source.split('\n').filter((l) => !/^\s*\/\/ @ts-expect-error/.test(l)).join('\n'))
  writeFileSync(config, JSON.stringify({ extends: './tsconfig.json', files: [path.basename(stripped)] }))
  const failed = await exec(process.execPath, [tsc, '-p', config]).then(() => null, (err: { stdout: string }) => err.stdout)
  t.ok(failed !== null, 'without the expectations it does not compile')
  t.equal((failed ?? '').match(/error TS/g)?.length, expected, `exactly those lines fail:\n${failed}`)
})

t.test('the browser entry point imports nothing of Node; the Node one adds the file checkpoint', async (t) => {
  const dist = path.join(ROOT, 'packages/client/dist')
  const seen = new Set<string>()
  const nodeImports: string[] = []
  const walk = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const spec = m[1] ?? m[2]!
      if (spec.startsWith('.')) walk(path.resolve(path.dirname(file), spec))
      else if (spec.startsWith('node:') || ['fs', 'path', 'http', 'https', 'stream', 'url', 'util'].includes(spec)) nodeImports.push(`${path.basename(file)}: ${spec}`)
    }
  }
  walk(path.join(dist, 'index.js'))
  t.ok(seen.size > 5, `${seen.size} modules reached from index.js`)
  t.same(nodeImports, [], 'fetch only')
  t.equal(typeof client.createClient, 'function')
  const node = await import('@order-exchange/client/node')
  t.equal(typeof node.FileCheckpointStore, 'function')
  t.equal(node.createClient, client.createClient, 'the Node entry point re-exports the rest')
})
