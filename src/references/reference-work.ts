import { intArrayLiteral, textArrayLiteral } from '../db/array-literal.js'
import { JsonArrayReader, type JsonArrayBody } from '../shipments/json-array-reader.js'
import { decideReferences } from './decide.js'
import { ReferenceBatchBuilder, type ReferenceBatch } from './reference-batch.js'
import type { ReferenceRowError } from './schemas.js'
import { storedReferences } from './stored-references.js'
import { REFERENCE_TYPES, type ReferenceType } from './texts.js'

/*
 * The CPU side of one references sync, with no database: the body's bytes scanned into rows (the rows
 * checked, duplicates refused), and each type decided on what the transaction read. Its answers are what
 * the statements take, array literals written here (db/array-literal.ts), so the thread that holds the
 * transaction only passes texts along. It runs in the references thread (reference-engine.ts), where its
 * 100,000-entry maps and their garbage collection keep out of the way of the orders reads.
 */

/** Rows per write statement: parameter arrays small enough to die young. */
export const WRITE_CHUNK = 10_000

/** What the transaction needs to read a type's stored state: the rows' ids and sync IDs, as literals. */
export interface TypeLookup {
  type: ReferenceType
  ids: string
  syncIds: string
}

/** The request once read: its size, the rows refused on their own, and the types to look up. */
export interface BatchSummary {
  received: number
  errors: ReferenceRowError[]
  lookups: TypeLookup[]
}

/** A type's decision as the statements take it. */
export interface TypeOutcome {
  errors: ReferenceRowError[]
  inserted: number
  updated: number
  unchanged: number
  /** int[] literals of records whose sync ID becomes null, WRITE_CHUNK a statement. */
  clear: string[]
  /** Pairs of int[] and text[] literals: records and their new sync IDs, WRITE_CHUNK a statement. */
  set: Array<{ ids: string, syncIds: string }>
  /** text[] literal of the sync IDs that no record of the type held before and one holds now; none: absent. */
  newlyMatched?: string
}

/** What the sync's transaction asks of the work (here, or through the references thread). */
export interface ReferenceDecider {
  summary: () => Promise<BatchSummary>
  /** Pure given the request and `stored`: a retried transaction asks again and gets its own answer. */
  decide: (type: ReferenceType, stored: string[]) => Promise<TypeOutcome>
}

export class ReferenceWork implements ReferenceDecider {
  private readonly builder = new ReferenceBatchBuilder()
  private readonly reader: JsonArrayReader
  private batch: ReferenceBatch | undefined

  /** Rows past `maxRows` are scanned (the body is counted) but not kept. */
  constructor (maxRows: number) {
    // The only numbers are ids: JSON.parse's double decides them as their source text would (reference-row.ts).
    this.reader = new JsonArrayReader((record, index) => {
      if (index < maxRows) this.builder.add(record)
    }, JSON.parse)
  }

  async write (bytes: Buffer): Promise<void> {
    await this.reader.write(bytes)
  }

  end (): JsonArrayBody {
    const body = this.reader.end()
    this.batch = this.builder.finish()
    return body
  }

  private rows (): ReferenceBatch {
    if (this.batch === undefined) throw new Error('the body has not been read to its end')
    return this.batch
  }

  async summary (): Promise<BatchSummary> {
    const batch = this.rows()
    const lookups: TypeLookup[] = []
    for (const type of REFERENCE_TYPES) {
      const rows = batch.rows[type]
      if (rows.ids.length === 0) continue
      lookups.push({
        type,
        ids: await intArrayLiteral(rows.ids),
        syncIds: await textArrayLiteral(rows.syncIds.filter((s): s is string => s !== null))
      })
    }
    return { received: batch.received, errors: batch.errors, lookups }
  }

  async decide (type: ReferenceType, stored: string[]): Promise<TypeOutcome> {
    const decision = await decideReferences(type, this.rows().rows[type], await storedReferences(stored))
    const clear: string[] = []
    for (let start = 0; start < decision.clearIds.length; start += WRITE_CHUNK) {
      clear.push(await intArrayLiteral(decision.clearIds.slice(start, start + WRITE_CHUNK)))
    }
    const set: TypeOutcome['set'] = []
    for (let start = 0; start < decision.setIds.length; start += WRITE_CHUNK) {
      set.push({
        ids: await intArrayLiteral(decision.setIds.slice(start, start + WRITE_CHUNK)),
        syncIds: await textArrayLiteral(decision.setSyncIds.slice(start, start + WRITE_CHUNK))
      })
    }
    const { errors, inserted, updated, unchanged, newlyMatched } = decision
    return {
      errors,
      inserted,
      updated,
      unchanged,
      clear,
      set,
      newlyMatched: newlyMatched.length > 0 ? await textArrayLiteral(newlyMatched) : undefined
    }
  }
}
