// The sellers' webhook endpoints in tests: the market, the endpoint routes, a real deliverer, verifying receivers.
import pino from 'pino'
import type { Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import { Deliverer, type DelivererOptions } from '../../src/delivery/deliverer.js'
import { logTransport } from '../../src/effects/transports/log.js'
import { SecretBox } from '../../src/webhooks/secret-box.js'
import { WEBHOOK_ENDPOINTS_PATH } from '../../src/routes/webhook-endpoints.js'
import { eventMarket, type EventMarket } from './events.js'
import { eventually } from './eventually.js'
import { startReceiver, type Received } from './receiver.js'

/*
 * The sellers' webhook endpoints in tests: the event market (a real database fed through the platform API),
 * the endpoint routes over app.inject with the seller's API key, a real deliverer on the same database
 * (LISTEN included), and receivers that verify every delivery with the standardwebhooks package itself.
 */

export interface Delivered {
  id: string
  type: string
  sequence: number
  orderId: string | null
  body: Record<string, any>
  at: number
}

export interface WebhookMarket extends EventMarket {
  /** A request to the endpoint routes as seller `seller` (its API key as a Bearer token). */
  webhooks: (seller: number, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path?: string, body?: unknown) =>
  Promise<{ status: number, json: any }>
  /** Starts a deliverer (stopped in teardown). */
  deliverer: (options?: Partial<DelivererOptions>) => Promise<Deliverer>
}

/**
 * The receivers here are on this machine, so the market opts in to private networks (off by default in
 * every environment); a test of the address policy passes WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false'.
 */
export async function webhookMarket (t: Test, env: Record<string, string> = {}): Promise<WebhookMarket> {
  const m = await eventMarket(t, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env })
  return {
    ...m,
    async webhooks (seller, method, path = '', body) {
      const res = await m.app.inject({
        method,
        url: `${WEBHOOK_ENDPOINTS_PATH}${path}`,
        headers: { authorization: `Bearer ${await m.apiKey(seller)}` },
        ...(body === undefined ? {} : { payload: body as object })
      })
      return { status: res.statusCode, json: res.body === '' ? null : res.json() }
    },
    async deliverer (options = {}) {
      const silent = pino({ level: 'silent' })
      const log = logTransport(silent)
      const deliverer = new Deliverer({
        db: m.database.db,
        sessionUrl: m.database.url,
        box: SecretBox.of(m.config)!,
        operator: null,
        channels: { seller: log, customer: log, messaging: log },
        logger: silent,
        concurrency: 16,
        timeoutMs: 2000,
        allowPrivateNetworks: true,
        ...options
      })
      await deliverer.start()
      t.teardown(() => deliverer.stop(100))
      return deliverer
    }
  }
}

/**
 * A receiver that verifies each request with `secrets` (any one may sign it: a rotation) and records what
 * verified. `respond` decides the answer as startReceiver's does.
 */
export async function verifyingReceiver (t: Test, secrets: () => string[],
  respond: (r: Received, index: number) => number | 'hang' | Promise<number | 'hang'> = () => 200) {
  const delivered: Delivered[] = []
  const unverified: string[] = []
  const receiver = await startReceiver(t, (r, index) => {
    const ok = secrets().some((secret) => {
      try {
        new Webhook(secret).verify(r.rawBody, r.headers as Record<string, string>)
        return true
      } catch {
        return false
      }
    })
    if (!ok) unverified.push(r.rawBody.slice(0, 200))
    const body = JSON.parse(r.rawBody)
    const answer = respond(r, index)
    Promise.resolve(answer).then((status) => {
      if (status !== 'hang' && status >= 200 && status < 300 && ok) {
        delivered.push({
          id: String(r.headers['webhook-id']),
          type: body.type,
          sequence: Number(body.sequence),
          orderId: body.data.order?.orderId ?? null,
          body,
          at: r.at
        })
      }
    }, () => {})
    return answer
  })
  return { ...receiver, delivered, unverified }
}

/** Waits until every queued delivery is finished and written (a receiver sees one before its attempt is logged). */
export async function allRecorded (t: Test, m: EventMarket, timeoutMs = 30_000): Promise<void> {
  await eventually(t, 'every delivery recorded', async () =>
    (await m.database.sql`select 1 from deliveries where status = 'PENDING' limit 1`).length === 0, { timeoutMs })
}
