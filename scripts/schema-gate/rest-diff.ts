import type { Level, SchemaChange } from './changes.js'

/*
 * Breaking-change detection for the REST contract (schema/rest.json: JSON Schema as TypeBox writes it).
 * What may change depends on which way data flows: a request schema says what the service accepts, so
 * accepting less breaks clients and accepting more does not; a response schema says what clients receive,
 * so removing a field or returning a new shape breaks them and adding a field does not. The path
 * parameters (params) and the query string (query) are requests too; an endpoint without them takes none,
 * and one without a request schema reads no body.
 */

type Schema = Record<string, unknown>
type Direction = 'request' | 'response'

interface Endpoint {
  method: string
  path: string
  params?: Schema
  query?: Schema
  request?: Schema
  responses: Record<string, Schema>
}
export interface RestContract { endpoints: Record<string, Endpoint> }

/** Parameters an endpoint does not take: adding an optional one is safe, a required one breaks. */
const NO_PARAMETERS: Schema = { type: 'object', properties: {} }

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems'] as const
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems'] as const

/** A union's branches, or the schema itself. */
function branches (schema: Schema): Schema[] {
  return Array.isArray(schema.anyOf) ? schema.anyOf as Schema[] : [schema]
}

/**
 * Which branch of the other side a branch corresponds to: a literal by its value, a titled schema by title, else
 * its type.
 */
function branchKey (schema: Schema): string {
  if ('const' in schema) return `value ${JSON.stringify(schema.const)}`
  if (typeof schema.title === 'string') return schema.title
  if (Array.isArray(schema.type)) return (schema.type as string[]).join('|')
  return typeof schema.type === 'string' ? schema.type : 'any value'
}

class Differ {
  readonly changes: SchemaChange[] = []

  add (level: Level, path: string, message: string): void {
    this.changes.push({ level, path, message })
  }

  node (before: Schema, after: Schema, path: string, direction: Direction): void {
    const old = new Map(branches(before).map((b) => [branchKey(b), b]))
    const now = new Map(branches(after).map((b) => [branchKey(b), b]))
    for (const [key, schema] of old) {
      const match = now.get(key)
      if (match) this.single(schema, match, path, direction)
      else if (direction === 'request') this.add('BREAKING', path, `no longer accepts ${key}`)
      else this.add('NON_BREAKING', path, `no longer returns ${key}`)
    }
    for (const key of now.keys()) {
      if (old.has(key)) continue
      if (direction === 'request') this.add('NON_BREAKING', path, `now also accepts ${key}`)
      // A new value of a set (an enum) is what GraphQL calls dangerous; a new shape breaks a parser.
      else this.add(key.startsWith('value ') ? 'DANGEROUS' : 'BREAKING', path, `may now return ${key}`)
    }
  }

  private single (before: Schema, after: Schema, path: string, direction: Direction): void {
    if ((before.description ?? null) !== (after.description ?? null)) this.add('NON_BREAKING', path, 'description changed')
    this.bounds(before, after, path, direction)
    for (const key of ['pattern', 'format'] as const) {
      if ((before[key] ?? null) !== (after[key] ?? null)) {
        this.add('DANGEROUS', path, `${key} changed from ${JSON.stringify(before[key] ?? null)} to ${JSON.stringify(after[key] ?? null)}`)
      }
    }
    if (before.items && after.items) this.node(before.items as Schema, after.items as Schema, `${path}[]`, direction)
    if (before.properties || after.properties) this.object(before, after, path, direction)
  }

  private bounds (before: Schema, after: Schema, path: string, direction: Direction): void {
    const tightened: string[] = []
    const loosened: string[] = []
    for (const key of [...LOWER_BOUNDS, ...UPPER_BOUNDS]) {
      const was = before[key] as number | undefined
      const is = after[key] as number | undefined
      if (was === is) continue
      const lower = (LOWER_BOUNDS as readonly string[]).includes(key)
      const tighter = was === undefined || (is !== undefined && (lower ? is > was : is < was))
      ;(tighter ? tightened : loosened).push(`${key} ${was ?? 'none'} → ${is ?? 'none'}`)
    }
    if (tightened.length > 0) this.add(direction === 'request' ? 'BREAKING' : 'NON_BREAKING', path, `narrower: ${tightened.join(', ')}`)
    if (loosened.length > 0) this.add(direction === 'request' ? 'NON_BREAKING' : 'DANGEROUS', path, `wider: ${loosened.join(', ')}`)
  }

  private object (before: Schema, after: Schema, path: string, direction: Direction): void {
    const oldProps = (before.properties ?? {}) as Record<string, Schema>
    const newProps = (after.properties ?? {}) as Record<string, Schema>
    const oldRequired = new Set((before.required ?? []) as string[])
    const newRequired = new Set((after.required ?? []) as string[])
    // "POST /v2/… 200 data.failed": a space after the route's request, params, query or status, dots below.
    const top = / (request|params|query)$/.test(path) || /\s\d{3}$/.test(path)
    const at = (name: string): string => top ? `${path} ${name}` : `${path}.${name}`
    for (const [name, schema] of Object.entries(oldProps)) {
      const match = newProps[name]
      if (!match) {
        this.add('BREAKING', at(name), direction === 'request' ? 'field no longer accepted' : 'field removed')
        continue
      }
      const wasRequired = oldRequired.has(name)
      const isRequired = newRequired.has(name)
      if (wasRequired !== isRequired) {
        const breaks = direction === 'request' ? isRequired : wasRequired
        this.add(breaks ? 'BREAKING' : 'NON_BREAKING', at(name), isRequired ? 'now required' : 'now optional')
      }
      this.node(schema, match, at(name), direction)
    }
    for (const name of Object.keys(newProps)) {
      if (name in oldProps) continue
      if (direction === 'request' && newRequired.has(name)) this.add('BREAKING', at(name), 'new required field')
      else this.add('NON_BREAKING', at(name), 'field added')
    }
  }
}

/** Every change from one REST contract to the next, endpoints matched by method and path. */
export function diffRest (before: RestContract, after: RestContract): SchemaChange[] {
  const differ = new Differ()
  const byRoute = (contract: RestContract): Map<string, Endpoint> =>
    new Map(Object.values(contract.endpoints).map((e) => [`${e.method} ${e.path}`, e]))
  const old = byRoute(before)
  const now = byRoute(after)
  for (const [route, endpoint] of old) {
    const match = now.get(route)
    if (!match) {
      differ.add('BREAKING', route, 'endpoint removed')
      continue
    }
    differ.node(endpoint.params ?? NO_PARAMETERS, match.params ?? NO_PARAMETERS, `${route} params`, 'request')
    differ.node(endpoint.query ?? NO_PARAMETERS, match.query ?? NO_PARAMETERS, `${route} query`, 'request')
    if (endpoint.request && match.request) differ.node(endpoint.request, match.request, `${route} request`, 'request')
    else if (endpoint.request) differ.add('NON_BREAKING', `${route} request`, 'body no longer read')
    else if (match.request) differ.add('BREAKING', `${route} request`, 'now requires a body')
    for (const [status, schema] of Object.entries(endpoint.responses)) {
      const answer = match.responses[status]
      if (answer) differ.node(schema, answer, `${route} ${status}`, 'response')
      else differ.add('NON_BREAKING', `${route} ${status}`, 'no longer answered')
    }
    for (const status of Object.keys(match.responses)) {
      if (!(status in endpoint.responses)) differ.add('DANGEROUS', `${route} ${status}`, 'new answer status')
    }
  }
  for (const route of now.keys()) {
    if (!old.has(route)) differ.add('NON_BREAKING', route, 'endpoint added')
  }
  return differ.changes
}
