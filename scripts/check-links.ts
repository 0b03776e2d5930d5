import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

/*
 * The docs' link check (test/tooling/docs-links.test.ts runs it in CI; `npx tsx scripts/check-links.ts`
 * prints what it finds). The contract lives in this repository (docs/api/), so a reader of a clone must be
 * able to follow every reference. Three rules, over the files git knows (tracked, or new and not ignored):
 *
 * 1. No file cites the contract's old home outside the repository (the `shared` folder beside the checkout,
 *    or its spec pages by name).
 * 2. Every relative link of a Markdown file resolves to a file or folder, and its #anchor, when it points
 *    into a Markdown file, to a heading there.
 * 3. Every repository path written in backticks in Markdown prose or in a code comment (`src/errors.ts`,
 *    `test/…`, `docs/…`) exists.
 */

export interface Problem {
  file: string
  line: number
  message: string
}

/** Written so that this file does not match itself. */
const OUTSIDE_SPEC = [
  /\.\.\/shared\b/,
  /\bshared\/spec\b/,
  /\b(?:spec\/)?(?:order-exchange-service|decisions)\.md\b/,
  /\bspec\/platform\.md\b/
]

/** The top-level folders whose paths rule 3 checks when they are named in backticks. */
const ROOTS = ['src', 'test', 'docs', 'bench', 'scripts', 'packages', 'drizzle', 'deploy', 'patches', 'schema']
const REPO_PATH = new RegExp(`^(?:${ROOTS.join('|')})/[A-Za-z0-9_.@+-]+(?:/[A-Za-z0-9_.@+-]+)*/?$`)

/** Code files and how a comment starts in each (rule 3 reads only their comments). */
const COMMENT_STYLES: Array<{ ext: RegExp, comment: (line: string) => string | null }> = [
  { ext: /\.(?:ts|mts|cts|js|mjs|cjs)$/, comment: slashComment },
  { ext: /\.(?:sh|graphql|ya?ml|conf|ini|cfg)$|(?:^|\/)Dockerfile$/, comment: (line) => afterMarker(line, /(?:^|\s)#/) },
  { ext: /\.sql$/, comment: (line) => afterMarker(line, /(?:^|\s)--/) }
]

/** The comment part of a line of JavaScript or TypeScript: a `//` comment, or a line of a block comment. */
function slashComment (line: string): string | null {
  const trimmed = line.trimStart()
  if (trimmed.startsWith('*') || trimmed.startsWith('/*')) return trimmed
  return afterMarker(line, /(?:^|\s)\/\//)
}

function afterMarker (line: string, marker: RegExp): string | null {
  const m = marker.exec(line)
  return m === null ? null : line.slice(m.index + m[0].length)
}

/** The files git knows: tracked, or new and not ignored (a change not yet committed is checked too). */
export function repositoryFiles (root: string): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return [...new Set(out.split('\0').filter((f) => f !== ''))]
    .filter((f) => existsSync(path.join(root, f)) && statSync(path.join(root, f)).isFile())
    .sort()
}

export function checkLinks (root: string, files: string[] = repositoryFiles(root)): Problem[] {
  const problems: Problem[] = []
  const headings = new Map<string, Set<string>>()
  const anchorsOf = (file: string): Set<string> => {
    let known = headings.get(file)
    if (known === undefined) {
      known = anchors(readFileSync(path.join(root, file), 'utf8'))
      headings.set(file, known)
    }
    return known
  }
  for (const file of files) {
    const text = readText(path.join(root, file))
    if (text === null) continue
    const lines = text.split('\n')
    lines.forEach((line, i) => {
      if (OUTSIDE_SPEC.some((p) => p.test(line))) {
        problems.push({ file, line: i + 1, message: 'cites the contract outside this repository: cite its page under docs/api/ instead' })
      }
    })
    if (file.endsWith('.md')) {
      checkMarkdown(root, file, lines, anchorsOf, problems)
    } else {
      const style = COMMENT_STYLES.find((s) => s.ext.test(file))
      if (style === undefined) continue
      lines.forEach((line, i) => {
        const comment = style.comment(line)
        if (comment === null) return
        for (const span of codeSpans(comment)) checkPath(root, file, i + 1, span, problems)
      })
    }
  }
  return problems
}

/** Text files only: a file with a NUL byte in its first 8 KB is binary and has nothing to check. */
function readText (file: string): string | null {
  const bytes = readFileSync(file)
  return bytes.subarray(0, 8192).includes(0) ? null : bytes.toString('utf8')
}

function checkMarkdown (
  root: string, file: string, lines: string[], anchorsOf: (file: string) => Set<string>, problems: Problem[]
): void {
  let fence: string | null = null
  lines.forEach((line, i) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)
    if (opening !== null) {
      if (fence === null) fence = opening[1]!
      else if (opening[1]!.startsWith(fence)) fence = null
      return
    }
    if (fence !== null) return
    const prose = line.replace(/`[^`]*`/g, '``')
    for (const target of linkTargets(prose)) checkLink(root, file, i + 1, target, anchorsOf, problems)
    for (const span of codeSpans(line)) checkPath(root, file, i + 1, span, problems)
  })
}

/** The targets of inline links `[text](target "title")` and of reference definitions `[label]: target`. */
function linkTargets (prose: string): string[] {
  const targets: string[] = []
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]!)
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose)
  if (definition !== null) targets.push(definition[1]!)
  return targets
}

function checkLink (
  root: string, file: string, line: number, target: string, anchorsOf: (file: string) => Set<string>,
  problems: Problem[]
): void {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return // http:, https:, mailto:: not a file of this repository
  const [pathPart, anchor] = splitAnchor(target)
  const resolved = pathPart === ''
    ? file
    : path.posix.normalize(pathPart.startsWith('/') ? pathPart.slice(1) : path.posix.join(path.posix.dirname(file), pathPart))
  const absolute = path.join(root, resolved)
  if (resolved.startsWith('..') || !existsSync(absolute)) {
    problems.push({ file, line, message: `link to ${target}: ${resolved} does not exist` })
    return
  }
  if (anchor !== '' && resolved.endsWith('.md') && statSync(absolute).isFile() && !anchorsOf(resolved).has(anchor)) {
    problems.push({ file, line, message: `link to ${target}: ${resolved} has no heading #${anchor}` })
  }
}

function splitAnchor (target: string): [string, string] {
  const hash = target.indexOf('#')
  const withoutQuery = (s: string): string => s.replace(/\?.*$/, '')
  if (hash === -1) return [decodeURI(withoutQuery(target)), '']
  return [decodeURI(withoutQuery(target.slice(0, hash))), decodeURIComponent(target.slice(hash + 1))]
}

/** The contents of the `code spans` of a line. */
function codeSpans (text: string): string[] {
  return [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim())
}

/** A span that is a path of this repository (nothing else in it) must exist. */
function checkPath (root: string, file: string, line: number, span: string, problems: Problem[]): void {
  if (!REPO_PATH.test(span)) return
  if (existsSync(path.join(root, span))) return
  // A package's own folders, named from inside it (`src/…` in packages/client means packages/client/src/…).
  const pkg = /^packages\/[^/]+\//.exec(file)
  if (pkg !== null && existsSync(path.join(root, pkg[0], span))) return
  problems.push({ file, line, message: `names ${span}, which does not exist` })
}

/**
 * The anchors of a Markdown file's headings as GitHub makes them: the heading's text without its markup,
 * lower case, punctuation dropped, spaces as hyphens; a repeated one gets -1, -2, …
 */
export function anchors (markdown: string): Set<string> {
  const found = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | null = null
  for (const line of markdown.split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line)
    if (opening !== null) {
      if (fence === null) fence = opening[1]!
      else if (opening[1]!.startsWith(fence)) fence = null
      continue
    }
    if (fence !== null) continue
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading === null) continue
    const text = heading[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    found.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return found
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
  const problems = checkLinks(root)
  for (const p of problems) console.log(`${p.file}:${p.line}: ${p.message}`)
  console.log(problems.length === 0 ? 'links: every reference resolves' : `links: ${problems.length} problem(s)`)
  process.exitCode = problems.length === 0 ? 0 : 1
}
