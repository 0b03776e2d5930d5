import Fastify from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Registry } from 'prom-client'
import type { Config } from '../../src/config.js'
import { createMetrics } from '../../src/metrics.js'
import metricsPlugin from '../../src/plugins/metrics.js'
import { code, page, table } from './markdown.js'

/*
 * docs/operate/metrics.md from the metrics as registered: the registry every process makes
 * (createMetrics, src/metrics.ts) and the gauges the API's metrics plugin adds to it (src/plugins/metrics.ts),
 * read back from prom-client after registering them for real, so a metric added anywhere on that path shows.
 * The plugin is given a database that is never called: its gauges read only when scraped.
 */

export const METRICS_PAGE = 'docs/operate/metrics.md'

export interface MetricEntry {
  name: string
  type: string
  labels: readonly string[]
  help: string
  /** Where it is registered: every process's registry (createMetrics), or the API's metrics plugin. */
  registeredIn: 'src/metrics.ts' | 'src/plugins/metrics.ts'
}

interface Registered { name: string, type: string, help: string, labelNames?: readonly string[] }

function entries (registry: Registry): Registered[] {
  return registry.getMetricsAsArray() as unknown as Registered[]
}

/** The metrics of a process (createMetrics) and of an API (plus its metrics plugin), default metrics aside. */
export async function registeredMetrics (): Promise<{ metrics: MetricEntry[], defaultPrefix: string }> {
  const processMetrics = createMetrics()
  const everyProcess = new Set(entries(processMetrics.registry).map((m) => m.name))

  const api = createMetrics()
  const app = Fastify({ logger: false })
  try {
    await app.register(fp(async (instance) => {
      instance.decorate('config', {} as Config)
      instance.decorate('database', {} as never)
    }, { name: 'database' }))
    await app.register(metricsPlugin, { metrics: api })
    await app.ready()
  } finally {
    await app.close()
  }

  // prom-client's process and runtime metrics differ by platform and Node version: named once, by prefix.
  const bare = new Registry()
  collectDefaultMetrics({ register: bare })
  const defaults = entries(bare).map((m) => m.name)
  let defaultPrefix = ''
  const isDefault = (name: string): boolean => defaults.some((d) => {
    if (!name.endsWith(d)) return false
    defaultPrefix = name.slice(0, name.length - d.length)
    return true
  })
  const metrics = entries(api.registry)
    .filter((m) => !isDefault(m.name))
    .map((m): MetricEntry => ({
      name: m.name,
      type: m.type,
      labels: m.labelNames ?? [],
      help: m.help,
      registeredIn: everyProcess.has(m.name) ? 'src/metrics.ts' : 'src/plugins/metrics.ts'
    }))
    .sort((a, b) => a.name.localeCompare(b.name))
  return { metrics, defaultPrefix }
}

export function metricsPage (metrics: readonly MetricEntry[], defaultPrefix: string): string {
  const rows = metrics.map((m) => [
    code(m.name), m.type, m.labels.length === 0 ? '—' : m.labels.map(code).join(', '), m.help, code(m.registeredIn)
  ])
  return page(['the registrations in `src/metrics.ts` and `src/plugins/metrics.ts`'], [
    '# Metrics reference',
    'Every metric the service registers, with the help text `/metrics` serves, which names the labels\' values. How ' +
      'to scrape them and what is worth an alert: [observability](observability.md#metrics). Every process ' +
      'registers those of `src/metrics.ts`; the API adds the gauges of `src/plugins/metrics.ts`, read from the ' +
      'database at each scrape, so a worker run alone (`order-exchange worker`) serves only the first.',
    table(['Metric', 'Type', 'Labels', 'Help', 'Registered in'], rows),
    `Besides these, prom-client's process and runtime metrics, named with the same prefix: ${code(`${defaultPrefix}process_*`)}, ` +
      `${code(`${defaultPrefix}nodejs_*`)}.`
  ])
}
