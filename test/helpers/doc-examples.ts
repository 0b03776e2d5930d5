// The docs' examples, run: each fenced sh or http block of README.md and docs/**/*.md that calls the service,
// in page order, with the answer the page shows after it (docs/develop/tests.md, "Examples in the docs").
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { runCli } from '../../src/cli/main.js'
import { runningServer, stopByPid } from '../../src/db/embedded.js'
import { loadDemo } from '../../src/demo.js'
import { build, type TestDatabase } from './build.js'
import { eventually } from './eventually.js'
import { freePort, ready, ROOT } from './server-process.js'

/*
 * The rule for which blocks run: a block is an example when one of its commands calls the service, that is
 * `curl` to http://localhost:3000 or `npx order-exchange …`, and every `http` block is one. Other blocks
 * (`npm ci`, `podman build`, psql on an operator's server, an `export` for the client's CLI) are skipped and
 * counted. An example runs whole: each of its commands must be one the runner knows (below), else it fails
 * naming its page and line, so a page cannot show a command that was never run.
 *
 * The shell is read as the pages write it: single and double quotes, `$VAR` and `${VAR}`, `VAR=$(…)`, `\` at a
 * line's end, `#` comments, `;` and `&&`, `|`, `>`/`>>` and quoted here-documents (`<<'JSON'`). The commands:
 * `npx order-exchange …` (npx itself beside `npm start`; elsewhere the CLI's own entry in this process, on the
 * service's database), `curl` (the options the pages use, sent with fetch to the service wherever it listens),
 * `cat` and `node -e` (run in the checkout's folder, as the pages say). Files an example writes
 * (`cat > rows.json`) go to a scratch folder, not into the checkout; `@rows.json` reads them from there.
 *
 * An answer is the first ```json block after the example, before any other fenced block or heading: one JSON
 * value per `curl` whose output reaches the terminal, in order. It must equal what came back up to what
 * differs on every run (normalize()); an example with no answer shown must get a 2xx without GraphQL errors
 * for each request and exit 0 from each CLI command.
 */

export const SERVICE_URL = 'http://localhost:3000'

/** Where `http://localhost:3000` is for a page's run, and how its CLI reaches the same database. */
export interface DocService {
  baseUrl: string
  /** `npx order-exchange <args>` as the page's reader runs it beside this service. */
  cli: (args: string[]) => Promise<{ code: number, stdout: string, stderr: string }>
  /** The scratch folder for the files examples write. */
  dir: string
}

export interface Example {
  page: string
  /** The opening fence's line. */
  line: number
  lang: 'sh' | 'http'
  text: string
  answer?: { line: number, text: string }
}

export interface Skipped { page: string, line: number, why: string }

export interface SentRequest { method: string, path: string, status: number, body: unknown }

export interface ExampleRun {
  example: Example
  /** `page:line` of the example. */
  where: string
  requests: SentRequest[]
  /** Why it could not run, or which request or command failed, with its page and line. */
  problem?: string
  /** What came back (one value per curl that printed to the terminal) and what the page shows, normalized. */
  got?: unknown[]
  want?: unknown[]
}

/* ------------------------------------------------------------------ pages and blocks */

/** README.md, then every page under docs/, in path order. */
export function docPages (): string[] {
  const pages = ['README.md']
  const walk = (dir: string): void => {
    for (const name of readdirSync(path.join(ROOT, dir)).sort()) {
      const rel = `${dir}/${name}`
      if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel)
      else if (name.endsWith('.md')) pages.push(rel)
    }
  }
  walk('docs')
  return pages
}

type Item = { kind: 'fence', lang: string, line: number, text: string } | { kind: 'heading', line: number }

/** Fenced blocks (indented ones inside lists too, their indent removed) and headings, in page order. */
function items (text: string): Item[] {
  const out: Item[] = []
  let open: { lang: string, line: number, indent: number, body: string[] } | null = null
  text.split('\n').forEach((raw, i) => {
    if (open) {
      if (/^\s*```\s*$/.test(raw)) {
        out.push({ kind: 'fence', lang: open.lang, line: open.line, text: open.body.map((l) => `${l}\n`).join('') })
        open = null
      } else open.body.push(raw.slice(Math.min(open.indent, raw.length - raw.trimStart().length)))
      return
    }
    const fence = /^(\s*)```(\S*)/.exec(raw)
    if (fence) open = { lang: fence[2]!, line: i + 1, indent: fence[1]!.length, body: [] }
    else if (/^#{1,6} /.test(raw)) out.push({ kind: 'heading', line: i + 1 })
  })
  return out
}

/** A page's examples, each with the answer shown after it, and its sh blocks that call no service. */
export function readPage (page: string,
  text = readFileSync(path.join(ROOT, page), 'utf8')): { examples: Example[], skipped: Skipped[] } {
  const examples: Example[] = []
  const skipped: Skipped[] = []
  const all = items(text)
  all.forEach((item, i) => {
    if (item.kind !== 'fence' || (item.lang !== 'sh' && item.lang !== 'http')) return
    if (item.lang === 'sh') {
      const why = notAnExample(item.text)
      if (why !== null) { skipped.push({ page, line: item.line, why }); return }
    }
    const next = all[i + 1]
    const answer = next?.kind === 'fence' && next.lang === 'json' ? { line: next.line, text: next.text } : undefined
    examples.push({ page, line: item.line, lang: item.lang, text: item.text, answer })
  })
  return { examples, skipped }
}

/** Null when the sh block calls the service; else why it is skipped (the commands it runs instead). */
function notAnExample (text: string): string | null {
  let script: Script
  try {
    script = parse(text)
  } catch (err) {
    // A block the runner cannot read is still an example if it names the service: it then fails, at its line.
    if (/http:\/\/localhost:3000|npx order-exchange/.test(text)) return null
    return `not shell the runner reads (${(err as Error).message})`
  }
  const commands = allCommands(script)
  if (commands.some(callsService)) return null
  // Named by the command itself, past any VAR=value before it.
  const names = commands.map((c) => c.words.map(literal).find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w ?? '')) ?? '?')
  return `calls no service: ${[...new Set(names)].join(', ')}`
}

/* ------------------------------------------------------------------ the shell, read */

type Part = { lit: string } | { var: string } | { sub: Script }
type Word = Part[]
interface Command {
  /** The line of the block (from 0) the command starts on. */
  line: number
  words: Word[]
  out?: { append: boolean, to: Word }
  heredoc?: string
}
/** Commands joined by `|`. */
type Pipeline = Command[]
/** Pipelines run one after the other (newline, `;`, `&&`: the runner stops at the first failure anyway). */
type Script = Pipeline[]

class ShellSyntax extends Error {
  constructor (message: string, readonly line: number) { super(message) }
}

/** The literal text of a word, or undefined when it has an expansion. */
function literal (word: Word | undefined): string | undefined {
  if (!word || !word.every((p) => 'lit' in p)) return undefined
  return word.map((p) => (p as { lit: string }).lit).join('')
}

function allCommands (script: Script): Command[] {
  return script.flat().flatMap((c) => [c, ...c.words.flat().flatMap((p) => 'sub' in p ? allCommands(p.sub) : [])])
}

function callsService (command: Command): boolean {
  const words = command.words.map(literal)
  if (words[0] === 'npx' && words[1] === 'order-exchange') return true
  return words[0] === 'curl' && words.some((w) => w?.startsWith(`${SERVICE_URL}/`) === true)
}

function parse (src: string): Script {
  const lineAt = (i: number): number => src.slice(0, i).split('\n').length - 1
  let i = 0

  const name = (): string => {
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))
    if (!m) throw new ShellSyntax(`a lone $ at ${JSON.stringify(src.slice(i - 1, i + 20))}`, lineAt(i))
    i += m[0].length
    return m[0]
  }
  /** After `$`: `$(…)`, `${NAME}` or `$NAME`. */
  const expansion = (): Part => {
    if (src[i] === '(') {
      i++
      const sub = script(true)
      if (src[i] !== ')') throw new ShellSyntax('$( without its )', lineAt(i))
      i++
      return { sub }
    }
    if (src[i] === '{') {
      i++
      const v = name()
      if (src[i] !== '}') throw new ShellSyntax('only a name goes in braces after $', lineAt(i))
      i++
      return { var: v }
    }
    return { var: name() }
  }

  const word = (inSub: boolean): Word => {
    const parts: Part[] = []
    const lit = (s: string): void => {
      const last = parts.at(-1)
      if (last && 'lit' in last) last.lit += s
      else parts.push({ lit: s })
    }
    while (i < src.length) {
      const c = src[i]!
      if (' \t\n;&|<>'.includes(c) || (c === ')' && inSub)) break
      if (c === '(' || c === ')' || c === '`') throw new ShellSyntax(`${c} is not read`, lineAt(i))
      if (c === '\\') {
        if (src[i + 1] !== '\n') lit(src[i + 1] ?? '')
        i += 2
      } else if (c === "'") {
        const close = src.indexOf("'", i + 1)
        if (close < 0) throw new ShellSyntax("a ' without its end", lineAt(i))
        lit(src.slice(i + 1, close))
        i = close + 1
      } else if (c === '"') {
        i++
        for (;;) {
          if (i >= src.length) throw new ShellSyntax('a " without its end', lineAt(i))
          const d = src[i]!
          if (d === '"') { i++; break }
          if (d === '\\' && '$`"\\\n'.includes(src[i + 1] ?? '')) {
            if (src[i + 1] !== '\n') lit(src[i + 1]!)
            i += 2
          } else if (d === '$') { i++; parts.push(expansion()) } else if (d === '`') {
            throw new ShellSyntax('` is not read: write $(…)', lineAt(i))
          } else { lit(d); i++ }
        }
        if (parts.length === 0) lit('')
      } else if (c === '$') { i++; parts.push(expansion()) } else { lit(c); i++ }
    }
    return parts
  }

  const script = (inSub: boolean): Script => {
    const pipelines: Script = []
    let pipeline: Pipeline = []
    let command: Command | null = null
    const heredocs: Array<{ command: Command, tag: string }> = []
    const endCommand = (): void => {
      if (command && command.words.length === 0) throw new ShellSyntax('a redirection without a command', command.line)
      if (command) pipeline.push(command)
      command = null
    }
    const endPipeline = (): void => {
      endCommand()
      if (pipeline.length > 0) pipelines.push(pipeline)
      pipeline = []
    }
    const current = (): Command => (command ??= { line: lineAt(i), words: [] })
    const blank = (): void => { while (src[i] === ' ' || src[i] === '\t') i++ }
    while (i < src.length) {
      const c = src[i]!
      if (c === ')' && inSub) break
      if (c === ' ' || c === '\t') { i++; continue }
      if (c === '\\' && src[i + 1] === '\n') { i += 2; continue }
      if (c === '#') { while (i < src.length && src[i] !== '\n') i++; continue }
      if (c === '\n' || c === ';') {
        if (c === '\n' && heredocs.length > 0) {
          // The here-documents of the line just ended: their lines up to the tag alone on a line.
          i++
          for (const h of heredocs.splice(0)) {
            const lines: string[] = []
            for (;;) {
              if (i >= src.length) throw new ShellSyntax(`the here-document ${h.tag} never ends`, h.command.line)
              const end = src.indexOf('\n', i)
              const line = src.slice(i, end < 0 ? src.length : end)
              i = end < 0 ? src.length : end + 1
              if (line === h.tag) break
              lines.push(`${line}\n`)
            }
            h.command.heredoc = lines.join('')
          }
        } else i++
        if (pipeline.length > 0 && !command && c === '\n') continue // `a |` then the next line: still the pipeline
        endPipeline()
        continue
      }
      if (c === '&') {
        if (src[i + 1] !== '&') throw new ShellSyntax('& (in the background) is not read', lineAt(i))
        i += 2
        endPipeline()
        continue
      }
      if (c === '|') {
        if (src[i + 1] === '|') throw new ShellSyntax('|| is not read', lineAt(i))
        i++
        if (!command) throw new ShellSyntax('| without a command before it', lineAt(i))
        endCommand()
        continue
      }
      if (c === '>') {
        const append = src[i + 1] === '>'
        const cmd = current()
        i += append ? 2 : 1
        blank()
        cmd.out = { append, to: word(inSub) }
        continue
      }
      if (c === '<') {
        if (src[i + 1] !== '<') throw new ShellSyntax('< (input from a file) is not read: write curl -d @file', lineAt(i))
        const cmd = current()
        i += 2
        blank()
        const quoted = src[i] === "'"
        const tag = literal(word(inSub))
        if (!quoted || !tag) throw new ShellSyntax("write a here-document's tag quoted (<<'JSON'): it is not expanded", cmd.line)
        heredocs.push({ command: cmd, tag })
        continue
      }
      current().words.push(word(inSub))
    }
    if (heredocs.length > 0) throw new ShellSyntax(`the here-document ${heredocs[0]!.tag} never starts`, heredocs[0]!.command.line)
    endPipeline()
    return pipelines
  }

  const result = script(false)
  if (i < src.length) throw new ShellSyntax(`${src[i]} is not read`, lineAt(i))
  return result
}

/* ------------------------------------------------------------------ the shell, run */

/** What stops an example: the message names the command's line. */
class ExampleFailure extends Error {
  constructor (message: string, readonly line: number) { super(message) }
}

interface Session {
  service: DocService
  vars: Map<string, string>
  requests: SentRequest[]
  /** What reached the terminal, in order, and which command printed it. */
  terminal: Array<{ command: string, text: string }>
}

async function runScript (script: Script, session: Session, capture: boolean): Promise<string> {
  let captured = ''
  for (const pipeline of script) {
    let stdin = ''
    for (const [n, command] of pipeline.entries()) {
      const out = await runCommand(command, session, stdin)
      if (n < pipeline.length - 1) stdin = out.stdout
      else if (capture) captured += out.stdout
      else if (out.stdout !== '') session.terminal.push({ command: out.name, text: out.stdout })
    }
  }
  return captured
}

async function expand (word: Word, session: Session, line: number): Promise<string> {
  let text = ''
  for (const part of word) {
    if ('lit' in part) text += part.lit
    else if ('var' in part) {
      const value = session.vars.get(part.var)
      if (value === undefined) throw new ExampleFailure(`$${part.var} is used before it is set`, line)
      text += value
    } else text += (await runScript(part.sub, session, true)).replace(/\n+$/, '')
  }
  return text
}

async function runCommand (command: Command, session: Session,
  stdin: string): Promise<{ name: string, stdout: string }> {
  const words: string[] = []
  for (const w of command.words) words.push(await expand(w, session, command.line))
  const assignments = words.map((w) => /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(w))
  if (assignments[0]) {
    if (!assignments.every(Boolean)) throw new ExampleFailure(`VAR=value before a command is not run: ${words.join(' ')}`, command.line)
    for (const a of assignments) session.vars.set(a![1]!, a![2]!)
    return { name: 'assignment', stdout: '' }
  }
  const input = command.heredoc ?? stdin
  const [name, ...args] = words
  let stdout: string
  if (name === 'npx' && args[0] === 'order-exchange') {
    const result = await session.service.cli(args.slice(1))
    if (result.code !== 0) throw new ExampleFailure(`${words.join(' ')} exited ${result.code}: ${result.stderr.trim()}`, command.line)
    stdout = result.stdout
  } else if (name === 'curl') stdout = await curl(args, input, session, command.line)
  else if (name === 'cat') stdout = args.length === 0 ? input : args.map((f) => readFileSync(path.resolve(session.service.dir, f), 'utf8')).join('')
  else if (name === 'node' && args[0] === '-e' && args.length === 2) stdout = await node(args[1]!, input, command.line)
  else throw new ExampleFailure(`a command the runner does not run: ${words.join(' ').slice(0, 80)}`, command.line)
  if (command.out) {
    const file = path.resolve(session.service.dir, await expand(command.out.to, session, command.line))
    if (command.out.append) appendFileSync(file, stdout)
    else writeFileSync(file, stdout)
    return { name: name!, stdout: '' }
  }
  return { name: name!, stdout }
}

function node (script: string, stdin: string, line: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, ['-e', script], { cwd: ROOT }, (err, stdout, stderr) => {
      if (err) reject(new ExampleFailure(`node -e failed: ${stderr.trim() || err.message}`, line))
      else resolve(stdout)
    })
    child.stdin!.end(stdin)
  })
}

/** curl's options the pages use; anything else fails rather than being sent differently from curl. */
async function curl (args: string[], stdin: string, session: Session, line: number): Promise<string> {
  let method: string | undefined
  let url: string | undefined
  const headers: Array<[string, string]> = []
  const data: string[] = []
  const value = (i: number): string => {
    if (args[i] === undefined) throw new ExampleFailure(`curl ${args[i - 1]} without its value`, line)
    return args[i]!
  }
  const payload = (option: string, text: string): string => {
    if (option === '--data-raw' || !text.startsWith('@')) return text
    const content = text === '@-' ? stdin : readFileSync(path.resolve(session.service.dir, text.slice(1)), 'utf8')
    // As curl does: -d @file drops the file's line breaks, --data-binary sends it byte for byte.
    return option === '--data-binary' ? content : content.replace(/[\r\n]/g, '')
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    if (/^-[sS]+$/.test(a) || a === '--silent' || a === '--show-error') continue
    if (a === '-X' || a === '--request') method = value(++i)
    else if (a === '-H' || a === '--header') {
      const header = value(++i)
      const colon = header.indexOf(':')
      if (colon < 1) throw new ExampleFailure(`curl -H ${JSON.stringify(header)}: not Name: value`, line)
      headers.push([header.slice(0, colon).trim(), header.slice(colon + 1).trim()])
    } else if (['-d', '--data', '--data-binary', '--data-raw'].includes(a)) data.push(payload(a, value(++i)))
    else if (!a.startsWith('-') && url === undefined) url = a
    else throw new ExampleFailure(`curl ${a}: an option the runner does not know`, line)
  }
  if (!url?.startsWith(`${SERVICE_URL}/`)) throw new ExampleFailure(`curl to ${url ?? 'nowhere'}: the examples call the service at ${SERVICE_URL}`, line)
  for (const [name, v] of headers) {
    // curl sends what is pasted; the service refuses a header that is not visible ASCII (an ellipsis: 400).
    if (!/^[\x20-\x7e]*$/.test(v)) throw new ExampleFailure(`header ${name}: ${v} is not whole (not visible ASCII)`, line)
  }
  if (data.length > 0 && !headers.some(([n]) => n.toLowerCase() === 'content-type')) {
    headers.push(['Content-Type', 'application/x-www-form-urlencoded']) // curl's own default for -d
  }
  return await send(session, method ?? (data.length > 0 ? 'POST' : 'GET'), url.slice(SERVICE_URL.length), headers,
    data.length > 0 ? data.join('&') : undefined, line)
}

async function send (session: Session, method: string, target: string, headers: Array<[string, string]>,
  body: string | undefined, line: number): Promise<string> {
  let res: Response
  try {
    res = await fetch(`${session.service.baseUrl}${target}`, { method, headers, body })
  } catch (err) {
    throw new ExampleFailure(`${method} ${target} did not get an answer: ${(err as Error).message}`, line)
  }
  const text = await res.text()
  let json: unknown = text
  try { json = JSON.parse(text) } catch {}
  session.requests.push({ method, path: target, status: res.status, body: json })
  return text
}

/** An http block: the request line, headers, a blank line, the body; `$VAR` from the page's shell. */
async function runHttp (text: string, session: Session): Promise<void> {
  const lines = text.replace(/\n$/, '').split('\n')
  const sub = (s: string, line: number): string => s.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, v: string) => {
    const value = session.vars.get(v)
    if (value === undefined) throw new ExampleFailure(`$${v} is used before it is set`, line)
    return value
  })
  const request = /^([A-Z]+) (\/\S*)(?: HTTP\/[\d.]+)?$/.exec(lines[0] ?? '')
  if (!request) throw new ExampleFailure('an http block starts with METHOD /path', 0)
  const headers: Array<[string, string]> = []
  let n = 1
  for (; n < lines.length && lines[n] !== ''; n++) {
    const m = /^([^:\s]+):\s*(.*)$/.exec(lines[n]!)
    if (!m) throw new ExampleFailure(`not a header: ${lines[n]}`, n)
    if (m[1]!.toLowerCase() !== 'host') headers.push([m[1]!, sub(m[2]!, n)])
  }
  const body = n < lines.length ? sub(lines.slice(n + 1).join('\n'), n + 1) : undefined
  const answer = await send(session, request[1]!, request[2]!, headers, body, 0)
  session.terminal.push({ command: 'curl', text: answer })
}

/* ------------------------------------------------------------------ answers */

/** The JSON values of a block, one after another (a value may span lines). */
function jsonValues (text: string): unknown[] {
  const values: unknown[] = []
  let depth = 0; let start = -1; let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    if (c === '{' || c === '[') { if (depth++ === 0) start = i } else if (c === '}' || c === ']') {
      if (--depth === 0) values.push(JSON.parse(text.slice(start, i + 1)))
    } else if (depth === 0 && !/\s/.test(c)) throw new Error(`${JSON.stringify(text.slice(i, i + 20))} is outside any JSON value`)
  }
  if (depth !== 0) throw new Error('a JSON value without its end')
  return values
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const SECRET = /^(whsec_|oxs_(test|live)_[a-z]{2}_)/

/**
 * What differs on every run, made the same on both sides: times, uuids, secrets (a page may shorten one to
 * `whsec_…`), and the cost bucket's `currentlyAvailable`, which refills with the clock between two requests.
 * Ids the service numbers itself (orders, events, sequences) are compared: each page runs on a fresh service.
 */
function normalize (value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (TIME.test(value)) return '<time>'
    if (UUID.test(value)) return '<uuid>'
    const secret = SECRET.exec(value)
    if (secret) return `${secret[0]}<secret>`
    return value
  }
  if (key === 'currentlyAvailable' && typeof value === 'number') return '<bucket>'
  if (Array.isArray(value)) return value.map((v) => normalize(v))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, k)]))
  }
  return value
}

/* ------------------------------------------------------------------ a page's run */

/** A page's examples, in order, on one service, sharing the shell's variables as one terminal would. */
export async function runExamples (examples: Example[],
  service: DocService): Promise<{ runs: ExampleRun[], vars: Map<string, string> }> {
  const vars = new Map<string, string>()
  const runs: ExampleRun[] = []
  for (const example of examples) {
    const session: Session = { service, vars, requests: [], terminal: [] }
    const run: ExampleRun = { example, where: `${example.page}:${example.line}`, requests: session.requests }
    const at = (line: number): string => `${example.page}:${example.line + 1 + line}`
    try {
      if (example.lang === 'http') await runHttp(example.text, session)
      else await runScript(parse(example.text), session, false)
    } catch (err) {
      // Anything else thrown (a file an example reads is missing) is the example's own failure too.
      const line = err instanceof ExampleFailure || err instanceof ShellSyntax ? err.line : -1
      run.problem = `${at(line)}: ${(err as Error).message}`
      runs.push(run)
      continue
    }
    const printed = session.terminal.filter((o) => o.command === 'curl').map((o) => {
      try { return normalize(JSON.parse(o.text)) } catch { return o.text }
    })
    if (example.answer) {
      run.got = printed
      try {
        run.want = jsonValues(example.answer.text).map((v) => normalize(v))
      } catch (err) {
        run.problem = `${example.page}:${example.answer.line}: the answer shown is not JSON: ${(err as Error).message}`
      }
    } else {
      const failed = session.requests.find((r) => r.status >= 300 ||
        (Array.isArray((r.body as { errors?: unknown })?.errors) && r.path.includes('graphql')))
      if (failed) {
        run.problem = `${run.where}: ${failed.method} ${failed.path} answered ${failed.status} and no answer is shown: ` +
          JSON.stringify(failed.body).slice(0, 300)
      }
    }
    runs.push(run)
  }
  return { runs, vars }
}

/** One assertion per example: it ran, and it answered as the page shows. */
export function assertExample (t: Test, run: ExampleRun): void {
  if (run.problem) t.fail(run.problem)
  else if (run.want) t.strictSame(run.got, run.want, `${run.where}: answers as shown at line ${run.example.answer!.line}`)
  else t.pass(`${run.where}: ran, every request answered 2xx`)
}

/* ------------------------------------------------------------------ services */

function scratch (t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'oxs-doc-examples-'))
  // The embedded PostgreSQL's user (postgres, when the tests run as root) must be able to enter it.
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function inProcessCli (env: Record<string, string>): DocService['cli'] {
  return async (args) => {
    let stdout = ''; let stderr = ''
    const code = await runCli(args, env, (line) => { stdout += `${line}\n` }, (line) => { stderr += `${line}\n` })
    return { code, stdout, stderr }
  }
}

/**
 * The app on a fresh database of its own, listening on a free port, as `npm start` configures it (rate limits
 * and the cost bucket on; no worker); with `demo`, the demo data a first `npm start` loads (src/demo.ts).
 */
export async function freshService (t: Test,
  options: { demo: boolean }): Promise<DocService & { database: TestDatabase }> {
  const { app, database, config } = await build(t, { RATE_LIMIT_ENABLED: 'true' })
  if (options.demo) await loadDemo(config, database)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return { baseUrl: `http://127.0.0.1:${port}`, cli: inProcessCli({ DATABASE_URL: database.url }), dir: scratch(t), database }
}

/**
 * `npm start` itself, as a fresh clone runs it: package.json's start script (it `exec`s node, so the child is
 * the server), no DATABASE_URL, so the embedded PostgreSQL under a new DATA_DIR with the demo data; its ports
 * free ones. The page's `npx order-exchange` is npx itself.
 */
export async function npmStart (t: Test): Promise<DocService & { output: () => string }> {
  const dir = scratch(t)
  const dataDir = path.join(dir, '.data')
  const port = await freePort()
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  const child: ChildProcess = spawn('sh', ['-c', start], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_PG_PORT: String(await freePort()),
      _TAPJS_PROCESSINFO_COVERAGE_: '0' // see server-process.ts
    }
  })
  let output = ''
  child.stdout!.on('data', (d) => { output += d })
  child.stderr!.on('data', (d) => { output += d })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    // SIGTERM stops the embedded server with the service; only if that failed is it stopped here.
    await Promise.race([exited, eventually(null, 'npm start to stop', () => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 30_000 }).catch(() => {})])
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await exited }
    const left = runningServer(path.join(dataDir, 'pg'))
    if (left) await stopByPid(left.pid)
  })
  await eventually(t, () => `npm start to be ready: ${output.slice(-500)}`, async () => {
    if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}: ${output}`)
    return await ready(port)
  }, { timeoutMs: 120_000, intervalMs: 200 })
  return { baseUrl: `http://127.0.0.1:${port}`, cli: npx(dataDir), dir, output: () => output }
}

/**
 * `npx order-exchange` itself, from the checkout's folder, as the README's reader types it beside `npm start`:
 * npm finds the package's own bin, which attaches to the running embedded server through DATA_DIR.
 */
function npx (dataDir: string): DocService['cli'] {
  return (args) => new Promise((resolve) => {
    execFile('npx', ['order-exchange', ...args], {
      cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATA_DIR: dataDir, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
    }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr: err && !stderr ? err.message : stderr })
    })
  })
}
