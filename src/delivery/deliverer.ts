import { setMaxListeners } from 'node:events'
import pg from 'pg'
import type { Logger } from 'pino'
import type { Db } from '../db/client.js'
import { dispatchEvents } from './dispatch.js'
import {
  claimDeliveries, nextDueInMs, readSecrets, recordAttempts, releaseClaims, type AttemptResult, type ClaimedDelivery,
  type EndpointSecrets
} from './deliveries.js'
import { eventId, readEventBodies } from '../events/event-body.js'
import { retryWaitMs } from './retry-schedule.js'
import type { SecretBox } from '../webhooks/secret-box.js'
import type { Tracing } from '../tracing/tracing.js'
import { createHttpSender, type SendOptions } from '../outbound/http-sender.js'
import { standardWebhookHeaders, type SigningSecret } from '../outbound/standard-signature.js'
import type { LookupFunction } from 'node:net'
import { notificationOf } from '../effects/notification.js'
import { PermanentDeliveryError, type NotificationTransport } from '../effects/transports/types.js'
import type { NotificationChannel } from '../effects/jobs.js'
import type { SubscriptionKind } from '../db/schema.js'

/*
 * The one deliverer: the loop that pushes the events of the log to every subscription (a seller's endpoint,
 * the operator's endpoint, a notification channel: db/schema.ts subscriptions), in each worker process. Each
 * attempt goes out through its kind's sender: an HTTP POST signed the Standard Webhooks way (the sellers' and
 * the operator's endpoints), or the channel's notification transport (the log, WhatsApp Cloud). One queue,
 * one retry schedule, one delivery log and the same metrics for all. It wakes on a
 * notification (the seller_events trigger, migration 0014, NOTIFY at commit), not on a poll: queues the new
 * events (dispatch.ts), then keeps up to `concurrency` attempts in flight, claiming more as slots free and
 * as finished attempts let an order's next event go. Results are written in batches, one statement for
 * whatever finished meanwhile. A timer wakes it when the next retry comes due; a slow safety sweep (and a
 * sweep after LISTEN reconnects) covers a notification lost while the listening connection was down.
 */

/** The operator's endpoint for every seller, as configured (WEBHOOK_URL, WEBHOOK_SECRET). */
export interface OperatorEndpoint { url: string, key: Uint8Array }

export interface DelivererOptions {
  db: Db
  /** A session-level connection for LISTEN (not through a transaction pooler). */
  sessionUrl: string
  /** Opens the sellers' endpoints' secrets; null where none can be read (no WEBHOOK_SECRETS_KEY in production). */
  box: SecretBox | null
  /** The operator's endpoint; null when this worker's configuration has none. */
  operator: OperatorEndpoint | null
  /** Each notification channel's transport. */
  channels: Record<NotificationChannel, NotificationTransport>
  logger: Logger
  concurrency: number
  timeoutMs: number
  allowPrivateNetworks: boolean
  /** The notification transports' own deadline (WHATSAPP_TIMEOUT_MS): a lease outlasts the longer of the two. */
  notificationTimeoutMs?: number
  /** Tests only: a resolver standing in for DNS (rebinding). */
  lookup?: LookupFunction
  /**
   * The wait before the next attempt (retry-schedule.ts); tests of faults pass a faster one, so that a
   * ten-attempt run takes seconds rather than days.
   */
  retryWait?: typeof retryWaitMs
  /** The clock a signature's timestamp is read from (the time now); a test moves it to sign a retry later. */
  now?: () => Date
  /** Called after each attempt (metrics). */
  onAttempt?: (result: AttemptResult) => void
  /** A span per attempt when tracing is on. */
  tracing?: Tracing | null
}

/** Answers are read up to this much, then dropped. */
const MAX_ANSWER_BYTES = 64 * 1024
/** A sweep now and then even without a notification (none is lost in normal operation). */
const SWEEP_MS = 60_000
/** How soon to dispatch again when another deliverer held an endpoint. */
const BUSY_RETRY_MS = 50
/** Never look again sooner than this when due rows could not be claimed (another deliverer holds them). */
const MIN_WAIT_MS = 50

export class Deliverer {
  private readonly sender = createHttpSender()
  private readonly stopController = new AbortController()
  private listener: pg.Client | null = null
  private running = false
  private pumping = false
  /** The round running (a stop waits for its claim to land before giving back what was not started). */
  private round: Promise<void> = Promise.resolve()
  private again = false
  private dispatchDue = true
  private inFlight = 0
  private readonly finished: AttemptResult[] = []
  /** Attempts ended and not yet written: not in flight, so not counted against their subscription's or seller's cap. */
  private readonly unwritten = new Set<string>()
  /** Claimed, not yet started (see pump). */
  private readonly ready: ClaimedDelivery[] = []
  /** A batch's secrets being read (see startReady), and whether slots freed meanwhile. */
  private starting = false
  private startAgain = false
  /** Endpoints the last dispatch left at their cap of pending deliveries (dispatch.ts). */
  private full = new Set<string>()
  private flushing: Promise<void> | null = null
  private timer: NodeJS.Timeout | null = null
  private sweep: NodeJS.Timeout | null = null
  private idle: Promise<void> = Promise.resolve()
  private settleIdle: () => void = () => {}

  constructor (private readonly options: DelivererOptions) {
    // Every attempt in flight listens on the stop signal: that many listeners are expected, not a leak.
    setMaxListeners(options.concurrency + 10, this.stopController.signal)
  }

  async start (): Promise<void> {
    this.running = true
    await this.listen()
    this.sweep = setInterval(() => this.wake(true), SWEEP_MS)
    this.sweep.unref()
    this.wake(true)
  }

  /** Stops claiming, lets the attempts in flight end (aborted after `graceMs`), writes their results. */
  async stop (graceMs = 5000): Promise<void> {
    if (!this.running) return
    this.running = false
    if (this.timer) clearTimeout(this.timer)
    if (this.sweep) clearInterval(this.sweep)
    const abort = setTimeout(() => this.stopController.abort(), graceMs)
    await this.round
    await this.idle
    clearTimeout(abort)
    await this.flush()
    // Claimed ahead but never started: due again now, for this or another deliverer, not after the lease.
    const unsent = this.ready.splice(0)
    await releaseClaims(this.options.db, unsent.map((d) => d.id)).catch((err: Error) => {
      this.options.logger.warn({ err: err.message, deliveries: unsent.length }, 'claimed deliveries not released: due when their lease ends')
    })
    this.sender.close()
    await this.listener?.end().catch(() => {})
    this.listener = null
  }

  private async listen (): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.sessionUrl, application_name: 'order-exchange-webhooks' })
    const retry = (): void => {
      if (this.listener !== client) return
      this.listener = null
      client.end().catch(() => {})
      if (!this.running) return
      setTimeout(() => {
        if (this.running) this.listen().then(() => this.wake(true), retry)
      }, 1000).unref()
    }
    this.listener = client
    client.on('error', (err) => {
      this.options.logger.warn({ err: err.message }, 'webhook listener connection lost: reconnecting')
      retry()
    })
    client.on('end', retry)
    client.on('notification', () => this.wake(true))
    try {
      await client.connect()
      await client.query('LISTEN seller_events')
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'webhook listener could not connect: retrying')
      retry()
    }
  }

  /** Runs the loop now (again, if it is running). */
  private wake (dispatch = false): void {
    if (dispatch) this.dispatchDue = true
    if (!this.running) return
    if (this.pumping) {
      this.again = true
      return
    }
    this.pumping = true
    this.round = this.pump().catch((err: Error) => {
      this.options.logger.warn({ err: err.message }, 'webhook delivery round failed: retrying shortly')
      this.schedule(1000)
    }).finally(() => { this.pumping = false })
  }

  private async pump (): Promise<void> {
    do {
      this.again = false
      if (this.dispatchDue) {
        this.dispatchDue = false
        const { busy, full } = await dispatchEvents(this.options.db)
        // Another deliverer was dispatching an endpoint: its snapshot may not hold what woke us.
        if (busy > 0) setTimeout(() => this.wake(true), BUSY_RETRY_MS).unref()
        this.full = new Set(full)
      }
      // Claimed ahead, up to a second round: a slot that frees takes the next one at once instead of
      // waiting for a claim (a claim is tens of ms; a local delivery one). Only heads of their orders are
      // claimable, so what waits here never holds back an order's later event.
      const room = this.options.concurrency * 2 - this.inFlight - this.ready.length
      if (room <= 0 || this.ready.length >= this.options.concurrency) return
      const leaseMs = Math.max(this.options.timeoutMs, this.options.notificationTimeoutMs ?? 0) + 10_000
      const claimed = await claimDeliveries(this.options.db, room, leaseMs, [...this.unwritten])
      this.ready.push(...claimed)
      this.startReady()
      if (claimed.length === room) this.again = true
    } while (this.again && this.running)
    if (this.inFlight === 0 && this.ready.length === 0 && this.running) {
      const due = await nextDueInMs(this.options.db)
      if (due !== null) this.schedule(Math.max(due, MIN_WAIT_MS))
    }
  }

  private schedule (ms: number): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.timer = null; this.wake() }, Math.min(ms, SWEEP_MS))
    this.timer.unref()
  }

  /**
   * Starts claimed deliveries while slots are free, each signed with every secret its endpoint has when it
   * starts (a rotation after the claim signs too): one read of the secrets per batch started, the slots
   * held meanwhile; slots that free during the read are filled by the next batch.
   */
  private startReady (): void {
    if (this.starting) {
      this.startAgain = true
      return
    }
    const n = Math.min(this.options.concurrency - this.inFlight, this.ready.length)
    if (!this.running || n <= 0) return
    const batch = this.ready.splice(0, n)
    this.starting = true
    this.hold(batch.length)
    const endpoints = [...new Set(batch.filter((d) => d.kind === 'seller-webhook').map((d) => d.subscriptionId))]
    Promise.all([
      endpoints.length === 0 ? new Map<string, EndpointSecrets>() : readSecrets(this.options.db, endpoints),
      readEventBodies(this.options.db, batch)
    ]).then(([secrets, bodies]) => {
      // Stopping meanwhile: given back with the rest claimed ahead (stop waits for the slots held here).
      if (!this.running) this.ready.unshift(...batch)
      for (const d of batch) {
        const sealed = secrets.get(d.subscriptionId)
        // An endpoint deleted since the claim: its deliveries went with it.
        if (this.running && (d.kind !== 'seller-webhook' || sealed !== undefined)) {
          this.send(d, bodies.get(`${d.sellerId}:${d.sequence}`) ?? null, sealed)
        } else this.free()
      }
    }, (err: Error) => {
      this.options.logger.warn({ err: err.message, deliveries: batch.length }, 'deliveries not started (secrets or events not read): starting again shortly')
      this.ready.unshift(...batch)
      for (let i = 0; i < batch.length; i++) this.free()
      setTimeout(() => this.startReady(), 1000).unref()
    }).finally(() => {
      this.starting = false
      if (this.startAgain) {
        this.startAgain = false
        this.startReady()
      }
    })
  }

  /** Takes `n` slots (a stop waits until every slot is free again). */
  private hold (n: number): void {
    if (this.inFlight === 0) this.idle = new Promise((resolve) => { this.settleIdle = resolve })
    this.inFlight += n
  }

  private free (): void {
    this.inFlight--
    if (this.inFlight === 0) this.settleIdle()
  }

  /** Sends in a slot held by startReady. */
  private send (delivery: ClaimedDelivery, body: string | null, sealed: EndpointSecrets | undefined): void {
    this.tracedAttempt(delivery, body, sealed).then((result) => {
      this.unwritten.add(delivery.id)
      this.finished.push(result)
      this.options.onAttempt?.(result)
      this.logFailure(delivery, result)
    }, (err: Error) => {
      // attempt() does not throw; should it, the lease brings the delivery back.
      this.options.logger.error({ err: err.message, deliveryId: delivery.id }, 'webhook attempt failed unexpectedly')
    }).finally(() => {
      this.free()
      this.startReady()
      // The free slot is refilled at once (with events of other orders: the claim holds back this order's
      // next event until the result below is written); once written, the order's next event can go too.
      this.wake()
      this.flush().then(() => this.wake(), () => this.schedule(1000))
    })
  }

  /**
   * The attempt in a span of its own trace (the deliverer is woken by the event log, not by a request),
   * linked to the span that recorded its event when that was sampled: a link, not a parent, as an attempt
   * may come hours later (a retry, a replay) and each is a trace of its own. An attempt sends one event.
   * The endpoint is named by id and host: its URL may hold a token, and the secret and body stay out.
   */
  private async tracedAttempt (d: ClaimedDelivery, body: string | null, sealed: EndpointSecrets | undefined):
  Promise<AttemptResult> {
    const tracing = this.options.tracing
    if (!tracing) return await this.attempt(d, body, sealed)
    // An HTTP subscriber is named by host (its URL may hold a token); a notification by its channel's transport.
    const http = d.kind === 'seller-webhook' || d.kind === 'operator-webhook'
    let host: string | undefined
    if (http) try { host = new URL(d.url ?? this.options.operator?.url ?? '').hostname } catch {}
    return await tracing.span('webhook delivery', {
      kind: 'client',
      root: true,
      links: d.traceparent === null ? undefined : [d.traceparent],
      attributes: {
        'http.request.method': http ? 'POST' : undefined,
        'server.address': host,
        'order_exchange.notification.transport': http ? undefined : this.options.channels[channelOf(d.kind)].name,
        'order_exchange.webhook.endpoint_id': d.subscriptionId,
        'order_exchange.delivery.kind': d.kind,
        'order_exchange.webhook.delivery_id': d.id,
        'order_exchange.webhook.event_id': eventId(d.sellerId, d.sequence),
        'order_exchange.webhook.attempt': d.attempt
      }
    }, async (span) => {
      const result = await this.attempt(d, body, sealed)
      const outcome = result.succeeded ? 'delivered' : result.gone ? 'gone' : result.retryInMs === null ? 'given_up' : 'failed'
      span.setAttribute('order_exchange.webhook.outcome', outcome)
      if (result.httpStatus !== null) span.setAttribute('http.response.status_code', result.httpStatus)
      if (!result.succeeded) tracing.markFailed(span, result.httpStatus === null ? 'no_response' : String(result.httpStatus))
      return result
    })
  }

  private async attempt (d: ClaimedDelivery, body: string | null, sealed: EndpointSecrets | undefined):
  Promise<AttemptResult> {
    const base = { id: d.id, subscriptionId: d.subscriptionId, kind: d.kind, attempt: d.attempt }
    const failed = (error: string, retry: boolean): AttemptResult => ({
      ...base,
      succeeded: false,
      httpStatus: null,
      error,
      durationMs: 0,
      answer: '',
      retryInMs: retry ? this.retryWait(d.attempt, null) : null,
      gone: false
    })
    if (body === null) return failed('event no longer kept (EVENT_RETENTION_DAYS): given up', false)
    if (d.kind === 'seller-webhook' || d.kind === 'operator-webhook') {
      let target: { url: string, secrets: SigningSecret[], allowPrivateNetworks: boolean }
      if (d.kind === 'operator-webhook') {
        const operator = this.options.operator
        if (operator === null) return failed('WEBHOOK_URL is not set in this worker\'s configuration', true)
        target = { url: operator.url, secrets: [operator.key], allowPrivateNetworks: true }
      } else {
        const secrets = this.openSecrets(d.subscriptionId, sealed)
        // Sealed under another WEBHOOK_SECRETS_KEY (changed without re-keying) or damaged: nothing can be
        // signed. A failed attempt in the log says so, and the schedule (and the five-day rule) apply.
        if (secrets === null) return failed('the endpoint\'s secret cannot be read: was WEBHOOK_SECRETS_KEY changed?', true)
        target = { url: d.url ?? '', secrets, allowPrivateNetworks: this.options.allowPrivateNetworks }
      }
      return await this.post(d, base, target, body)
    }
    const channel = channelOf(d.kind)
    const transport = this.options.channels[channel]
    const notification = notificationOf(body, channel, d.sellerName)
    if (notification === null) return failed('its order no longer exists: nothing to tell', false)
    const started = performance.now()
    try {
      await transport.send(notification, this.stopController.signal)
    } catch (err) {
      const result = failed(`${transport.name}: ${(err as Error).message}`, !(err instanceof PermanentDeliveryError))
      return { ...result, durationMs: Math.round(performance.now() - started) }
    }
    return { ...base, succeeded: true, httpStatus: null, error: null, durationMs: Math.round(performance.now() - started), answer: '', retryInMs: null, gone: false }
  }

  /**
   * The operator's own subscriptions (its endpoint, the notification channels) say in the log when an attempt
   * fails: a warning while it will be retried, an error when it is given up. A seller's endpoint failing is
   * the seller's to see, in its delivery log, not the operator's.
   */
  private logFailure (d: ClaimedDelivery, r: AttemptResult): void {
    if (r.succeeded || d.kind === 'seller-webhook') return
    const fields = {
      kind: d.kind, deliveryId: d.id, eventId: eventId(d.sellerId, d.sequence), attempt: r.attempt, err: r.error
    }
    if (r.retryInMs === null) this.options.logger.error(fields, 'delivery failed for good: no more retries')
    else this.options.logger.warn({ ...fields, retryInMs: r.retryInMs }, 'delivery attempt failed: retried later')
  }

  private retryWait (attempt: number, retryAfterMs: number | null): number | null {
    return (this.options.retryWait ?? retryWaitMs)(attempt, retryAfterMs)
  }

  /** A seller's endpoint's secrets, opened (null when they cannot be). */
  private openSecrets (id: string, sealed: EndpointSecrets | undefined): string[] | null {
    const box = this.options.box
    if (box === null || sealed === undefined) return null
    try {
      const secrets = [box.open(id, sealed.secret)]
      if (sealed.previousSecret !== null) secrets.push(box.open(id, sealed.previousSecret))
      return secrets
    } catch {
      return null
    }
  }

  /** POSTs the event, signed with every secret, through the one HTTP sender. */
  private async post (d: ClaimedDelivery, base: Pick<AttemptResult, 'id' | 'subscriptionId' | 'kind' | 'attempt'>,
    target: { url: string, secrets: SigningSecret[], allowPrivateNetworks: boolean }, body: string):
    Promise<AttemptResult> {
    const signedAt = this.options.now?.() ?? new Date()
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'order-exchange-webhooks/2',
      ...standardWebhookHeaders(eventId(d.sellerId, d.sequence), signedAt, body, target.secrets)
    }
    const options: SendOptions = {
      allowPrivateNetworks: target.allowPrivateNetworks,
      timeoutMs: this.options.timeoutMs,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      stop: this.stopController.signal,
      ...(this.options.lookup ? { lookup: this.options.lookup } : {})
    }
    const sent = await this.sender.send(target.url, headers, body, options)
    const gone = sent.status === 410 && d.kind === 'seller-webhook'
    return {
      ...base,
      succeeded: sent.delivered,
      httpStatus: sent.status,
      error: sent.error,
      durationMs: Math.round(sent.durationMs),
      answer: sent.answerHead,
      retryInMs: sent.delivered || gone ? null : this.retryWait(d.attempt, sent.retryAfterMs),
      gone
    }
  }

  /** Writes what finished, in one statement (one flush at a time; the next takes what came meanwhile). */
  private async flush (): Promise<void> {
    while (this.flushing) await this.flushing
    if (this.finished.length === 0) return
    const batch = this.finished.splice(0)
    // A subscription at its cap of pending deliveries has room again once one is finished: dispatch resumes.
    if (batch.some((r) => r.retryInMs === null && this.full.has(r.subscriptionId))) this.dispatchDue = true
    this.flushing = recordAttempts(this.options.db, batch).catch((err: Error) => {
      // Not written: the deliveries come due again when their lease ends and are sent again (at least once).
      this.options.logger.warn({ err: err.message, attempts: batch.length }, 'delivery attempts not recorded: they will be retried')
    }).finally(() => {
      for (const r of batch) this.unwritten.delete(r.id)
      this.flushing = null
    })
    await this.flushing
  }
}

/** The notification channel of a notify-* subscription. */
export function channelOf (kind: SubscriptionKind): NotificationChannel {
  return kind.slice('notify-'.length) as NotificationChannel
}
