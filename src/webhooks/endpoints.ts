import { randomUUID } from 'node:crypto'
import { sql, type SQL } from 'drizzle-orm'
import type { Tx } from '../db/client.js'
import type { EventType, SubscriptionStatus } from '../db/schema.js'
import { recordSellerEvent } from '../events/record-events.js'
import { isoText } from '../db/json-text.js'
import { eventId, sequenceOfEventId } from '../events/event-body.js'
import type { SecretBox } from './secret-box.js'
import { newEndpointSecret } from '../outbound/standard-signature.js'
import { MAX_ENDPOINTS, MAX_PENDING_DELIVERIES, MAX_REPLAY_EVENTS, WebhookError } from './texts.js'

/*
 * The seller's webhook endpoints (REST /v2/webhooks/endpoints): each function takes the transaction first
 * and the caller's scope (its seller, maybe narrowed to some stores), and touches only the endpoints within
 * that scope (`withinScope`). Another seller's endpoint, or one made by a credential of wider scope, is
 * "not found", as an id that does not exist. An endpoint keeps the scope of the credential that made it
 * (store_ids) and is sent, or replayed, only events of its stores' orders and of no order (`eventInScope`).
 * Checking a URL (syntax, scheme, where it resolves) is the route's, before this.
 */

/** Who acts on endpoints: a seller's credential, narrowed to some of its stores or not (null: all of them). */
export interface EndpointScope { sellerId: number, storeIds: number[] | null }

/**
 * The endpoints (`subscriptions`, unaliased) the scope sees and changes: the seller's, and for a narrowed
 * credential only those whose own stores lie within its (never a whole-seller endpoint).
 */
function withinScope (scope: EndpointScope): SQL {
  const seller = sql`seller_id = ${scope.sellerId}::int`
  if (scope.storeIds === null) return seller
  return sql`${seller} and store_ids is not null and store_ids <@ ${sql.param(scope.storeIds)}::int[]`
}

/**
 * The events of `seller_events` aliased `e` an endpoint of these stores (null: the whole seller) is sent: of
 * its stores' orders, and of no order (webhook.test, webhook.endpoint_disabled), as the feed shows them.
 */
function eventInScope (storeIds: number[] | null): SQL {
  if (storeIds === null) return sql`true`
  return sql`(e.store_id is null or e.store_id = any(${sql.param(storeIds)}::int[]))`
}

export type EndpointView = {
  id: string
  url: string
  /** The event types sent; null: every type. */
  types: EventType[] | null
  description: string
  status: SubscriptionStatus
  disabledReason: string | null
  createdAt: string
  updatedAt: string
}

export interface NewEndpoint { url: string, types: EventType[] | null, description: string }

export interface EndpointPatch {
  url?: string
  types?: EventType[] | null
  description?: string
  status?: SubscriptionStatus
}

const VIEW = sql`id::text as id, url, types::text[] as types, description, status, disabled_reason as "disabledReason",
  ${isoText(sql`created_at`)} as "createdAt", ${isoText(sql`updated_at`)} as "updatedAt"`

/** How long the secret before a rotation still signs. */
const PREVIOUS_SECRET_HOURS = 24

/**
 * A new endpoint, sent the seller's events from now on (its cursor starts at the log's end), and its
 * secret: shown once, kept only encrypted. The seller's endpoints are counted under a lock of the seller's
 * so two concurrent creations cannot both be the tenth.
 */
export async function createEndpoint (tx: Tx, scope: EndpointScope, input: NewEndpoint, box: SecretBox):
Promise<EndpointView & { secret: string }> {
  const { sellerId } = scope
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('subscriptions'), ${sellerId}::int)`)
  const [{ n }] = await tx.execute<{ n: number }>(sql`select count(*)::int as n from subscriptions where seller_id = ${sellerId}::int`)
  if (n >= MAX_ENDPOINTS) throw WebhookError.tooMany()
  const id = randomUUID()
  const secret = newEndpointSecret()
  const [row] = await tx.execute<EndpointView>(sql`
    with made as (
      insert into subscriptions (id, seller_id, store_ids, url, types, description, secret)
      values (${id}::uuid, ${sellerId}::int, ${storesParam(scope.storeIds)}, ${input.url}, ${typesParam(input.types)},
        ${input.description}, ${box.seal(id, secret)})
      returning *
    ), cursor as (
      insert into subscription_cursors (subscription_id, seller_id, last_sequence)
      select ${id}::uuid, ${sellerId}::int,
        coalesce((select last_sequence from seller_event_counters where seller_id = ${sellerId}::int), 0)
    )
    select ${VIEW} from made`)
  return { ...row, secret }
}

export async function listEndpoints (tx: Tx, scope: EndpointScope): Promise<EndpointView[]> {
  return await tx.execute<EndpointView>(sql`select ${VIEW} from subscriptions
    where ${withinScope(scope)} order by created_at, id`)
}

/**
 * Changes what the patch gives. Disabling pauses the endpoint where it is: nothing is sent and its cursor
 * stays, so enabling it again sends what was recorded meanwhile (as far as the log keeps it), in order.
 */
export async function updateEndpoint (tx: Tx, scope: EndpointScope, id: string, patch: EndpointPatch):
Promise<EndpointView> {
  const sets = [sql`updated_at = now()`]
  if (patch.url !== undefined) sets.push(sql`url = ${patch.url}`)
  if (patch.types !== undefined) sets.push(sql`types = ${typesParam(patch.types)}`)
  if (patch.description !== undefined) sets.push(sql`description = ${patch.description}`)
  if (patch.status === 'ENABLED') sets.push(sql`status = 'ENABLED', disabled_reason = null, failing_since = null`)
  if (patch.status === 'DISABLED') sets.push(sql`status = 'DISABLED', disabled_reason = coalesce(disabled_reason, 'disabled by the seller')`)
  const [row] = await tx.execute<EndpointView>(sql`update subscriptions set ${sql.join(sets, sql`, `)}
    where id = ${id}::uuid and ${withinScope(scope)} returning ${VIEW}`)
  if (row === undefined) throw WebhookError.notFound()
  return row
}

/** Deletes the endpoint with its queue and attempt log. */
export async function deleteEndpoint (tx: Tx, scope: EndpointScope, id: string): Promise<void> {
  const rows = await tx.execute(sql`delete from subscriptions where id = ${id}::uuid and ${withinScope(scope)} returning 1`)
  if (rows.length === 0) throw WebhookError.notFound()
}

/** A new secret; the one it replaces keeps signing (a second `v1,` entry) for 24 hours. */
export async function rotateSecret (tx: Tx, scope: EndpointScope, id: string, box: SecretBox):
Promise<{ secret: string }> {
  const secret = newEndpointSecret()
  const rows = await tx.execute(sql`update subscriptions
    set previous_secret = secret, previous_secret_until = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS}::int),
      secret = ${box.seal(id, secret)}, updated_at = now()
    where id = ${id}::uuid and ${withinScope(scope)} returning 1`)
  if (rows.length === 0) throw WebhookError.notFound()
  return { secret }
}

/** The endpoint's row locked for a change that depends on it, or not found. */
type LockedEndpoint = { status: SubscriptionStatus, types: EventType[] | null, storeIds: number[] | null }
async function lockedEndpoint (tx: Tx, scope: EndpointScope, id: string): Promise<LockedEndpoint> {
  const [row] = await tx.execute<LockedEndpoint>(sql`
    select status, types::text[] as types, store_ids as "storeIds" from subscriptions
    where id = ${id}::uuid and ${withinScope(scope)} for update`)
  if (row === undefined) throw WebhookError.notFound()
  return row
}

/**
 * Records a `webhook.test` event in the seller's log (the feed shows it too) and queues it for this endpoint
 * alone: other endpoints are not sent another one's test. Not held to MAX_PENDING_DELIVERIES: one row, and
 * the way to see whether a full endpoint answers again.
 */
export async function sendTestEvent (tx: Tx, scope: EndpointScope, id: string):
Promise<{ eventId: string, sequence: string }> {
  const { sellerId } = scope
  const endpoint = await lockedEndpoint(tx, scope, id)
  if (endpoint.status !== 'ENABLED') throw WebhookError.disabled()
  const sequence = await recordSellerEvent(tx, sellerId, 'webhook.test', `test sent to webhook endpoint ${id}`)
  await tx.execute(sql`insert into deliveries (subscription_id, seller_id, sequence, type)
    values (${id}::uuid, ${sellerId}::int, ${sequence}::bigint, 'webhook.test')`)
  return { eventId: eventId(sellerId, sequence), sequence: String(sequence) }
}

export type ReplayRequest = { after: string } | { eventIds: string[] }

/**
 * Queues events again for this endpoint: those after a sequence (of its types, at most MAX_REPLAY_EVENTS;
 * `through` says where to continue), or the given ids (every one must be in the log and in the endpoint's
 * scope, else nothing is queued: one outside it is not found, as one not in the log). A replayed event of an
 * order goes behind that order's events already queued, like any other.
 *
 * One replay at a time per endpoint (its rows are marked `replay` until delivered or given up), and never
 * past MAX_PENDING_DELIVERIES pending: a replay `after` a sequence queues what fits (`through` says where
 * to continue), one by ids all or nothing. Without these, replays of a log queued faster than a slow
 * endpoint drains, and its queue grew without bound. The endpoint's row lock orders concurrent replays.
 */
export async function replayEvents (tx: Tx, scope: EndpointScope, id: string, request: ReplayRequest):
Promise<{ queued: number, through: string | null }> {
  const { sellerId } = scope
  const endpoint = await lockedEndpoint(tx, scope, id)
  const inScope = eventInScope(endpoint.storeIds)
  const [queue] = await tx.execute<{ pending: number, replaying: boolean }>(sql`
    select count(*)::int as pending, coalesce(bool_or(replay), false) as replaying
    from deliveries where subscription_id = ${id}::uuid and status = 'PENDING'`)
  if (queue.replaying) throw WebhookError.replayPending()
  const room = MAX_PENDING_DELIVERIES - queue.pending
  let picked
  if ('after' in request) {
    if (room <= 0) throw WebhookError.queueFull(queue.pending)
    const types = endpoint.types === null ? sql`` : sql`and e.type = any(${typesParam(endpoint.types)})`
    picked = sql`select e.sequence, e.type, e.order_id from seller_events e
      where e.seller_id = ${sellerId}::int and e.sequence > ${request.after}::bigint and e.type <> 'webhook.test' ${types}
        and ${inScope}
      order by e.sequence limit ${Math.min(MAX_REPLAY_EVENTS, room)}::int`
  } else {
    if (request.eventIds.length > room) throw WebhookError.queueFull(queue.pending)
    const sequences: string[] = []
    for (const given of request.eventIds) {
      const sequence = sequenceOfEventId(sellerId, given)
      if (sequence === null) throw WebhookError.eventNotFound(given)
      sequences.push(sequence)
    }
    const found = await tx.execute<{ sequence: string }>(sql`select e.sequence::text as sequence from seller_events e
      where e.seller_id = ${sellerId}::int and e.sequence = any(${sql.param(sequences)}::bigint[]) and ${inScope}`)
    const kept = new Set(found.map((r) => r.sequence))
    const missing = request.eventIds.find((_, i) => !kept.has(sequences[i]))
    if (missing !== undefined) throw WebhookError.eventNotFound(missing)
    picked = sql`select e.sequence, e.type, e.order_id from seller_events e
      where e.seller_id = ${sellerId}::int and e.sequence = any(${sql.param(sequences)}::bigint[]) order by e.sequence`
  }
  const [row] = await tx.execute<{ queued: number, through: string | null }>(sql`
    with queued as (
      insert into deliveries (subscription_id, seller_id, sequence, type, order_id, replay)
      select ${id}::uuid, ${sellerId}::int, p.sequence, p.type, p.order_id, true from (${picked}) p order by p.sequence
      returning sequence
    ) select count(*)::int as queued, max(sequence)::text as through from queued`)
  return row
}

export type AttemptView = {
  id: string
  eventId: string
  type: EventType
  attempt: number
  attemptedAt: string
  succeeded: boolean
  httpStatus: number | null
  error: string | null
  durationMs: number
  answer: string
}

export interface AttemptFilter { status: 'SUCCEEDED' | 'FAILED' | null, after: string, limit: number }

/** The endpoint's attempt log, oldest first, after an attempt id. */
export async function listAttempts (tx: Tx, scope: EndpointScope, id: string, filter: AttemptFilter):
Promise<{ attempts: AttemptView[], pageInfo: { hasNext: boolean, endCursor: string } }> {
  const { sellerId } = scope
  const [endpoint] = await tx.execute(sql`select 1 from subscriptions where id = ${id}::uuid and ${withinScope(scope)}`)
  if (endpoint === undefined) throw WebhookError.notFound()
  const status = filter.status === null ? sql`` : sql`and a.succeeded = ${filter.status === 'SUCCEEDED'}`
  const rows = await tx.execute<AttemptView & { sequence: string }>(sql`
    select a.id::text as id, a.sequence::text as sequence, a.type, a.attempt, ${isoText(sql`a.attempted_at`)} as "attemptedAt",
      a.succeeded, a.http_status as "httpStatus", a.error, a.duration_ms as "durationMs", a.answer_head as answer
    from delivery_attempts a
    where a.subscription_id = ${id}::uuid and a.id > ${filter.after}::bigint ${status}
    order by a.id limit ${filter.limit + 1}::int`)
  const page = rows.slice(0, filter.limit)
  return {
    attempts: page.map(({ sequence, ...a }) => ({ ...a, eventId: eventId(sellerId, sequence) })),
    pageInfo: { hasNext: rows.length > filter.limit, endCursor: page.at(-1)?.id ?? filter.after }
  }
}

function storesParam (storeIds: number[] | null) {
  return storeIds === null ? null : sql`${sql.param(storeIds)}::int[]`
}

function typesParam (types: EventType[] | null) {
  return types === null ? null : sql`${sql.param(types)}::event_type[]`
}
