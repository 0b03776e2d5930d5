import fs from 'node:fs'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import {
  context, isSpanContextValid, ROOT_CONTEXT, SpanKind, trace, type Context, type Link, type Span, type SpanStatus
} from '@opentelemetry/api'
import { NodeSDK, resources } from '@opentelemetry/sdk-node'
import type { FastifyPluginCallback } from 'fastify'
import { markFailed } from './failure.js'
import { sqlObserver } from './sql-spans.js'
import { spanContextOfTraceparent } from './trace-context.js'
import type { SpanOptions, Tracing } from './tracing.js'

/*
 * The OpenTelemetry SDK, loaded by start.ts only when tracing is on. NodeSDK reads the standard OTEL_*
 * variables itself (exporter and protocol, endpoint, headers, sampler and its argument, batch sizes,
 * resource attributes, propagators); this file adds what is the service's own: its name, version and
 * environment as defaults, the spans it makes, and what may not go into them.
 */

const SERVICE_NAME = 'order-exchange'
/** How long shutdown waits for the last spans to go out. */
const SHUTDOWN_FLUSH_MS = 5_000

const KINDS: Record<NonNullable<SpanOptions['kind']>, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER
}

/** The context a W3C traceparent (as stored with a job) names, or null when it names none. */
function contextOfTraceparent (traceparent: string): Context | null {
  const ids = spanContextOfTraceparent(traceparent)
  return ids === null ? null : trace.setSpanContext(ROOT_CONTEXT, ids)
}

/** A span's links: one per traceparent that names a span, a malformed one skipped (SpanOptions.links). */
function linksOf (traceparents: readonly string[] | undefined): Link[] | undefined {
  return traceparents?.flatMap((traceparent) => {
    const ids = spanContextOfTraceparent(traceparent)
    return ids === null ? [] : [{ context: ids }]
  })
}

function serviceVersion (): string {
  // src/tracing/ and dist/tracing/ are both two levels below the package root.
  const text = fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')
  return (JSON.parse(text) as { version: string }).version
}

/**
 * An error's message (a status description) never reaches a span of @fastify/otel: it would set the
 * database layer's "Failed query … params: …" on the request span. The status code stays.
 */
function withoutStatusMessage (span: Span): void {
  const setStatus = span.setStatus.bind(span)
  span.setStatus = (status: SpanStatus) => setStatus({ code: status.code })
}

function fastifyInstrumentation (): FastifyOtelInstrumentation {
  return new FastifyOtelInstrumentation({
    // An exception event carries the error's message and stack: see withoutStatusMessage.
    recordExceptions: false,
    // The request span and the handler's: a span per hook would multiply the spans of every request by
    // ten for little; the handler's span is what carries the request's context past the body parsing.
    instrumentHooks: false,
    // Probes every few seconds from the orchestrator, each a trace of its own, would drown the rest.
    ignorePaths: (route) => route.url.startsWith('/health/'),
    requestHook: (span, request) => {
      withoutStatusMessage(span)
      // The route, not the path, names the span (HTTP semantic conventions); the query string (a GraphQL
      // GET's variables) stays out of url.path.
      span.updateName(`${request.method} ${request.routeOptions.url ?? ''}`.trim())
      span.setAttribute('url.path', request.url.split('?')[0])
    },
    lifecycleHook: (span) => { withoutStatusMessage(span) }
  })
}

export interface SdkOptions { environment: string }

/** Starts the SDK (process-wide: one per process) and gives the service's handle on it. */
export function startSdk ({ environment }: SdkOptions): Tracing {
  const version = serviceVersion()
  const fastify = fastifyInstrumentation()
  const sdk = new NodeSDK({
    // Defaults: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the detectors, win over these.
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({
      'service.name': SERVICE_NAME,
      'service.version': version,
      'deployment.environment.name': environment,
      // The name before semantic conventions 1.27, which many backends still group by.
      'deployment.environment': environment
    })),
    instrumentations: [fastify],
    // Traces only: metrics stay on /metrics (Prometheus) and logs on stdout (pino); without these, NodeSDK
    // would also start OTLP metric and log exporters by default.
    metricReaders: [],
    logRecordProcessors: []
  })
  sdk.start()
  const tracer = trace.getTracer(SERVICE_NAME, version)

  return {
    span: (name, options, work) => {
      const parent = options.root
        ? ROOT_CONTEXT
        : (options.parent === undefined ? null : contextOfTraceparent(options.parent)) ?? context.active()
      return tracer.startActiveSpan(name, {
        kind: KINDS[options.kind ?? 'internal'],
        attributes: options.attributes,
        root: options.root,
        links: linksOf(options.links)
      }, parent, async (span) => {
        try {
          return await work(span)
        } catch (err) {
          markFailed(span, err)
          throw err
        } finally {
          span.end()
        }
      })
    },
    markFailed: (span, errorType) => { markFailed(span, { code: errorType }) },
    sqlObserver: (url) => sqlObserver(tracer, url),
    fastifyPlugin: fastify.plugin() as FastifyPluginCallback,
    logFields: () => {
      const ids = trace.getSpan(context.active())?.spanContext()
      return ids && isSpanContextValid(ids) ? { trace_id: ids.traceId, span_id: ids.spanId } : {}
    },
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        sdk.shutdown().catch(() => {}),
        new Promise<void>((resolve) => { timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS) })
      ])
      clearTimeout(timer)
    }
  }
}
