import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { anchors, checkLinks } from '../../scripts/check-links.js'

/*
 * The docs' link check (scripts/check-links.ts) on this repository, where it must find nothing, and on
 * small repositories of its own, where each planted break must be found: a link to a missing file or
 * heading, a path in backticks that does not exist, and a citation of the contract outside the repository.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The contract's old home, assembled so that this file does not cite it. */
const OUTSIDE = ['..', 'shared', 'spec', ['order-exchange-service', 'md'].join('.')].join('/')

/** A git repository holding `files` (untracked: the check reads what git would commit). */
function repository (t: Test, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-links-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  execFileSync('git', ['init', '-q'], { cwd: dir })
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    writeFileSync(path.join(dir, file), text)
  }
  return dir
}

const problemsOf = (dir: string): string[] => checkLinks(dir).map((p) => `${p.file}:${p.line}: ${p.message}`)

t.test('this repository: every link, anchor and path resolves, and nothing cites the contract outside it', async (t) => {
  t.same(problemsOf(ROOT), [])
})

t.test('a sound repository passes', async (t) => {
  const dir = repository(t, {
    'README.md': '# Demo\n\nSee [the API](docs/api/orders.md#reading-a-page) and `src/app.ts`.\n',
    'docs/api/orders.md': '# Orders\n\n## Reading a page\n\nBack to [the start](../../README.md).\n',
    'src/app.ts': '// Built as docs/api/orders.md says (`docs/api/orders.md`).\nexport {}\n'
  })
  t.same(problemsOf(dir), [])
})

t.test('a link to a missing file fails, naming the file and line', async (t) => {
  const dir = repository(t, { 'README.md': '# Demo\n\nRead [the guide](docs/guide.md) first.\n' })
  t.same(problemsOf(dir), ['README.md:3: link to docs/guide.md: docs/guide.md does not exist'])
})

t.test('a link to a heading that is not there fails; links in code blocks and to other sites are not read', async (t) => {
  const dir = repository(t, {
    'README.md': '# Demo\n\n[Limits](docs/limits.md#per-minute), [web](https://example.com/x.md)\n\n```md\n[not a link](nowhere.md)\n```\n',
    'docs/limits.md': '# Limits\n\n## Per hour\n'
  })
  t.same(problemsOf(dir), ['README.md:3: link to docs/limits.md#per-minute: docs/limits.md has no heading #per-minute'])
})

t.test('a path in backticks that does not exist fails, in a doc and in a code comment', async (t) => {
  const dir = repository(t, {
    'docs/layout.md': '# Layout\n\nErrors live in `src/errors.ts`.\n',
    'src/app.ts': '/*\n * The texts are in `src/texts.ts`.\n */\nexport const where = `src/where.ts`\n'
  })
  t.same(problemsOf(dir), [
    'docs/layout.md:3: names src/errors.ts, which does not exist',
    'src/app.ts:2: names src/texts.ts, which does not exist'
  ], 'a template literal in code is not a comment')
})

t.test('a citation of the contract outside the repository fails, in any file', async (t) => {
  const dir = repository(t, {
    'src/errors.ts': `// The texts of ${OUTSIDE} section 7.\nexport {}\n`,
    'schema/rest.json': `{"description": "One of the texts of ${OUTSIDE.split('/').at(-1)!}"}\n`
  })
  t.same(problemsOf(dir), [
    'schema/rest.json:1: cites the contract outside this repository: cite its page under docs/api/ instead',
    'src/errors.ts:1: cites the contract outside this repository: cite its page under docs/api/ instead'
  ])
})

t.test('anchors are made as GitHub makes them', async (t) => {
  t.same([...anchors('# Read orders: `POST /v2/graphql`\n## Limits & cost\n## Limits & cost\n```\n# not a heading\n```\n## `ORDER_PLACED`\n')],
    ['read-orders-post-v2graphql', 'limits--cost', 'limits--cost-1', 'order_placed'])
})
