import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import type { SubscriptionKind } from '../db/schema.js'
import { recordSellerEvent } from '../events/record-events.js'
import { shownUrl } from '../outbound/shown-url.js'

/*
 * The delivery queue's statements (deliveries, see db/schema.ts): claiming what is due, and
 * writing down what the attempts gave. The deliverer (deliverer.ts) sends in between.
 *
 * Per order, in order: a delivery is claimable only when no earlier delivery of the same subscription and
 * order is still PENDING (queued, in flight or waiting for a retry). A claim leaves the row PENDING with a
 * lease (`leased_until`, past the attempt's deadline), so the order's later events stay behind it, and a
 * deliverer that dies mid-attempt leaves a row that simply comes due again when the lease ends: at least
 * once, never out of order. Events of different orders, and of no order, go in parallel.
 *
 * An attempt counts when it is written (recordAttempts), not when it is claimed: a lease that ends unsent
 * (a killed worker's rows claimed ahead) costs the delivery nothing, and the log has every attempt number.
 *
 * Fair across subscriptions and sellers: a subscription may have at most its IN_FLIGHT deliveries leased at a
 * time, and a seller's endpoints together at most IN_FLIGHT_PER_SELLER, both counted from the leases of every
 * deliverer (less the attempts a deliverer has finished and not yet written). A claim takes its rows round
 * robin over sellers (each seller's first due row, then each one's second, ...; within a seller its endpoints
 * in turn), the operator's endpoint and each notification channel being a turn of their own, never counted
 * against a seller. So an endpoint that hangs with thousands queued holds four slots, not the whole pool, and
 * a seller whose ten endpoints all hang holds eight, not forty. Two deliverers claiming in the same instant
 * may each see the other's leases not yet committed: the caps are then per deliverer for that moment, and
 * the next claims see them all.
 */

/**
 * At most this many deliveries of one subscription in flight, across all deliverers: a seller's endpoint 4;
 * the operator's endpoint and the notification channels carry every seller's events, and are the operator's
 * own (one dead seller endpoint must not slow them, nor they a seller's).
 */
export const IN_FLIGHT = { seller: 4, shared: 32 } as const
const IN_FLIGHT_OF = sql.raw(`(case when w.kind = 'seller-webhook' then ${IN_FLIGHT.seller} else ${IN_FLIGHT.shared} end)`)
/**
 * At most this many deliveries of one seller's endpoints together in flight, across all deliverers: two
 * endpoints' worth. The per-endpoint cap alone let a seller with MAX_ENDPOINTS (10) endpoints that all hang
 * hold 40 of a deliverer's 64 slots (two such sellers held all of them); with this, 8, and a seller with one
 * or two endpoints is not slowed by it. What it costs: a seller's endpoints together send no faster than two
 * endpoints at their own cap. The shared subscriptions carry every seller's events and are not counted here.
 */
export const IN_FLIGHT_PER_SELLER = 8

export type ClaimedDelivery = {
  id: string
  subscriptionId: string
  kind: SubscriptionKind
  sellerId: number
  sequence: string
  /** The number this attempt will have: the attempts written so far + 1. */
  attempt: number
  /** A seller's endpoint's URL (the other kinds' addresses are the configuration's). */
  url: string | null
  /** The seller's name, for a notification's text. */
  sellerName: string
  /**
   * The sampled span that recorded the event (seller_events.traceparent), for the attempt's span to link
   * to; never sent. Null when there was none, or the event is no longer kept.
   */
  traceparent: string | null
}

/** Not in flight: never leased, or its lease ended (`d` a deliveries row). */
const UNLEASED = sql`(d.leased_until is null or d.leased_until <= now())`

/**
 * Claims up to `limit` due deliveries for an attempt that may take `leaseMs`: of each enabled subscription the
 * due heads of their orders, oldest first, as many as its room under IN_FLIGHT and, for a seller's endpoint,
 * its seller's room under IN_FLIGHT_PER_SELLER; taken by rank (every seller's first, and every shared
 * subscription's, before anyone's second) then due time. `finished` are this deliverer's attempts that
 * ended and are not yet written: their leases do not count against either room (they are not in flight), and
 * their rows stay unclaimable until written.
 */
export async function claimDeliveries (db: Db, limit: number, leaseMs: number, finished: readonly string[] = []):
Promise<ClaimedDelivery[]> {
  return await db.execute<ClaimedDelivery>(sql`
    with seller_leased as materialized (
      -- Over all of a seller's endpoints, disabled ones too: an attempt started before a disable still holds
      -- its slot (disabling and enabling endpoints must not lift the cap).
      select w.seller_id, count(*)::int as n from deliveries l join subscriptions w on w.id = l.subscription_id
      where w.kind = 'seller-webhook' and l.status = 'PENDING' and l.leased_until > now()
        and l.id <> all(${sql.param(finished)}::bigint[])
      group by w.seller_id
    ), ep as materialized (
      -- seller_room: null for a shared subscription (least() skips it), which is a turn of its own (shared).
      select w.id, s.seller_id, s.room as seller_room, case when s.seller_id is null then w.id end as shared,
        least(${IN_FLIGHT_OF} - (select count(*)::int from deliveries l
          where l.subscription_id = w.id and l.status = 'PENDING' and l.leased_until > now()
            and l.id <> all(${sql.param(finished)}::bigint[])), s.room) as room
      from subscriptions w left join lateral (
        select w.seller_id,
          ${IN_FLIGHT_PER_SELLER}::int - coalesce((select n from seller_leased k where k.seller_id = w.seller_id), 0) as room
        where w.kind = 'seller-webhook'
      ) s on true
      where w.status = 'ENABLED'
    ), per_endpoint as (
      select c.id, c.next_attempt_at, ep.seller_id, ep.shared, ep.seller_room,
        row_number() over (partition by c.subscription_id order by c.next_attempt_at, c.id) as rank
      from ep cross join lateral (
        select d.id, d.subscription_id, d.next_attempt_at from deliveries d
        where d.subscription_id = ep.id and d.status = 'PENDING' and d.next_attempt_at <= now() and ${UNLEASED}
          and (d.order_id is null or not exists (
            select 1 from deliveries p
            where p.subscription_id = d.subscription_id and p.order_id = d.order_id and p.status = 'PENDING' and p.id < d.id))
        order by d.next_attempt_at, d.id limit greatest(ep.room, 0)
      ) c
    ), ranked as (
      -- Ranked per seller (its endpoints' firsts, then their seconds, ...) and cut at the seller's room; a
      -- shared subscription is ranked alone, its room already applied.
      select r.id, r.next_attempt_at, r.seller_room,
        row_number() over (partition by r.seller_id, r.shared order by r.rank, r.next_attempt_at, r.id) as rank
      from per_endpoint r
    ), due as (
      -- Locked after the pick (a window cannot be locked): what another claim took meanwhile is skipped or,
      -- changed since this statement's snapshot, checked again.
      select d.id from deliveries d
      where d.id in (select id from ranked where seller_room is null or rank <= seller_room
          order by rank, next_attempt_at, id limit ${limit}::int)
        and d.status = 'PENDING' and ${UNLEASED}
      for update skip locked
    )
    update deliveries d set leased_until = now() + make_interval(secs => ${leaseMs / 1000}::float8)
    from due join deliveries q on q.id = due.id
      join subscriptions w on w.id = q.subscription_id
      join sellers s on s.id = q.seller_id
      left join seller_events e on e.seller_id = q.seller_id and e.sequence = q.sequence
    where d.id = due.id
    returning d.id::text as id, d.subscription_id::text as "subscriptionId", w.kind, d.seller_id as "sellerId",
      d.sequence::text as sequence, d.attempts + 1 as attempt, w.url, s.name as "sellerName", e.traceparent`)
}

/** An endpoint's secrets as they are now: the current one, and the one before a rotation while it still signs. */
export type EndpointSecrets = { secret: Buffer, previousSecret: Buffer | null }

/**
 * The secrets of these endpoints, read when their attempts start (not at the claim: a rotation between the
 * two must sign with the new secret too). An endpoint deleted meanwhile is missing.
 */
export async function readSecrets (db: Db, endpointIds: readonly string[]): Promise<Map<string, EndpointSecrets>> {
  const rows = await db.execute<EndpointSecrets & { id: string }>(sql`
    select id::text as id, secret,
      case when previous_secret_until > now() then previous_secret end as "previousSecret"
    from subscriptions where id = any(${sql.param(endpointIds)}::uuid[])`)
  return new Map(rows.map(({ id, ...secrets }) => [id, secrets]))
}

/** Gives back claims that were never attempted (a deliverer stopping): due at once, nothing counted. */
export async function releaseClaims (db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await db.execute(sql`update deliveries set leased_until = null
    where id = any(${sql.param(ids)}::bigint[]) and status = 'PENDING'`)
}

/**
 * Milliseconds until the next delivery may be claimed (0: one is due now), or null when none waits. Per
 * subscription: the first lease to end (its row is claimable again), and, below the in-flight caps, the first
 * unleased row's due time; at its own cap its due rows wait for one of its leases to end, at its seller's cap
 * for one of the seller's (a result written wakes the deliverer that holds it sooner). Due rows that cannot
 * be claimed must not answer 0: the deliverer would look again and again, claiming nothing.
 */
export async function nextDueInMs (db: Db): Promise<number | null> {
  const [row] = await db.execute<{ ms: number | null }>(sql`
    with seller_leased as materialized (
      select w.seller_id, count(*)::int as n, min(l.leased_until) as lease_ends
      from deliveries l join subscriptions w on w.id = l.subscription_id
      where w.kind = 'seller-webhook' and l.status = 'PENDING' and l.leased_until > now()
      group by w.seller_id
    )
    select greatest(0, extract(epoch from min(
      case when f.leased >= ${IN_FLIGHT_OF} then f.lease_ends
        when k.n >= ${IN_FLIGHT_PER_SELLER}::int then k.lease_ends
        else least(f.lease_ends, (
          select d.next_attempt_at from deliveries d
          where d.subscription_id = w.id and d.status = 'PENDING' and ${UNLEASED}
          order by d.next_attempt_at limit 1)) end) - now()) * 1000)::float8 as ms
    from subscriptions w cross join lateral (
      select count(*)::int as leased, min(l.leased_until) as lease_ends from deliveries l
      where l.subscription_id = w.id and l.status = 'PENDING' and l.leased_until > now()
    ) f left join seller_leased k on w.kind = 'seller-webhook' and k.seller_id = w.seller_id
    where w.status = 'ENABLED'`)
  return row?.ms ?? null
}

export interface AttemptResult {
  id: string
  subscriptionId: string
  kind: SubscriptionKind
  attempt: number
  succeeded: boolean
  httpStatus: number | null
  error: string | null
  durationMs: number
  answer: string
  /** Wait before the next attempt; null: no more (delivered, or given up). */
  retryInMs: number | null
  /** A seller's endpoint answered 410 Gone: it is disabled. */
  gone: boolean
}

/** How long an endpoint may fail every attempt before it is disabled. */
export const FAILING_DAYS = 5

/**
 * Writes down a set of attempts: the log rows, each delivery's new state, and the sellers' endpoints' health
 * (a success clears `failing_since`; failing five days, or a 410, disables the endpoint and records a
 * `webhook.endpoint_disabled` event in its seller's log, which its other endpoints and the feed get). The
 * operator's endpoint and the notification channels are the configuration's: they retry, and are never
 * disabled by their answers.
 */
export async function recordAttempts (db: Db, results: readonly AttemptResult[]): Promise<void> {
  if (results.length === 0) return
  const rows = results.map((r) => ({
    id: r.id,
    attempt: r.attempt,
    ok: r.succeeded,
    http: r.httpStatus,
    error: r.error === null ? null : storable(r.error),
    ms: r.durationMs,
    answer: storable(r.answer),
    retry: r.retryInMs
  }))
  const sellers = results.filter((r) => r.kind === 'seller-webhook')
  const succeeded = unique(sellers.filter((r) => r.succeeded).map((r) => r.subscriptionId))
  const failed = unique(sellers.filter((r) => !r.succeeded && !succeeded.includes(r.subscriptionId))
    .map((r) => r.subscriptionId))
  const gone = unique(sellers.filter((r) => r.gone).map((r) => r.subscriptionId))
  await db.execute(sql`
    with r as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json) as r(id bigint, attempt int, ok boolean, http int,
        error text, ms int, answer text, retry float8)
    ), logged as (
      insert into delivery_attempts (subscription_id, delivery_id, seller_id, sequence, type, attempt, succeeded, http_status,
        error, duration_ms, answer_head)
      select d.subscription_id, d.id, d.seller_id, d.sequence, d.type, r.attempt, r.ok, r.http, r.error, r.ms, r.answer
      from r join deliveries d on d.id = r.id
      order by r.id
    ), healthy as (
      -- An endpoint that answered is healthy again: in this statement, not one of its own per round (a
      -- statement per round that almost always changes nothing cost a tenth of the deliverer's time).
      update subscriptions set failing_since = null
      where id = any(${sql.param(succeeded)}::uuid[]) and failing_since is not null
    )
    update deliveries d set
      -- The attempt counts now that it was made (the claim only leased the row).
      attempts = greatest(d.attempts, r.attempt), leased_until = null,
      status = (case when r.ok then 'DELIVERED' when r.retry is null then 'FAILED' else 'PENDING' end)::delivery_status,
      next_attempt_at = case when r.retry is null then d.next_attempt_at else now() + make_interval(secs => r.retry / 1000) end,
      finished_at = case when r.retry is null then now() end
    from r where d.id = r.id and d.status = 'PENDING'`)

  if (failed.length > 0) {
    await db.execute(sql`update subscriptions set failing_since = now()
      where id = any(${sql.param(failed)}::uuid[]) and failing_since is null`)
    await disableEndpoints(db, sql`id = any(${sql.param(failed)}::uuid[])
      and failing_since < now() - make_interval(days => ${FAILING_DAYS}::int)`, `every attempt failed for ${FAILING_DAYS} days`)
  }
  if (gone.length > 0) {
    await disableEndpoints(db, sql`id = any(${sql.param(gone)}::uuid[])`, 'the endpoint answered 410 Gone')
  }
}

/** Disables the enabled endpoints `which` selects, each with its event, one transaction per endpoint. */
async function disableEndpoints (db: Db, which: ReturnType<typeof sql>, reason: string): Promise<void> {
  const candidates = await db.execute<{ id: string }>(sql`select id::text as id from subscriptions
    where status = 'ENABLED' and ${which}`)
  for (const { id } of candidates) {
    await db.transaction(async (tx) => {
      const [row] = await tx.execute<{ sellerId: number, url: string }>(sql`update subscriptions
        set status = 'DISABLED', disabled_reason = ${reason}, updated_at = now()
        where id = ${id}::uuid and status = 'ENABLED' returning seller_id as "sellerId", url`)
      if (row === undefined) return
      // The log's counter last: see record-events.ts.
      await recordSellerEvent(tx, row.sellerId, 'webhook.endpoint_disabled',
        `webhook endpoint ${id} (${shownUrl(row.url)}) disabled: ${reason}`)
    })
  }
}

function unique (values: string[]): string[] {
  return [...new Set(values)]
}

/** Text PostgreSQL stores: no NUL (an answer is whatever a receiver sent). */
function storable (text: string): string {
  return text.replaceAll('\u0000', '\uFFFD')
}
