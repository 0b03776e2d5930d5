import { readdirSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { ERROR_AREAS, type ErrorArea, type TableSpec } from './error-areas.js'
import { code, page, table } from './markdown.js'
import { exampleArguments, shapeOf, TextSources, type Shape } from './text-shapes.js'

/*
 * docs/api/error-codes.md from the texts tables (src/errors.ts and each feature's texts): per area of the
 * API, every code with its HTTP status and its message, and the texts without a code of their own. The
 * tables are imported and read as the service reads them; a text with values is shown with placeholders
 * (text-shapes.ts).
 */

export const ERROR_CODES_PAGE = 'docs/api/error-codes.md'

/** A texts file's exports, by name. */
export type Module = Readonly<Record<string, unknown>>
/** Each texts file's module, by its path from the repository's root. */
export type Modules = ReadonlyMap<string, Module>

export interface CodedRow { code: string, status: string, message: string }
export interface OtherText { name: string, message: string }
export interface AreaTexts { area: ErrorArea, files: string[], rows: CodedRow[], others: OtherText[] }

type Text = string | ((...args: never[]) => string)
interface CodedError { code: string, statusCode?: number, message: string }
interface ItemError { code: string, text: string }

function filesOf (spec: TableSpec): string { return spec.file }

/** Every file the areas read. */
export function areaFiles (areas: readonly ErrorArea[] = ERROR_AREAS): string[] {
  return [...new Set(areas.flatMap((a) => a.tables.map(filesOf)))]
}

/** The texts files of src/: each must have every table named by an area. */
export function textsFiles (root: string): string[] {
  return readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /(?:^|[/-])texts\.ts$/.test(f.split(path.sep).join('/')))
    .map((f) => `src/${f.split(path.sep).join('/')}`)
    .sort()
}

export async function loadModules (root: string, files: readonly string[]): Promise<Modules> {
  const modules = new Map<string, Module>()
  for (const file of files) modules.set(file, await import(pathToFileURL(path.join(root, file)).href) as Module)
  return modules
}

function exported<T> (modules: Modules, file: string, name: string): T {
  const value = modules.get(file)?.[name]
  if (value === undefined) throw new Error(`${file} exports no ${name} (scripts/docs/error-areas.ts names it)`)
  return value as T
}

/** How a shape reads in a table cell. */
function message (shape: Shape): string {
  const texts = shape.texts.map(code).join('<br>')
  return shape.example === undefined ? texts : `${texts} (written with ${shape.example})`
}

type Entry<R> = R | ((...args: never[]) => R)

/** The texts files' tables, read entry by entry. */
class Tables {
  constructor (private readonly modules: Modules, private readonly sources: TextSources) {}

  entries<R> (file: string, name: string): Array<[string, Entry<R>]> {
    return Object.entries(exported<Record<string, Entry<R>>>(this.modules, file, name))
  }

  /** A table of codes, by key. */
  codes (file: string, name: string): Array<[string, string]> {
    return Object.entries(exported<Record<string, string>>(this.modules, file, name))
  }

  keys (file: string, name: string): Set<string> {
    return new Set(Object.keys(exported<object>(this.modules, file, name)))
  }

  /** An entry's text: fixed, or a function of its values shown with placeholders. */
  shape<R> (file: string, name: string, key: string, entry: Entry<R>, read: (r: R) => string): Shape {
    if (typeof entry !== 'function') return { texts: [read(entry)] }
    const make = entry as (...args: unknown[]) => R
    return shapeOf((args) => read(make(...args)), this.sources.parameters(file, name, key))
  }

  /** An entry's result with example values: its code and status do not depend on them. */
  sample<R> (file: string, name: string, key: string, entry: Entry<R>): R {
    if (typeof entry !== 'function') return entry
    return (entry as (...args: unknown[]) => R)(...exampleArguments(this.sources.parameters(file, name, key)))
  }
}

const statusOf = (error: CodedError): string => String(error.statusCode ?? '')

export function readArea (area: ErrorArea, modules: Modules, sources: TextSources): AreaTexts {
  const tables = new Tables(modules, sources)
  const rows: CodedRow[] = []
  const others: OtherText[] = []
  // Texts tables that coded rows draw on, and the keys they used: the rest is listed after the codes.
  const drawn: Array<{ file: string, name: string, used: Set<string> }> = []
  const itemRows = (file: string, name: string, status: string): CodedRow[] =>
    tables.entries<ItemError>(file, name).map(([key, entry]) => ({
      code: tables.sample(file, name, key, entry).code,
      status,
      message: message(tables.shape(file, name, key, entry, (e) => e.text))
    }))
  const textOf = (file: string, name: string, key: string, text: Text): string =>
    message(tables.shape<string>(file, name, key, text, (t) => t))

  for (const spec of area.tables) {
    switch (spec.kind) {
      case 'errors':
        for (const E of Object.values(exported<Record<string, new () => CodedError>>(modules, spec.file, spec.name))) {
          const error = new E()
          let n = 0
          rows.push({ code: error.code, status: statusOf(error), message: code(error.message.replace(/%s/g, () => `{${++n}}`)) })
        }
        break
      case 'factories': {
        const made = new Set<string>()
        for (const [key, make] of tables.entries<CodedError>(spec.file, spec.name)) {
          const error = tables.sample(spec.file, spec.name, key, make)
          const shape = tables.shape(spec.file, spec.name, key, make, (e) => e.message)
          made.add(error.code)
          rows.push({ code: error.code, status: statusOf(error), message: message(shape) })
        }
        if (spec.texts !== undefined) {
          drawn.push({ file: spec.file, name: spec.texts, used: tables.keys(spec.file, spec.name) })
        }
        // A code of the table that no factory makes is listed too, without a status or message.
        const codes = spec.codes === undefined ? [] : tables.codes(spec.file, spec.codes)
        for (const [, c] of codes) if (!made.has(c)) rows.push({ code: c, status: '', message: '—' })
        break
      }
      case 'coded': {
        const texts = exported<Record<string, Text>>(modules, spec.file, spec.texts)
        // A code sent with an item's text (the status update's invalid status) shows that item's text.
        const items = area.tables.flatMap((s) => s.kind === 'items' ? itemRows(s.file, s.name, '') : [])
        for (const [key, c] of tables.codes(spec.file, spec.codes)) {
          const text = texts[key] === undefined
            ? items.find((r) => r.code === c)?.message ?? '—'
            : textOf(spec.file, spec.texts, key, texts[key])
          rows.push({ code: c, status: spec.status, message: text })
        }
        drawn.push({ file: spec.file, name: spec.texts, used: tables.keys(spec.file, spec.codes) })
        break
      }
      case 'items':
        rows.push(...itemRows(spec.file, spec.name, spec.status))
        break
      case 'texts': {
        const value = exported<string | Record<string, Text>>(modules, spec.file, spec.name)
        const entries = typeof value === 'string'
          ? [{ name: spec.name, message: code(value) }]
          : Object.entries(value).map(([key, text]) => ({ name: `${spec.name}.${key}`, message: textOf(spec.file, spec.name, key, text) }))
        for (const entry of entries) {
          if (spec.code === undefined) others.push(entry)
          else rows.push({ code: spec.code, status: spec.status ?? '', message: entry.message })
        }
        break
      }
    }
  }
  for (const { file, name, used } of drawn) {
    for (const [key, text] of Object.entries(exported<Record<string, Text>>(modules, file, name))) {
      if (!used.has(key)) others.push({ name: `${name}.${key}`, message: textOf(file, name, key, text) })
    }
  }
  return { area, files: areaFiles([area]), rows, others }
}

/** A texts table: an object of texts, text functions, item errors or error classes (not a limit or a list). */
function isTextsTable (value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return false
  const values = Object.values(value)
  return values.length > 0 && values.every((v) => typeof v === 'string' || typeof v === 'function' ||
    (typeof v === 'object' && v !== null && 'code' in v && 'text' in v))
}

/** Tables of the texts files that no area names: each would be missing from the page. */
export function unnamedTables (modules: Modules, files: readonly string[],
  areas: readonly ErrorArea[] = ERROR_AREAS): string[] {
  const named = new Set(areas.flatMap((a) => a.tables.flatMap((s) => {
    const names = s.kind === 'coded' ? [s.codes, s.texts] : s.kind === 'factories' ? [s.name, s.texts, s.codes] : [s.name]
    return names.filter((n): n is string => n !== undefined).map((n) => `${s.file}#${n}`)
  })))
  return files.flatMap((file) => Object.entries(modules.get(file) ?? {})
    .filter(([name, value]) => isTextsTable(value) && !named.has(`${file}#${name}`))
    .map(([name]) => `${file}#${name}`))
}

export function errorCodesPage (areas: readonly AreaTexts[]): string {
  const blocks = [
    '# Error codes and messages',
    'Every code a client can branch on and every text the service writes, area by area, as the texts tables ' +
      'hold them. `{name}` stands for a value the message names (`{field}`: the field\'s path in the row, ' +
      '`{index}`: a row\'s position from 0, `{i}`: an element\'s position in its list; `{1}`, `{2}`: what an error is given, in ' +
      'order); each message is exact otherwise. ' +
      'Where codes appear and how to read them: [errors](errors.md). GraphQL\'s own codes are listed there too.'
  ]
  for (const { area, files, rows, others } of areas) {
    blocks.push(`## ${area.title}`, `${area.about} From ${files.map(code).join(', ')}.`)
    blocks.push(table(['Code', 'HTTP', 'Message'], rows.map((r) => [code(r.code), r.status, r.message])))
    if (others.length > 0) {
      blocks.push('Its other texts (answers that succeed, and texts sent with one of the codes above):')
      blocks.push(table(['Text', 'Message'], others.map((o) => [code(o.name), o.message])))
    }
  }
  return page(['the texts tables (`src/errors.ts` and each feature\'s texts)'], blocks)
}

/** The page from the repository at `root`; throws when a texts table is named by no area. */
export async function errorCodes (root: string, areas: readonly ErrorArea[] = ERROR_AREAS): Promise<string> {
  const files = [...new Set([...areaFiles(areas), ...textsFiles(root)])]
  const modules = await loadModules(root, files)
  const unnamed = unnamedTables(modules, files, areas)
  if (unnamed.length > 0) {
    throw new Error(`texts tables that no area of scripts/docs/error-areas.ts names: ${unnamed.join(', ')}`)
  }
  const sources = new TextSources(root, areaFiles(areas))
  return errorCodesPage(areas.map((a) => readArea(a, modules, sources)))
}
