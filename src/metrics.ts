import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/*
 * Every metric of the service, defined once (prom-client). One registry per process: server.ts makes it
 * and hands it to the app and the worker; a test's app gets its own. Scraped at GET /metrics
 * (plugins/metrics.ts). Label values are always from a closed set (route patterns, codes, outcomes):
 * nothing from a request reaches a label.
 */

export interface ServiceMetrics {
  registry: Registry
  requestDuration: Histogram<'method' | 'route' | 'status_code'>
  statusItems: Counter<'outcome' | 'code'>
  syncRows: Counter<'outcome'>
  rateLimited: Counter<'route'>
  shed: Counter<'reason'>
  deliveries: Counter<'transport' | 'result'>
  graphqlPassThrough: Counter<'outcome'>
  graphqlReads: Counter<'database'>
  replicaLag: Gauge
}

export function createMetrics (): ServiceMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, prefix: 'oxs_' })
  return {
    registry,
    requestDuration: new Histogram({
      name: 'oxs_http_request_duration_seconds',
      help: 'Time to answer a request, by route pattern, method and status',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry]
    }),
    statusItems: new Counter({
      name: 'oxs_status_update_items_total',
      help: 'Items of status update batches by outcome (changed, unchanged, error) and error code',
      labelNames: ['outcome', 'code'],
      registers: [registry]
    }),
    syncRows: new Counter({
      name: 'oxs_shipment_sync_rows_total',
      help: 'Rows of outstanding shipment syncs by outcome (inserted, updated, unchanged, duplicate, failed)',
      labelNames: ['outcome'],
      registers: [registry]
    }),
    rateLimited: new Counter({
      name: 'oxs_rate_limit_rejections_total',
      help: 'Requests refused with 429 by route pattern',
      labelNames: ['route'],
      registers: [registry]
    }),
    shed: new Counter({
      name: 'oxs_load_shed_total',
      help: 'Requests refused with 503 because the process was overloaded, by reason (eventLoopDelay, heapUsedBytes)',
      labelNames: ['reason'],
      registers: [registry]
    }),
    deliveries: new Counter({
      name: 'oxs_notification_deliveries_total',
      help: 'Notification delivery attempts by transport and result (delivered, failed, given_up)',
      labelNames: ['transport', 'result'],
      registers: [registry]
    }),
    graphqlPassThrough: new Counter({
      name: 'oxs_graphql_pass_through_total',
      help: 'GraphQL queries by how they were answered: passed through (answered: PostgreSQL wrote the JSON), or by the ' +
        'standard execution because the document was not covered (not_covered), its input was refused (input_refused), ' +
        'its cost was refused (cost_refused), or the database failed (database_error)',
      labelNames: ['outcome'],
      registers: [registry]
    }),
    graphqlReads: new Counter({
      name: 'oxs_graphql_reads_total',
      help: 'GraphQL requests by the database their reads went to: replica (READ_DATABASE_URL), or primary ' +
        '(no replica, or it was further behind than READ_MAX_LAG_MS, or its lag was unknown)',
      labelNames: ['database'],
      registers: [registry]
    }),
    replicaLag: new Gauge({
      name: 'oxs_replica_lag_seconds',
      help: 'How far the read replica is behind the primary, measured from both WAL positions every REPLICA_LAG_POLL_MS ' +
        '(-1: unknown, the replica did not answer; 0 without READ_DATABASE_URL)',
      registers: [registry]
    })
  }
}

/** Gauges read from elsewhere when scraped (the database pool, the job queue). */
export function scrapedGauge<L extends string> (metrics: ServiceMetrics, name: string, help: string, labelNames: L[],
  collect: (gauge: Gauge<L>) => Promise<void> | void): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [metrics.registry],
    async collect () { await collect(this) }
  })
}

/**
 * One read for several gauges of a scrape (a statement of the database's): prom-client starts every gauge's
 * collect at once, so they find the read in flight and share it; the next scrape reads again. A failed read
 * (the database away) gives null.
 */
export function readPerScrape<T> (read: () => Promise<T>): () => Promise<T | null> {
  let inFlight: Promise<T | null> | null = null
  return () => {
    inFlight ??= read().catch(() => null).finally(() => { inFlight = null })
    return inFlight
  }
}

/**
 * A gauge set from `read` (readPerScrape) at each scrape, emptied first: when the read fails it has no
 * value rather than a stale one, and the scrape still answers.
 */
export function gaugeFromRead<T, L extends string> (metrics: ServiceMetrics, read: () => Promise<T | null>,
  name: string, help: string, labelNames: L[], set: (gauge: Gauge<L>, value: T) => void): Gauge<L> {
  return scrapedGauge(metrics, name, help, labelNames, async (gauge) => {
    gauge.reset()
    const value = await read()
    if (value !== null) set(gauge, value)
  })
}

/**
 * The registry on an admin port of its own (METRICS_PORT): GET /metrics and nothing else, no token, bound
 * to METRICS_HOST (127.0.0.1 by default) so only the host's scraper reaches it.
 */
export async function startMetricsServer (registry: Registry, host: string, port: number): Promise<{
  port: number, close: () => Promise<void>
}> {
  const server = http.createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n')
      return
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n')
    )
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, () => resolve()) })
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
