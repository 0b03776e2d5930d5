// Random GraphQL documents over the service's schema, reproducible from a seed.
import {
  getNamedType, isLeafType, isObjectType, type GraphQLField, type GraphQLObjectType, type GraphQLSchema
} from 'graphql'

/*
 * Random GraphQL documents over the service's schema, reproducible from a seed: random subsets of each
 * type's fields in random order, aliases, repeated fields with different sub-selections (merged), inline
 * and named fragments (nested), @skip/@include with literals and variables, both list queries with
 * inputs as literals or variables (including ones the input rules refuse), __typename anywhere, and now
 * and then a second operation or the `seller` field. For the pass-through's differential test.
 */

export class Random {
  private state: number
  constructor (seed: number) { this.state = seed >>> 0 }
  /** mulberry32 */
  next (): number {
    let t = (this.state = (this.state + 0x6D2B79F5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int (min: number, max: number): number { return min + Math.floor(this.next() * (max - min + 1)) }
  chance (p: number): boolean { return this.next() < p }
  pick<T> (items: readonly T[]): T { return items[Math.floor(this.next() * items.length)]! }
  shuffle<T> (items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!]
    }
    return out
  }
}

export interface RandomDocument { query: string, variables: Record<string, unknown>, operationName: string | null }

/** Values the inputs draw from: the data's own days and sync IDs, so filters match something. */
export interface InputPool {
  dates: string[]
  instants: string[]
  retailerSyncIds: string[]
  offerSyncIds: string[]
}

export function randomDocument (schema: GraphQLSchema, pool: InputPool, rand: Random): RandomDocument {
  return new Writer(schema, pool, rand).document()
}

class Writer {
  private readonly fragments: string[] = []
  private readonly variableDefinitions: string[] = []
  private readonly variables: Record<string, unknown> = {}
  private names = 0

  constructor (
    private readonly schema: GraphQLSchema,
    private readonly pool: InputPool,
    private readonly rand: Random
  ) {}

  private name (prefix: string): string { return `${prefix}${++this.names}` }

  document (): RandomDocument {
    const body = this.operationBody()
    let name = this.rand.chance(0.5) ? this.name('Q') : null
    const second = this.rand.chance(0.05)
    if (second && name === null) name = 'Main'
    const definitions = this.variableDefinitions.length ? `(${this.variableDefinitions.join(', ')})` : ''
    const head = name !== null || definitions !== '' ? `query${name !== null ? ' ' + name : ''}${definitions} ` : ''
    const operations = [`${head}${body}`]
    let operationName: string | null = name !== null && this.rand.chance(0.3) ? name : null
    if (second) {
      // A second operation: operationName picks which one runs.
      operations.push('query Other { __typename }')
      operationName = this.rand.chance(0.8) ? name : 'Other'
    }
    return { query: [...operations, ...this.fragments].join('\n'), variables: this.variables, operationName }
  }

  private operationBody (): string {
    const query = this.schema.getQueryType()!
    const items: string[] = []
    const roots = this.rand.pick([['orders'], ['orders'], ['orders'], ['outstandingShipments'], ['outstandingShipments'], ['orders', 'outstandingShipments'], ['orders', 'orders']])
    for (const root of this.rand.shuffle(roots)) items.push(this.rootField(query.getFields()[root]!))
    if (this.rand.chance(0.15)) items.splice(this.rand.int(0, items.length), 0, this.alias() + '__typename')
    if (this.rand.chance(0.04)) items.push(`${this.alias()}seller { name status }`)
    return `{ ${items.join(' ')} }`
  }

  private alias (): string { return this.rand.chance(0.3) ? `${this.name('a')}: ` : '' }

  private rootField (field: GraphQLField<unknown, unknown>): string {
    const input = field.name === 'orders' ? this.orderInput() : this.outstandingInput()
    let args = ''
    if (input !== undefined) {
      if (this.rand.chance(0.5)) {
        const variable = this.name('in')
        this.variableDefinitions.push(`$${variable}: ${field.name === 'orders' ? 'OrderListInput' : 'OutstandingShipmentListInput'}`)
        this.variables[variable] = input
        args = `(input: $${variable})`
      } else {
        args = `(input: ${literal(input)})`
      }
    }
    // A root field repeated without an alias would have to repeat its arguments too; give each its own key.
    const alias = `${this.name(field.name === 'orders' ? 'o' : 's')}: `
    return `${alias}${field.name}${args}${this.directive()} ${this.selection(getNamedType(field.type) as GraphQLObjectType, 0)}`
  }

  private orderInput (): Record<string, unknown> | null | undefined {
    if (this.rand.chance(0.05)) return undefined
    if (this.rand.chance(0.03)) return null
    const input: Record<string, unknown> = {}
    this.window(input)
    if (this.rand.chance(0.2)) input.fromDate = this.rand.pick(this.pool.dates)
    if (this.rand.chance(0.2)) input.toDate = this.rand.pick(this.pool.dates)
    if (this.rand.chance(0.15)) input.updatedSince = this.rand.pick(this.pool.instants)
    if (this.rand.chance(0.03)) input.fromDate = this.rand.pick(['2026-02-30', 'yesterday', ''])
    return input
  }

  private outstandingInput (): Record<string, unknown> | null | undefined {
    if (this.rand.chance(0.05)) return undefined
    const input: Record<string, unknown> = {}
    this.window(input)
    if (this.rand.chance(0.25)) input.retailerSyncId = this.rand.pick(this.pool.retailerSyncIds)
    if (this.rand.chance(0.15)) input.offerSyncId = this.rand.pick(this.pool.offerSyncIds)
    if (this.rand.chance(0.02)) input.retailerSyncId = ''
    return input
  }

  /** Small pages (the test runs thousands), now and then past the end, a null or a refused value. */
  private window (input: Record<string, unknown>): void {
    if (this.rand.chance(0.85)) input.limit = this.rand.pick([1, 2, 3, 5, 8])
    if (this.rand.chance(0.5)) input.page = this.rand.pick([1, 1, 2, 3, 40])
    if (this.rand.chance(0.05)) input.page = null
    if (this.rand.chance(0.03)) input.limit = this.rand.pick([0, -1])
  }

  /** `@skip`/`@include`, now and then, with a literal or a Boolean variable. */
  private directive (): string {
    if (!this.rand.chance(0.12)) return ''
    const which = this.rand.pick(['skip', 'include'])
    let condition: string
    if (this.rand.chance(0.6)) {
      const variable = this.name('b')
      const value = this.rand.chance(0.5)
      if (this.rand.chance(0.2)) {
        // A default instead of a value.
        this.variableDefinitions.push(`$${variable}: Boolean = ${String(value)}`)
      } else {
        this.variableDefinitions.push(`$${variable}: Boolean!`)
        this.variables[variable] = value
      }
      condition = `$${variable}`
    } else {
      condition = String(this.rand.chance(0.5))
    }
    return ` @${which}(if: ${condition})`
  }

  private selection (type: GraphQLObjectType, depth: number): string {
    return `{ ${this.items(type, depth).join(' ')} }`
  }

  private items (type: GraphQLObjectType, depth: number): string[] {
    const fields = Object.values(type.getFields())
    const chosen = this.rand.chance(0.15)
      ? this.rand.shuffle(fields)
      : this.rand.shuffle(fields).slice(0, this.rand.int(1, Math.min(fields.length, 5)))
    const items = chosen.map((field) => this.field(field, depth))
    if (this.rand.chance(0.15)) items.splice(this.rand.int(0, items.length), 0, `${this.alias()}__typename${this.directive()}`)
    // The same field again, unaliased: merged with the first (objects: both sub-selections).
    if (this.rand.chance(0.12)) {
      const again = this.rand.pick(chosen)
      items.push(this.field(again, depth, false))
    }
    if (this.rand.chance(0.15)) {
      const inner = this.items(type, depth)
      const on = this.rand.chance(0.7) ? ` on ${type.name}` : ''
      items.splice(this.rand.int(0, items.length), 0, `...${on}${this.directive()} { ${inner.join(' ')} }`)
    }
    if (this.rand.chance(0.12)) {
      const fragment = this.name('F')
      const inner = this.items(type, depth)
      this.fragments.push(`fragment ${fragment} on ${type.name} { ${inner.join(' ')} }`)
      items.splice(this.rand.int(0, items.length), 0, `...${fragment}${this.directive()}`)
      if (this.rand.chance(0.2)) items.push(`...${fragment}`)
    }
    return items
  }

  private field (field: GraphQLField<unknown, unknown>, depth: number, aliased = true): string {
    const named = getNamedType(field.type)
    const head = `${aliased ? this.alias() : ''}${field.name}${this.directive()}`
    if (isLeafType(named)) return head
    if (!isObjectType(named)) throw new Error(`unexpected type ${named.name}`)
    return `${head} ${this.selection(named, depth + 1)}`
  }
}

/** A JSON-like value as a GraphQL literal. */
function literal (value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'object') {
    return `{ ${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}: ${literal(v)}`).join(', ')} }`
  }
  return JSON.stringify(value)
}
