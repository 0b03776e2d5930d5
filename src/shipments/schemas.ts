import { Type, type Static } from '@sinclair/typebox'
import { OutstandingShipmentRecord } from './sync-row.js'

/*
 * TypeBox schemas of the outstanding shipment sync's request and answer data (docs/api/shipments.md
 * "Outstanding shipment sync"). The route streams the body and checks rows one by one (sync-row.ts), so
 * the request schema documents the contract (and generates client types); the answer's is the route's
 * response schema.
 */

/** Examples of unmatched sync IDs reported per kind. */
export const UNMATCHED_EXAMPLES = 10

/** At most this many rows per request (docs/api/limits.md); more is a 400 that names the limit. */
export const MAX_SYNC_ROWS = 100_000

export const SyncRequestSchema = Type.Array(OutstandingShipmentRecord, {
  title: 'SyncRequest',
  minItems: 1,
  maxItems: MAX_SYNC_ROWS,
  description: 'Outstanding shipment records; each row is checked on its own and a bad row is reported by index'
})

export const RowErrorSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the row in the request array, from 0' }),
  error: Type.String({ description: 'Every broken field of the row, one sentence each' }),
  // Additive: the first broken field's code, for clients that branch on it (docs/api/shipments.md).
  code: Type.String({ description: 'ROW_NOT_OBJECT, FIELD_REQUIRED, INVALID_SYNC_ID, INVALID_QUANTITY or UNSTORABLE_TEXT' })
}, { title: 'RowError' })
export type RowError = Static<typeof RowErrorSchema>

export const UnmatchedSyncIdsSchema = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'Distinct sync IDs of the request that match nothing known' }),
  examples: Type.Array(Type.String(), { maxItems: UNMATCHED_EXAMPLES })
}, { title: 'UnmatchedSyncIds' })
export type UnmatchedSyncIds = Static<typeof UnmatchedSyncIdsSchema>

export const UnmatchedSchema = Type.Object({
  retailerSyncIds: UnmatchedSyncIdsSchema,
  shopSyncIds: UnmatchedSyncIdsSchema,
  offerSyncIds: UnmatchedSyncIdsSchema
}, { title: 'Unmatched', description: 'Reported only: such rows are stored anyway (the retailer may be synced later)' })
export type Unmatched = Static<typeof UnmatchedSchema>

export const SyncDataSchema = Type.Object({
  received: Type.Integer({ minimum: 0, description: 'Elements in the request, valid or not' }),
  inserted: Type.Integer({ minimum: 0 }),
  updated: Type.Integer({ minimum: 0 }),
  unchanged: Type.Integer({ minimum: 0, description: 'Keys whose stored quantity already had the sent value: not written' }),
  duplicates: Type.Integer({ minimum: 0, description: 'Valid rows superseded by a later row of the same key in the same request' }),
  failed: Type.Integer({ minimum: 0, description: 'Rows listed in errors' }),
  errors: Type.Array(RowErrorSchema),
  unmatched: UnmatchedSchema
}, { title: 'SyncData' })
export type SyncData = Static<typeof SyncDataSchema>
