import { EVENT_TYPES } from './event-types.js'

/*
 * The feed's texts (GraphQL `events`), each written once: every refusal is a BAD_USER_INPUT naming its
 * field. The paging limit's rules and texts are every list read's (paging/page-window.ts).
 */

/** A value echoed in a message: quoted as JSON, long ones cut (a message is read by a person). */
function quoted (value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
}

export const EventFeedText = {
  after: (got: string) =>
    `after must be an event sequence as a string of digits, "0" for the oldest event kept (at most 9223372036854775807), got ${quoted(got)}`,
  typesEmpty: 'types must name at least one event type; leave it out for events of every type',
  unknownType: (got: string) => `types: ${quoted(got)} is not an event type; the types are ${EVENT_TYPES.join(', ')}`,
  outsideFullOrder: (field: string) =>
    `An event's order is read with the full order selection (the fields of orders.graphql): ${field} is not part of it (read it through orders)`,
  expired: (after: string, oldest: string) =>
    `after ${after} is older than the events kept: the oldest available sequence is ${oldest}. ` +
    `Events between them were removed (EVENT_RETENTION_DAYS); read the orders to catch up, then continue with after "${BigInt(oldest) - 1n}"`
} as const
