/*
 * The outstanding shipment sync's request-level texts (docs/api/shipments.md: the message says what was
 * expected), each written once. Row errors are written beside the row rules (sync-row.ts).
 */

export const SyncText = {
  success: 'Outstanding shipments synced successfully',
  notAnArray: 'Request body must be a non-empty JSON array of outstanding shipment records',
  tooManyRows: (max: number, got: number) => `Too many outstanding shipment records: at most ${max} per request, got ${got}`
} as const

/** Their codes (the envelope's additive `code`). */
export const SyncCode = {
  notAnArray: 'NOT_AN_ARRAY',
  tooManyRows: 'TOO_MANY_ROWS'
} as const
