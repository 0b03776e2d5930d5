/*
 * What the schema gate reports: one change between two versions of a contract, with how much it can
 * hurt a client that coded against the old one (the levels of @graphql-inspector, used for REST too).
 */

export type Level = 'BREAKING' | 'DANGEROUS' | 'NON_BREAKING'

export interface SchemaChange {
  level: Level
  /** Where: a GraphQL schema coordinate (Order.retailerName) or a REST location (POST /v2/… 200 data.failed). */
  path: string
  message: string
}

export const LEVEL_NAMES: Record<Level, string> = { BREAKING: 'breaking', DANGEROUS: 'dangerous', NON_BREAKING: 'safe' }
