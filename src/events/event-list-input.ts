import { InvalidInputError } from '../errors.js'
import { parsePageWindow } from '../paging/page-window.js'
import { isEventType, type EventType } from './event-types.js'
import { EventFeedText } from './texts.js'

/*
 * The feed's input (GraphQL `events`), checked before anything is read: `after`, a sequence; `limit`, as
 * every list read (paging/page-window.ts: default 20, above 100 cut to 100, below 1 an error, the same
 * texts); `types`, event type names. Each refusal names its field.
 */

/** What a caller may ask for; any field may be missing or null. */
export interface EventListQuery {
  after?: string | null
  limit?: number | null
  types?: readonly string[] | null
}

export interface EventListFilter {
  /** The sequence the page starts after, canonical digits ("0": from the oldest event kept). */
  after: string
  limit: number
  /** Only these types (distinct); null: every type. */
  types: EventType[] | null
}

/** A sequence is a PostgreSQL bigint above 0; "0" is the start. No sign, no leading zero, no spaces. */
const SEQUENCE = /^(0|[1-9][0-9]{0,18})$/
const MAX_SEQUENCE = 9223372036854775807n

export function parseEventListInput (input: EventListQuery | null | undefined): EventListFilter {
  const after = input?.after ?? '0'
  if (!SEQUENCE.test(after) || BigInt(after) > MAX_SEQUENCE) throw new InvalidInputError('after', EventFeedText.after(after))
  // The page's own rules, without a page number: a feed is read by cursor.
  const { limit } = parsePageWindow({ limit: input?.limit })
  let types: EventType[] | null = null
  if (input?.types !== null && input?.types !== undefined) {
    if (input.types.length === 0) throw new InvalidInputError('types', EventFeedText.typesEmpty)
    const unknown = input.types.find((type) => !isEventType(type))
    if (unknown !== undefined) throw new InvalidInputError('types', EventFeedText.unknownType(unknown))
    types = [...new Set(input.types as EventType[])]
  }
  return { after, limit, types }
}
