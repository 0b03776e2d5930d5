import { timingSafeEqual } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { RequestError } from '../errors.js'
import { gaugeFromRead, readPerScrape, scrapedGauge, type ServiceMetrics } from '../metrics.js'
import { readDeliveryBacklog } from '../delivery/backlog.js'

/*
 * Metrics: every answer's duration by route pattern and status; the database pool, the job queue and the
 * webhook endpoints' backlog, read at scrape time; and GET /metrics for a caller with the metrics token
 * (METRICS_TOKEN; the admin port of server.ts serves the same registry without one). The other counters
 * are counted where they happen.
 */

declare module 'fastify' {
  interface FastifyInstance {
    metrics: ServiceMetrics
  }
}

function sameSecret (given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

function bearer (request: FastifyRequest): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
  return m ? m[1]! : null
}

export default fp(async function metricsPlugin (app, options: { metrics: ServiceMetrics }) {
  const { metrics } = options
  app.decorate('metrics', metrics)

  app.addHook('onResponse', async (request, reply) => {
    metrics.requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000
    )
  })

  scrapedGauge(metrics, 'oxs_db_pool_connections',
    'The database pool by state: its size (max), connections busy, idle and opening (connecting), and statements waiting for one (waiting)',
    ['state'], (gauge) => {
      const stats = app.database.poolStats()
      gauge.set({ state: 'max' }, stats.max)
      gauge.set({ state: 'busy' }, stats.busy)
      gauge.set({ state: 'idle' }, stats.idle)
      gauge.set({ state: 'connecting' }, stats.connecting)
      gauge.set({ state: 'waiting' }, stats.waiting)
    })

  // The queue as graphile-worker keeps it: jobs due and not taken (waiting), taken (running), and how
  // long the oldest due job has waited, per task. One statement per scrape for both gauges.
  const queue = readPerScrape(() => app.database.db.execute<{ task: string, waiting: number, running: number, oldest: number }>(sql`
    select task_identifier as task,
           count(*) filter (where locked_at is null and run_at <= now() and attempts < max_attempts)::int as waiting,
           count(*) filter (where locked_at is not null)::int as running,
           coalesce(extract(epoch from now() - min(run_at) filter (where locked_at is null and run_at <= now() and attempts < max_attempts)), 0)::float8 as oldest
    from graphile_worker.jobs group by task_identifier`))
  gaugeFromRead(metrics, queue, 'oxs_job_queue_jobs', 'Jobs of the effects queue by task and state (waiting: due, not taken; running)',
    ['task', 'state'], (gauge, rows) => {
      for (const row of rows) {
        gauge.set({ task: row.task, state: 'waiting' }, row.waiting)
        gauge.set({ task: row.task, state: 'running' }, row.running)
      }
    })
  gaugeFromRead(metrics, queue, 'oxs_job_queue_oldest_waiting_seconds', 'How long the oldest due job of each task has waited', ['task'],
    (gauge, rows) => { for (const row of rows) gauge.set({ task: row.task }, row.oldest) })

  // The sellers' webhook endpoints: how many, and how far their deliveries are behind (delivery-backlog.ts).
  const backlog = readPerScrape(() => readDeliveryBacklog(app.database.db))
  gaugeFromRead(metrics, backlog, 'oxs_webhook_endpoints', 'The sellers\' webhook endpoints by status (ENABLED, DISABLED)', ['status'],
    (gauge, read) => { for (const [status, n] of Object.entries(read.endpoints)) gauge.set({ status }, n) })
  gaugeFromRead(metrics, backlog, 'oxs_webhook_events_behind', 'Events not yet queued for the enabled endpoints of their sellers', [],
    (gauge, read) => gauge.set(read.eventsBehind))
  gaugeFromRead(metrics, backlog, 'oxs_webhook_deliveries_pending',
    'Deliveries to enabled endpoints not yet delivered or given up: due now (due), or scheduled later (scheduled: a retry, or in flight)',
    ['state'], (gauge, read) => {
      gauge.set({ state: 'due' }, read.due)
      gauge.set({ state: 'scheduled' }, read.scheduled)
    })
  gaugeFromRead(metrics, backlog, 'oxs_webhook_oldest_due_seconds', 'How long the oldest due delivery to an enabled endpoint has waited', [],
    (gauge, read) => gauge.set(read.oldestDueSeconds))

  const token = app.config.METRICS_TOKEN
  if (token) {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = bearer(request)
      if (given === null || !sameSecret(given, token)) throw new RequestError.Unauthorized()
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
    })
  }
}, { name: 'metrics', dependencies: ['database'] })
