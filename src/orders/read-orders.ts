import type { Tx } from '../db/client.js'
import { ALONE, type JsonEntry } from '../db/json-text.js'
import { parseConnection, type Connection } from '../paging/page-info.js'
import type { OrderListFilter } from './order-list-input.js'
import { readOrderConnectionText } from './order-json.js'
import type { OrderView } from './order-model.js'
import type { OrderReader } from './order-page.js'

/*
 * A page of a seller's orders for the standard execution: the pass-through's one statement
 * (order-json.ts) with every field of each object the query reached, parsed. One statement per page
 * whatever its size, one snapshot for all of it, and the same SQL for every field on both paths, so the
 * two cannot drift apart.
 */

/**
 * `entries`: an OrderConnection's pageInfo (always) and nodes (when selected), each object with all its
 * fields (db/read-model.ts entriesOf). Nested objects that were not selected are absent from the nodes.
 */
export async function readOrderPage (
  tx: Tx, reader: OrderReader, filter: OrderListFilter, entries: JsonEntry[], timeZone: string
): Promise<Connection<OrderView>> {
  return parseConnection((await readOrderConnectionText(tx, reader, filter, entries, timeZone, ALONE)).body)
}
