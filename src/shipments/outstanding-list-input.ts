import { BadUserInputError } from '../errors.js'
import { parsePageWindow, type PageWindow } from '../graphql/page-input.js'
import type { OutstandingShipmentListInput } from '../graphql/generated/types.js'
import { SYNC_ID_MAX_LENGTH } from './sync-row.js'

/*
 * The outstandingShipments query's input: the same pagination rules as orders (decisions.md "Orders":
 * page ≥ 1, default 1; limit default 20, above 100 cut to 100, below 1 an error) plus two exact filters.
 */

export interface OutstandingShipmentFilter extends PageWindow {
  retailerSyncId: string | null
  offerSyncId: string | null
}

function syncIdFilter (field: 'retailerSyncId' | 'offerSyncId', value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  if (value.length === 0 || value.length > SYNC_ID_MAX_LENGTH || value.includes('\u0000')) {
    throw new BadUserInputError(field, `${field} must be a non-empty string of at most ${SYNC_ID_MAX_LENGTH} characters`)
  }
  return value
}

export function parseOutstandingShipmentListInput (input: OutstandingShipmentListInput | null | undefined): OutstandingShipmentFilter {
  return {
    ...parsePageWindow(input),
    retailerSyncId: syncIdFilter('retailerSyncId', input?.retailerSyncId),
    offerSyncId: syncIdFilter('offerSyncId', input?.offerSyncId)
  }
}
