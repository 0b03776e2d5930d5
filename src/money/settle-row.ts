import { isStorableText } from '../db/storable-text.js'
import { refused, type RowOutcome } from '../platform/batch.js'
import type { CheckedRows } from '../platform/run-batch.js'
import { instantOf } from './list-query.js'
import { MAX_SETTLE_ID, REFERENCE_MAX_LENGTH, SETTLED_AT_GRACE_MS, SettleRowErrors as E } from './texts.js'

/*
 * A settle row `{id, reference, settledAt?}` checked on its own, before any read: the id (a string of digits
 * or a JSON number), finance's reference, and when it was paid (default: now). An id twice in one request
 * is refused at its second place, so each row of the answer is about one stored row.
 */

export interface SettleRow {
  /** Canonical digits. */
  id: string
  reference: string
  /** ISO-8601 UTC. */
  settledAt: string
}

function idOf (value: unknown): string | null {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof text !== 'string' || !/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > MAX_SETTLE_ID) return null
  return text
}

/** The id a refused row is answered with: the row's as given when it is a string or a number, else null. */
function givenId (row: unknown): string | null {
  const id = (row !== null && typeof row === 'object' && !Array.isArray(row)) ? (row as Record<string, unknown>).id : undefined
  return typeof id === 'string' ? id.slice(0, 100) : typeof id === 'number' && Number.isFinite(id) ? String(id) : null
}

export function checkSettleRows (rows: unknown[], now: Date): CheckedRows<SettleRow> {
  const checked: CheckedRows<SettleRow> = { valid: [], outcomes: [] }
  const seen = new Map<string, number>()
  rows.forEach((row, index) => {
    const outcome = checkOne(row, now, seen, index)
    if ('kind' in outcome) {
      checked.outcomes.push(outcome)
    } else {
      checked.outcomes.push(null)
      checked.valid.push({ index, row: outcome })
      seen.set(outcome.id, index)
    }
  })
  return checked
}

function checkOne (row: unknown, now: Date, seen: Map<string, number>, _index: number): SettleRow | RowOutcome {
  if (row === null || typeof row !== 'object' || Array.isArray(row)) return refused(null, E.notAnObject)
  const r = row as Record<string, unknown>
  const id = idOf(r.id)
  if (id === null) return refused(givenId(row), E.id)
  const earlier = seen.get(id)
  if (earlier !== undefined) return refused(id, E.idTwice(id, earlier))
  const reference = r.reference
  if (typeof reference !== 'string' || reference.trim().length === 0 || reference.length > REFERENCE_MAX_LENGTH) {
    return refused(id, E.reference)
  }
  if (!isStorableText(reference)) return refused(id, E.unstorable)
  let settledAt = now.toISOString()
  if (r.settledAt !== undefined && r.settledAt !== null) {
    const instant = typeof r.settledAt === 'string' && r.settledAt.includes('T') ? instantOf(r.settledAt) : null
    if (instant === null || Date.parse(instant) > now.getTime() + SETTLED_AT_GRACE_MS) return refused(id, E.settledAt)
    settledAt = instant
  }
  return { id, reference, settledAt }
}
