import { itemErrors, type CodeOf, type ItemError } from '../item-error.js'
import { unstorableTextRule } from '../db/storable-text.js'
import { SYNC_ID_MAX_LENGTH } from '../sync-id.js'

/*
 * The references sync's texts, each written once with its code: the request-level ones (the message says
 * what was expected, as the shipment sync's do) and every per-row refusal. Each row text names the field
 * it is about; docs/api/references.md lists them.
 */

/** The kinds of record a seller maps, as the request names them. */
export const REFERENCE_TYPES = ['RETAILER', 'SHOP', 'ITEM', 'OFFER'] as const
export type ReferenceType = typeof REFERENCE_TYPES[number]

/** How a type is written in a sentence. */
const NOUN: Record<ReferenceType, string> = { RETAILER: 'retailer', SHOP: 'shop', ITEM: 'item', OFFER: 'offer' }

export const ReferenceText = {
  success: 'Sync IDs synced successfully',
  notAnArray: 'Request body must be a non-empty JSON array of sync ID rows',
  tooManyRows: (max: number, got: number) => `Too many sync ID rows: at most ${max} per request, got ${got}`
} as const

export const ReferenceCode = {
  notAnArray: 'NOT_AN_ARRAY',
  tooManyRows: 'TOO_MANY_ROWS'
} as const

const syncIdRule = `a non-empty string of at most ${SYNC_ID_MAX_LENGTH} characters without control characters, or null to clear the mapping`

export const ReferenceErrors = itemErrors({
  notAnObject: ['ROW_NOT_OBJECT', 'Row must be a JSON object with type, id and syncId'],
  missing: ['FIELD_REQUIRED', (field: 'type' | 'id' | 'syncId') => field === 'syncId'
    ? 'syncId is required: a string, or null to clear the mapping'
    : `${field} is required`],
  type: ['INVALID_TYPE', `type must be one of ${REFERENCE_TYPES.join(', ')}`],
  id: ['INVALID_ID', 'id must be a positive integer (the id as the orders read shows it)'],
  syncId: ['INVALID_SYNC_ID', `syncId must be ${syncIdRule}`],
  unstorable: ['UNSTORABLE_TEXT', unstorableTextRule('syncId')],
  // The same answer for a record that does not exist and one the seller does not see: no leak.
  notFound: ['RECORD_NOT_FOUND', (type: ReferenceType, id: number) => `id ${id} is not a known ${NOUN[type]}`],
  duplicateRecord: ['DUPLICATE_RECORD', (type: ReferenceType, id: number, index: number) =>
    `id ${id} (${type}) already appears in the row at index ${index}`],
  duplicateSyncId: ['DUPLICATE_SYNC_ID', (type: ReferenceType, syncId: string, id: number, index: number) =>
    `syncId ${JSON.stringify(syncId)} is also sent for ${NOUN[type]} id ${id} in the row at index ${index}: a sync ID maps one ${NOUN[type]}`],
  taken: ['SYNC_ID_TAKEN', (type: ReferenceType, syncId: string, id: number) =>
    `syncId ${JSON.stringify(syncId)} is already the sync ID of ${NOUN[type]} id ${id}: clear or change that one in the same request`]
})
export type ReferenceErrorCode = CodeOf<typeof ReferenceErrors>
export type ReferenceError = ItemError<ReferenceErrorCode>
