import { sql } from 'drizzle-orm'
import type { Db } from '../db/client.js'
import { recordSellerEvent } from '../events/record-events.js'
import { EVENT_BODY_TEXT } from './event-body.js'
import { shownUrl } from '../outbound/shown-url.js'

/*
 * The delivery queue's statements (webhook_deliveries, see db/schema.ts): claiming what is due, and
 * writing down what the attempts gave. The deliverer (deliverer.ts) sends in between.
 *
 * Per order, in order: a delivery is claimable only when no earlier delivery of the same endpoint and
 * order is still PENDING (queued, in flight or waiting for a retry). A claim leaves the row PENDING with
 * its next attempt moved past the attempt's deadline, so the order's later events stay behind it, and a
 * deliverer that dies mid-attempt leaves a row that simply comes due again: at least once, never out of
 * order. Events of different orders, and of no order, go in parallel.
 */

export type ClaimedDelivery = {
  id: string
  endpointId: string
  sellerId: number
  sequence: string
  attempt: number
  url: string
  secret: Buffer
  /** The secret before a rotation, while it still signs. */
  previousSecret: Buffer | null
  /** Null when the event is no longer kept (retention removed it before it could be sent). */
  body: string | null
  /**
   * The sampled span that recorded the event (seller_events.traceparent), for the attempt's span to link
   * to; never sent. Null when there was none, or the event is no longer kept.
   */
  traceparent: string | null
}

/** What is claimable now, as a condition on `d` (a webhook_deliveries row) joined to its endpoint `w`. */
const CLAIMABLE = sql`d.status = 'PENDING' and d.next_attempt_at <= now() and w.status = 'ENABLED'
  and (d.order_id is null or not exists (
    select 1 from webhook_deliveries p
    where p.endpoint_id = d.endpoint_id and p.order_id = d.order_id and p.status = 'PENDING' and p.id < d.id))`

/** Claims up to `limit` due deliveries for an attempt that may take `leaseMs`. */
export async function claimDeliveries (db: Db, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  return await db.execute<ClaimedDelivery>(sql`
    with due as (
      select d.id from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
      where ${CLAIMABLE}
      order by d.next_attempt_at, d.id limit ${limit}::int
      for update of d skip locked
    )
    update webhook_deliveries d set attempts = d.attempts + 1,
      next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}::float8)
    from due join webhook_deliveries q on q.id = due.id
      join webhook_endpoints w on w.id = q.endpoint_id
      left join seller_events e on e.seller_id = q.seller_id and e.sequence = q.sequence
    where d.id = due.id
    returning d.id::text as id, d.endpoint_id::text as "endpointId", d.seller_id as "sellerId",
      d.sequence::text as sequence, d.attempts as attempt, w.url, w.secret,
      case when w.previous_secret_until > now() then w.previous_secret end as "previousSecret",
      case when e.sequence is null then null else ${EVENT_BODY_TEXT} end as body, e.traceparent`)
}

/** Gives back claims that were never attempted (a deliverer stopping): due at once, the attempt not counted. */
export async function releaseClaims (db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await db.execute(sql`update webhook_deliveries set attempts = attempts - 1, next_attempt_at = now()
    where id = any(${sql.param(ids)}::bigint[]) and status = 'PENDING'`)
}

/** Milliseconds until the next delivery comes due (0: one is due now), or null when none waits. */
export async function nextDueInMs (db: Db): Promise<number | null> {
  const [row] = await db.execute<{ ms: number | null }>(sql`
    select greatest(0, extract(epoch from min(d.next_attempt_at) - now()) * 1000)::float8 as ms
    from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
    where d.status = 'PENDING' and w.status = 'ENABLED'`)
  return row?.ms ?? null
}

export interface AttemptResult {
  id: string
  endpointId: string
  attempt: number
  succeeded: boolean
  httpStatus: number | null
  error: string | null
  durationMs: number
  answer: string
  /** Wait before the next attempt; null: no more (delivered, or given up). */
  retryInMs: number | null
  /** The endpoint answered 410 Gone: it is disabled. */
  gone: boolean
}

/** How long an endpoint may fail every attempt before it is disabled. */
export const FAILING_DAYS = 5

/**
 * Writes down a set of attempts: the log rows, each delivery's new state, and the endpoints' health (a
 * success clears `failing_since`; failing five days, or a 410, disables the endpoint and records a
 * `webhook.endpoint_disabled` event in its seller's log, which its other endpoints and the feed get).
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
  await db.execute(sql`
    with r as (
      select * from json_to_recordset(${JSON.stringify(rows)}::json) as r(id bigint, attempt int, ok boolean, http int,
        error text, ms int, answer text, retry float8)
    ), logged as (
      insert into webhook_attempts (endpoint_id, delivery_id, seller_id, sequence, type, attempt, succeeded, http_status,
        error, duration_ms, answer_head)
      select d.endpoint_id, d.id, d.seller_id, d.sequence, d.type, r.attempt, r.ok, r.http, r.error, r.ms, r.answer
      from r join webhook_deliveries d on d.id = r.id
      order by r.id
    )
    update webhook_deliveries d set
      status = (case when r.ok then 'DELIVERED' when r.retry is null then 'FAILED' else 'PENDING' end)::webhook_delivery_status,
      next_attempt_at = case when r.retry is null then d.next_attempt_at else now() + make_interval(secs => r.retry / 1000) end,
      finished_at = case when r.retry is null then now() end
    from r where d.id = r.id and d.status = 'PENDING'`)

  const succeeded = unique(results.filter((r) => r.succeeded).map((r) => r.endpointId))
  const failed = unique(results.filter((r) => !r.succeeded && !succeeded.includes(r.endpointId))
    .map((r) => r.endpointId))
  const gone = unique(results.filter((r) => r.gone).map((r) => r.endpointId))
  if (succeeded.length > 0) {
    await db.execute(sql`update webhook_endpoints set failing_since = null
      where id = any(${sql.param(succeeded)}::uuid[]) and failing_since is not null`)
  }
  if (failed.length > 0) {
    await db.execute(sql`update webhook_endpoints set failing_since = now()
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
  const candidates = await db.execute<{ id: string }>(sql`select id::text as id from webhook_endpoints
    where status = 'ENABLED' and ${which}`)
  for (const { id } of candidates) {
    await db.transaction(async (tx) => {
      const [row] = await tx.execute<{ sellerId: number, url: string }>(sql`update webhook_endpoints
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
