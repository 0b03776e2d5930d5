import { isStorableText, unstorableTextRule } from '../db/storable-text.js'
import { InvalidInputError } from '../errors.js'
import { parsePageWindow, type PageWindow } from '../paging/page-window.js'
import { SYNC_ID_MAX_LENGTH } from '../sync-id.js'

/*
 * The outstandingShipments query's input: the same pagination rules as orders (docs/api/orders.md:
 * page ≥ 1, default 1; limit default 20, above 100 cut to 100, below 1 an error) plus two exact filters.
 */

/** What a caller may ask for; any field may be missing or null. */
export interface OutstandingShipmentQuery {
  page?: number | null
  limit?: number | null
  retailerSyncId?: string | null
  offerSyncId?: string | null
}

export interface OutstandingShipmentFilter extends PageWindow {
  retailerSyncId: string | null
  offerSyncId: string | null
}

function syncIdFilter (field: 'retailerSyncId' | 'offerSyncId', value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  if (value.length === 0 || value.length > SYNC_ID_MAX_LENGTH) {
    throw new InvalidInputError(field, `${field} must be a non-empty string of at most ${SYNC_ID_MAX_LENGTH} characters`)
  }
  if (!isStorableText(value)) throw new InvalidInputError(field, unstorableTextRule(field))
  return value
}

export function parseOutstandingShipmentListInput (
  input: OutstandingShipmentQuery | null | undefined
): OutstandingShipmentFilter {
  return {
    ...parsePageWindow(input),
    retailerSyncId: syncIdFilter('retailerSyncId', input?.retailerSyncId),
    offerSyncId: syncIdFilter('offerSyncId', input?.offerSyncId)
  }
}
