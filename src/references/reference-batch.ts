import type { ReferenceRowError } from './schemas.js'
import { checkReferenceRow } from './reference-row.js'
import { REFERENCE_TYPES, ReferenceErrors, type ReferenceType } from './texts.js'

/*
 * Turns the request's elements into the rows to decide on, grouped by type (one set of columns per type,
 * as the writes take them), with what can be told from the request alone refused on the way: a bad row,
 * a record sent twice, a sync ID sent for two records of one type. The first row wins, a later one is
 * refused naming it: which record a sync ID should map is the client's to say, not ours to guess.
 * Elements are added one at a time as the body streams in.
 */

/** The valid rows of one type, in request order; `indexes` are their positions in the request. */
export interface TypeRows {
  indexes: number[]
  ids: number[]
  syncIds: Array<string | null>
}

export interface ReferenceBatch {
  /** Elements in the request, valid or not. */
  received: number
  rows: Record<ReferenceType, TypeRows>
  errors: ReferenceRowError[]
}

const emptyRows = (): TypeRows => ({ indexes: [], ids: [], syncIds: [] })
const perType = <T>(make: () => T): Record<ReferenceType, T> =>
  Object.fromEntries(REFERENCE_TYPES.map((t) => [t, make()])) as Record<ReferenceType, T>

export class ReferenceBatchBuilder {
  private received = 0
  private readonly errors: ReferenceRowError[] = []
  private readonly rows = perType(emptyRows)
  /** Per type: the position (in its TypeRows) of each id's row and of each sync ID's row. */
  private readonly rowOfId = perType(() => new Map<number, number>())
  private readonly rowOfSyncId = perType(() => new Map<string, number>())

  add (record: unknown): void {
    const index = this.received++
    const check = checkReferenceRow(record)
    if (check.error !== undefined) {
      this.errors.push({ index, error: check.error.text, code: check.error.code })
      return
    }
    const { type, id, syncId } = check.row
    const rows = this.rows[type]
    const sameId = this.rowOfId[type].get(id)
    if (sameId !== undefined) {
      const error = ReferenceErrors.duplicateRecord(type, id, rows.indexes[sameId])
      this.errors.push({ index, error: error.text, code: error.code })
      return
    }
    const sameSyncId = syncId === null ? undefined : this.rowOfSyncId[type].get(syncId)
    if (sameSyncId !== undefined) {
      const error = ReferenceErrors.duplicateSyncId(type, syncId!, rows.ids[sameSyncId], rows.indexes[sameSyncId])
      this.errors.push({ index, error: error.text, code: error.code })
      return
    }
    const position = rows.ids.length
    rows.indexes.push(index)
    rows.ids.push(id)
    rows.syncIds.push(syncId)
    this.rowOfId[type].set(id, position)
    if (syncId !== null) this.rowOfSyncId[type].set(syncId, position)
  }

  finish (): ReferenceBatch {
    for (const type of REFERENCE_TYPES) {
      this.rowOfId[type].clear()
      this.rowOfSyncId[type].clear()
    }
    return { received: this.received, rows: this.rows, errors: this.errors }
  }
}
