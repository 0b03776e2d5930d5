import { Kind, KindGuard, type TObject, type TSchema } from '@sinclair/typebox'
import { ConfigSchema } from '../../src/config.js'
import { code, page, table } from './markdown.js'

/*
 * docs/operate/configuration-reference.md from `ConfigSchema` (src/config.ts): every variable the service
 * reads, what values it takes, its default and its description, as the schema says them, so the table
 * cannot disagree with what the service accepts.
 */

export const CONFIGURATION_PAGE = 'docs/operate/configuration-reference.md'

/** What values a variable takes, in words, from its schema's kind and bounds. */
export function valuesOf (schema: TSchema): string {
  if (KindGuard.IsInteger(schema)) {
    const { minimum, maximum } = schema
    if (minimum !== undefined && maximum !== undefined) return `integer from ${minimum} to ${maximum}`
    if (minimum !== undefined) return `integer, at least ${minimum}`
    if (maximum !== undefined) return `integer, at most ${maximum}`
    return 'integer'
  }
  if (KindGuard.IsBoolean(schema)) return `${code('true')} or ${code('false')}`
  if (KindGuard.IsString(schema)) {
    const { minLength, pattern } = schema
    if (pattern !== undefined) return `text matching ${code(pattern)}`
    if (minLength !== undefined && minLength > 1) return `text of at least ${minLength} characters`
    return minLength === 1 ? 'non-empty text' : 'text'
  }
  if (KindGuard.IsLiteral(schema)) return code(String(schema.const))
  if (KindGuard.IsUnion(schema)) {
    const options = schema.anyOf.map(valuesOf)
    return options.length === 1 ? options[0]! : `one of ${options.join(', ')}`
  }
  throw new Error(`a configuration variable of kind ${String(schema[Kind])} has no wording in scripts/docs/configuration.ts`)
}

export function configurationPage (schema: TObject = ConfigSchema): string {
  const rows = Object.entries(schema.properties).map(([name, property]) => {
    const { default: fallback, description } = property as { default?: unknown, description?: string }
    if (description === undefined) throw new Error(`${name} has no description in ConfigSchema (src/config.ts)`)
    return [code(name), valuesOf(property), fallback === undefined ? 'unset' : code(String(fallback)), description]
  })
  return page(['`ConfigSchema` in `src/config.ts`'], [
    '# Configuration reference',
    'Every environment variable the service reads, in the order of its schema. A value the schema refuses ' +
      'stops the process at start with one line naming the variable; an empty value counts as unset. How to ' +
      'set up a deployment, and the variables the OpenTelemetry SDK and Node read, are on ' +
      '[configuration](configuration.md).',
    table(['Variable', 'Values', 'Default', 'Description'], rows)
  ])
}
