import { diff } from '@graphql-inspector/core'
import { buildSchema } from 'graphql'
import type { SchemaChange } from './changes.js'

/*
 * GraphQL changes by @graphql-inspector/core, which classifies each (a removed field breaks, a new enum
 * value is dangerous, a new field is safe) with the same rules as its CLI.
 */

export async function diffGraphql (before: string, after: string): Promise<SchemaChange[]> {
  const changes = await diff(buildSchema(before), buildSchema(after))
  return changes.map((c) => ({ level: c.criticality.level as SchemaChange['level'], path: c.path ?? '(schema)', message: c.message }))
}
