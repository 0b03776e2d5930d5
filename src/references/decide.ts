import { nextTurn, ROWS_PER_TURN } from '../event-loop-turn.js'
import type { TypeRows } from './reference-batch.js'
import type { ReferenceRowError } from './schemas.js'
import type { StoredReferences } from './stored-references.js'
import { ReferenceErrors, type ReferenceError, type ReferenceType } from './texts.js'

/*
 * The decision for one type's rows (pure), given what is stored: which rows apply, which are refused, and
 * what is written. Uniqueness is judged on the result of the whole request, not row by row: a sync ID may
 * move to another record when the record holding it now gets another value (or null) in the same request,
 * so a swap of two sync IDs applies. A refused row leaves its record as it is, and so keeps the record's
 * current sync ID taken: a row that counted on it being released is refused in turn, until nothing changes.
 */

export interface TypeDecision {
  errors: ReferenceRowError[]
  inserted: number
  updated: number
  unchanged: number
  /** Records whose sync ID becomes null. */
  clearIds: number[]
  /** Records that get a new sync ID (a record is in one list at most: each is written once). */
  setIds: number[]
  setSyncIds: string[]
  /** Sync IDs that no record of this type held before and one holds now. */
  newlyMatched: string[]
}

/** Pure but for the turns it lets other requests have (its loops run over up to 100,000 rows). */
export async function decideReferences (
  type: ReferenceType, rows: TypeRows, stored: StoredReferences
): Promise<TypeDecision> {
  const { current, holders } = stored
  const n = rows.ids.length
  const refused = new Array<ReferenceError | undefined>(n)
  /** Position of the row (still applying) that sets each sync ID; the builder made them distinct. */
  const rowSetting = new Map<string, number>()
  const rowOfId = new Map<number, number>()
  for (let i = 0; i < n; i++) {
    if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn()
    const id = rows.ids[i]
    if (!current.has(id)) {
      refused[i] = ReferenceErrors.notFound(type, id)
      continue
    }
    rowOfId.set(id, i)
    const syncId = rows.syncIds[i]
    if (syncId !== null) rowSetting.set(syncId, i)
  }

  /** A record's sync ID once the request is applied, as far as it is decided now. */
  const finalSyncId = (id: number, stored: string): string | null => {
    const row = rowOfId.get(id)
    if (row !== undefined && refused[row] === undefined) return rows.syncIds[row]
    return current.has(id) ? current.get(id)! : stored
  }

  const pending: number[] = []
  for (let i = 0; i < n; i++) if (refused[i] === undefined) pending.push(i)
  let steps = 0
  while (pending.length > 0) {
    if (++steps % ROWS_PER_TURN === 0) await nextTurn()
    const i = pending.pop()!
    if (refused[i] !== undefined) continue
    const id = rows.ids[i]
    const syncId = rows.syncIds[i]
    const before = current.get(id)!
    if (syncId === null || syncId === before) continue
    const holder = holders.get(syncId)
    if (holder === undefined || holder === id || finalSyncId(holder, syncId) !== syncId) continue
    refused[i] = ReferenceErrors.taken(type, syncId, holder)
    rowSetting.delete(syncId)
    // The record keeps its sync ID: a row that meant to give it to another record must be looked at again.
    if (before !== null) {
      const other = rowSetting.get(before)
      if (other !== undefined) pending.push(other)
    }
  }

  const decision: TypeDecision = {
    errors: [], inserted: 0, updated: 0, unchanged: 0, clearIds: [], setIds: [], setSyncIds: [], newlyMatched: []
  }
  for (let i = 0; i < n; i++) {
    if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn()
    const error = refused[i]
    if (error !== undefined) {
      decision.errors.push({ index: rows.indexes[i], error: error.text, code: error.code })
      continue
    }
    const id = rows.ids[i]
    const syncId = rows.syncIds[i]
    const before = current.get(id)!
    if (syncId === before) {
      decision.unchanged++
      continue
    }
    if (before === null) decision.inserted++
    else decision.updated++
    if (syncId === null) decision.clearIds.push(id)
    else {
      decision.setIds.push(id)
      decision.setSyncIds.push(syncId)
      if (!holders.has(syncId)) decision.newlyMatched.push(syncId)
    }
  }
  return decision
}
