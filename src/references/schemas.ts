import { Type, type Static } from '@sinclair/typebox'
import { SYNC_ID_MAX_LENGTH } from '../sync-id.js'
import { REFERENCE_TYPES } from './texts.js'

/*
 * TypeBox schemas of the references sync's request and answer data. The route streams the body and checks
 * rows one by one (reference-row.ts), so the request schema documents the contract (and generates client
 * types); the answer's is the route's response schema.
 */

/** At most this many rows per request (as the shipment sync); more is a 400 that names the limit. */
export const MAX_REFERENCE_ROWS = 100_000

export const ReferenceRowSchema = Type.Object({
  type: Type.Union(REFERENCE_TYPES.map((t) => Type.Literal(t)), { description: 'The kind of record the id names' }),
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'The marketplace id of the record, as the orders read shows it' }),
  syncId: Type.Union([
    Type.String({ minLength: 1, maxLength: SYNC_ID_MAX_LENGTH, description: 'No control characters' }),
    Type.Null()
  ], { description: 'The seller\'s own id for the record; null clears the mapping' })
}, { title: 'ReferenceRow', description: 'The seller\'s sync ID for one retailer, shop, item or offer' })

export const ReferencesRequestSchema = Type.Array(ReferenceRowSchema, {
  title: 'ReferencesRequest',
  minItems: 1,
  maxItems: MAX_REFERENCE_ROWS,
  description: 'Sync ID rows; each row is checked on its own and a refused row is reported by index. ' +
    'Uniqueness of a sync ID is checked on the result of the whole request, so one request may swap two sync IDs.'
})

export const ReferenceRowErrorSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the row in the request array, from 0' }),
  error: Type.String({ description: 'Why the row was refused; names the field' }),
  code: Type.String({
    description: 'ROW_NOT_OBJECT, FIELD_REQUIRED, INVALID_TYPE, INVALID_ID, INVALID_SYNC_ID, UNSTORABLE_TEXT, ' +
      'RECORD_NOT_FOUND, DUPLICATE_RECORD, DUPLICATE_SYNC_ID or SYNC_ID_TAKEN'
  })
}, { title: 'ReferenceRowError' })
export type ReferenceRowError = Static<typeof ReferenceRowErrorSchema>

export const MatchedSchema = Type.Object({
  retailers: Type.Integer({ minimum: 0, description: 'Stored outstanding shipment rows whose retailerSyncId matches a retailer now and did not before' }),
  shops: Type.Integer({ minimum: 0, description: 'The same for shopSyncId' }),
  offers: Type.Integer({ minimum: 0, description: 'The same for offerSyncId' })
}, { title: 'Matched', description: 'Outstanding shipment rows newly matched by this request\'s sync IDs (shipments carry no item sync ID)' })
export type Matched = Static<typeof MatchedSchema>

export const ReferencesDataSchema = Type.Object({
  received: Type.Integer({ minimum: 0, description: 'Elements in the request, valid or not' }),
  inserted: Type.Integer({ minimum: 0, description: 'Records that had no sync ID and now have one' }),
  updated: Type.Integer({ minimum: 0, description: 'Records whose sync ID changed, a cleared one (null) included' }),
  unchanged: Type.Integer({ minimum: 0, description: 'Records that already had the sent value: not written' }),
  failed: Type.Integer({ minimum: 0, description: 'Rows listed in errors: nothing of them was applied' }),
  errors: Type.Array(ReferenceRowErrorSchema),
  matched: MatchedSchema
}, { title: 'ReferencesData' })
export type ReferencesData = Static<typeof ReferencesDataSchema>
