import { parsePageWindow, type PageWindow } from '../paging/page-window.js'

/*
 * The input of the seller's reference lists (`retailers`, `items`): the paging rules of every list read
 * (paging/page-window.ts, the same code and messages as `orders`), and `unmapped`.
 */

/** What a caller may ask for; any field may be missing or null. */
export interface ReferenceListQuery {
  page?: number | null
  limit?: number | null
  unmapped?: boolean | null
}

export interface ReferenceListFilter extends PageWindow {
  /**
   * Only the records still missing one of this seller's sync IDs: the retailer's (or one of its shops'),
   * the item's (or one of its offers'). False or absent: all.
   */
  unmapped: boolean
}

export function parseReferenceListInput (input: ReferenceListQuery | null | undefined): ReferenceListFilter {
  return { ...parsePageWindow(input), unmapped: input?.unmapped === true }
}
