/*
 * The seller's sync IDs (docs/api/references.md), as the shipment sync keys its rows and the references sync sets them.
 */

/**
 * Long enough for any ERP identifier, short enough that the unique key always fits a btree entry
 * (3 × 200 UTF-16 units ≤ 1,800 bytes of UTF-8, under PostgreSQL's ~2,700-byte limit).
 */
export const SYNC_ID_MAX_LENGTH = 200
