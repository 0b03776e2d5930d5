import { InvalidInputError } from '../errors.js'

/*
 * Page-based pagination shared by every list read (docs/api/orders.md): page ≥ 1, default 1;
 * limit default 20, above 100 cut to 100 (pageInfo.limit says so), below 1 an error naming the field.
 */

export const DEFAULT_PAGE = 1
export const DEFAULT_LIMIT = 20
export const MAX_LIMIT = 100

export interface PageWindow {
  page: number
  /** After the default and the cap: what pageInfo.limit reports. */
  limit: number
}

export function parsePageWindow (
  input: { page?: number | null, limit?: number | null } | null | undefined
): PageWindow {
  const page = input?.page ?? DEFAULT_PAGE
  if (page < 1) throw new InvalidInputError('page', `page must be at least 1, got ${page}`)
  const requested = input?.limit ?? DEFAULT_LIMIT
  if (requested < 1) throw new InvalidInputError('limit', `limit must be at least 1, got ${requested}`)
  return { page, limit: Math.min(requested, MAX_LIMIT) }
}
