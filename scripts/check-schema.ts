import { execFileSync } from 'node:child_process'
import { copyFile, mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { breakingSections, isListed } from './schema-gate/changelog.js'
import { LEVEL_NAMES, type Level, type SchemaChange } from './schema-gate/changes.js'
import { diffGraphql } from './schema-gate/graphql-diff.js'
import { diffRest, type RestContract } from './schema-gate/rest-diff.js'

/*
 * The schema gate (`npm run check:schema`, run by .ci/run). The published contract is the snapshot in
 * schema/published/: the GraphQL SDL and the REST schemas. Two checks:
 *
 * 1. The working contract (schema.graphql, schema/rest.json) against the snapshot: a breaking change fails;
 *    dangerous and safe changes are listed (they may be published with `npm run schema:publish`).
 * 2. Every move of the snapshot — each commit that changed schema/published/, and the uncommitted one —
 *    is diffed against the snapshot before it: each breaking change it made must be named (its path, as
 *    printed here) in a CHANGELOG.md section under a "Breaking" heading.
 *
 * So a breaking change passes only when it moves the snapshot and is written down for integrators.
 * `--root DIR` checks another checkout (the gate's own tests); `--publish` copies the working contract
 * into the snapshot.
 */

const FILES = { graphql: 'schema.graphql', rest: 'schema/rest.json' } as const
const PUBLISHED = { graphql: 'schema/published/schema.graphql', rest: 'schema/published/rest.json' } as const

interface Contract { graphql: string, rest: string }

async function diffContracts (before: Contract, after: Contract): Promise<SchemaChange[]> {
  return [
    ...await diffGraphql(before.graphql, after.graphql),
    ...diffRest(JSON.parse(before.rest) as RestContract, JSON.parse(after.rest) as RestContract)
  ]
}

function git (root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 })
  } catch {
    return null
  }
}

/** The snapshot as of a commit, or null when it did not exist there. */
function snapshotAt (root: string, commit: string): Contract | null {
  const graphql = git(root, ['show', `${commit}:${PUBLISHED.graphql}`])
  const rest = git(root, ['show', `${commit}:${PUBLISHED.rest}`])
  return graphql === null || rest === null ? null : { graphql, rest }
}

function print (title: string, changes: SchemaChange[], out: (line: string) => void): void {
  out(title)
  if (changes.length === 0) out('  no changes')
  for (const level of ['BREAKING', 'DANGEROUS', 'NON_BREAKING'] as Level[]) {
    const some = changes.filter((c) => c.level === level)
    if (some.length === 0) continue
    out(`  ${LEVEL_NAMES[level]} (${some.length}):`)
    for (const c of some) out(`    ${c.path}: ${c.message}`)
  }
}

export async function checkSchema (root: string, out: (line: string) => void = console.log): Promise<boolean> {
  const read = (file: string): Promise<string> => readFile(path.join(root, file), 'utf8')
  const working = { graphql: await read(FILES.graphql), rest: await read(FILES.rest) }
  const published = { graphql: await read(PUBLISHED.graphql), rest: await read(PUBLISHED.rest) }
  let ok = true

  // 1. Working contract against the published one.
  const pending = await diffContracts(published, working)
  print('schema gate: working contract (schema.graphql, schema/rest.json) against schema/published/', pending, out)
  const breaking = pending.filter((c) => c.level === 'BREAKING')
  if (breaking.length > 0) {
    ok = false
    out(`FAIL: ${breaking.length} breaking change(s) not in the published contract. Clients coded against /v2 would break.`)
    out('  Make the change additive instead (add, deprecate, keep the old), or publish it on purpose:')
    out('  `npm run schema:publish` and list each path above in CHANGELOG.md under a "Breaking" heading.')
  } else if (pending.length > 0) {
    out('  (not yet published: `npm run schema:publish` moves the snapshot)')
  }

  // 2. Every move of the snapshot: its breaking changes must be in the changelog.
  const changelog = breakingSections(await read('CHANGELOG.md').catch(() => ''))
  const moves: Array<{ label: string, before: Contract, after: Contract }> = []
  if (git(root, ['rev-parse', '--is-inside-work-tree']) === null) {
    out('snapshot history: not a git checkout; moves of the snapshot not checked')
  } else {
    const head = snapshotAt(root, 'HEAD')
    if (head && (head.graphql !== published.graphql || head.rest !== published.rest)) {
      moves.push({ label: 'uncommitted change to schema/published/', before: head, after: published })
    }
    const commits = (git(root, ['log', '--format=%H %s', '--', 'schema/published']) ?? '').split('\n').filter(Boolean)
    for (const line of commits) {
      const [commit, ...subject] = line.split(' ')
      const after = snapshotAt(root, commit!)
      const before = snapshotAt(root, `${commit}^`)
      if (after && before) moves.push({ label: `${commit!.slice(0, 8)} ${subject.join(' ')}`, before, after })
    }
  }
  let undocumented = 0
  for (const move of moves) {
    for (const change of (await diffContracts(move.before, move.after)).filter((c) => c.level === 'BREAKING')) {
      if (isListed(changelog, change.path)) continue
      undocumented++
      out(`FAIL: ${move.label}: breaking change ${change.path} (${change.message}) is not listed under a "Breaking" heading in CHANGELOG.md`)
    }
  }
  if (undocumented > 0) ok = false
  out(`snapshot history: ${moves.length} move(s) of schema/published/ checked, ${undocumented} undocumented breaking change(s)`)
  out(ok ? 'schema gate: pass' : 'schema gate: FAIL')
  return ok
}

export async function publish (root: string): Promise<void> {
  await mkdir(path.join(root, 'schema/published'), { recursive: true })
  await copyFile(path.join(root, FILES.graphql), path.join(root, PUBLISHED.graphql))
  await copyFile(path.join(root, FILES.rest), path.join(root, PUBLISHED.rest))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { root: { type: 'string' }, publish: { type: 'boolean' } } })
  const root = path.resolve(values.root ?? path.join(path.dirname(new URL(import.meta.url).pathname), '..'))
  if (values.publish) {
    await publish(root)
    console.log('schema/published/ now holds the working contract; list any breaking change in CHANGELOG.md under "Breaking"')
  } else {
    process.exitCode = await checkSchema(root) ? 0 : 1
  }
}
