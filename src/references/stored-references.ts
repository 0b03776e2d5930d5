import { nextTurn } from '../event-loop-turn.js'

/*
 * What is stored for the seller, as the decision (decide.ts) looks it up: read under the seller's lock
 * before any write (write-references.ts, readStoredTexts), as JSON texts of [id, sync ID] pairs.
 */

export interface StoredReferences {
  /**
   * The seller's records named by the rows (and maybe holders of their sync IDs), with their sync IDs now:
   * a row's id missing here is not the seller's.
   */
  current: Map<number, string | null>
  /** The seller's records of this type that hold one of the rows' sync IDs now (others may be there too). */
  holders: Map<string, number>
}

type StoredRecord = [number, string | null]

/** The records `readStoredTexts` answered; a turn between two texts (each about a millisecond to parse). */
export async function storedReferences (texts: readonly string[]): Promise<StoredReferences> {
  // A holder that no row names is in `current` too, and a sync ID no row asks for in `holders`: both are
  // the seller's records as stored, and the decision only looks up what the rows name.
  const current = new Map<number, string | null>()
  const holders = new Map<string, number>()
  for (const text of texts) {
    await nextTurn()
    const records = JSON.parse(text) as StoredRecord[]
    for (const [recordId, value] of records) {
      current.set(recordId, value)
      if (value !== null) holders.set(value, recordId)
    }
  }
  return { current, holders }
}
