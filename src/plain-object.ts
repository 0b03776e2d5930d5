/**
 * A JSON object as a request sends it: not null, not an array. Shared by every check of client input
 * (a status update's items, a sync's rows), which must refuse the same values the same way.
 */
export function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
