import { sql, type SQL } from 'drizzle-orm'
import { FULL_ORDER } from '../orders/order-json.js'
import { ORDER } from '../orders/order-model.js'

/*
 * How an event's order is read back. An event either stores its order's JSON (order_json: built when it
 * was recorded, from the read model) or, for a status change when nothing else its order shows changed
 * since the order's last built event (record-events.ts decides, from content_changes), only what a status
 * change changes — the order's status, isActionable and updatedAt — and the sequence of that base event.
 * Its JSON is then the base's text with those three values written over, by the same field texts the read
 * model writes them with (order-model.ts), so that it is byte for byte what building it would have written.
 * Each value is found after its key (`,"orderStatus":`): a key cannot occur unescaped inside a JSON string,
 * and FULL_ORDER's nested objects, written before isActionable and updatedAt, have no field of those names
 * (checked below, at load). A base is used only if it was built with this FULL_ORDER (ORDER_SHAPE): a
 * release that changes the selection builds its events again.
 */

/** The fields of an order a status event stores itself, in FULL_ORDER's order. */
const OWN = ['orderStatus', 'isActionable', 'updatedAt'] as const

/** The names of every field FULL_ORDER writes inside the order's nested objects. */
function nestedNames (entries = FULL_ORDER, depth = 0): Set<string> {
  const names = new Set<string>()
  for (const { key, value } of entries) {
    if (depth > 0) names.add(key)
    if (value.kind === 'field' && value.entries !== undefined) for (const n of nestedNames(value.entries, depth + 1)) names.add(n)
  }
  return names
}

/** The OWN keys as FULL_ORDER writes them, in order, for json_text_values_replaced (drizzle/0018). */
function ownKeys (): string[] {
  const keys = FULL_ORDER.map((e) => e.key)
  const nested = nestedNames()
  let last = 0
  return OWN.map((name) => {
    const at = keys.indexOf(name)
    if (at <= last - 1 || at === 0 || nested.has(name)) throw new Error(`FULL_ORDER cannot be patched at ${name}`)
    last = at + 1
    return `,${JSON.stringify(name)}:`
  })
}

const KEYS = sql.raw(`array[${ownKeys().map((k) => `'${k}'`).join(', ')}]::text[]`)

/** FULL_ORDER's fingerprint (31-bit FNV-1a of its JSON): stored with each built event, compared by SMALL_EVENTS. */
export const ORDER_SHAPE = (() => {
  let hash = 0x811c9dc5
  for (const ch of JSON.stringify(FULL_ORDER)) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0
  return hash & 0x7fffffff
})()

/** The OWN values' texts, from a row `x` with the order's columns' names. */
const OWN_TEXTS = sql`array[${sql.join(OWN.map((name) => ORDER[name].text('x')), sql`, `)}]`

/** The base event of small event row `e`, with `e`'s own values as an order row `x`. */
function baseOf (e: string): SQL {
  return sql.raw(`seller_events b, lateral (select ${e}.order_status as status, ${e}.order_is_actionable as is_actionable,
    ${e}.order_updated_at as updated_at) x where b.seller_id = ${e}.seller_id and b.sequence = ${e}.base_sequence`)
}

/** The JSON text of the order of event row `e` of seller_events: 'null' for an event of no order. */
export function eventOrderText (e: string): SQL {
  return sql`(case when ${sql.raw(e)}.base_sequence is null then coalesce(${sql.raw(e)}.order_json, 'null')
    else (select json_text_values_replaced(b.order_json, ${KEYS}, ${OWN_TEXTS}) from ${baseOf(e)}) end)`
}

/** The lengths of the order's lists of event row `e` (seller_events.order_list_lengths, a base's for a small one). */
export function eventOrderListLengths (e: string): SQL {
  return sql`coalesce(${sql.raw(e)}.order_list_lengths, (select b.order_list_lengths from ${baseOf(e)}))`
}
