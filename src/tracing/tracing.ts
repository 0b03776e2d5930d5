import type { Attributes, Span } from '@opentelemetry/api'
import type { FastifyPluginCallback } from 'fastify'
import type { QueryObserver } from '../db/driver-internals.js'

/*
 * What the service asks of OpenTelemetry, as one handle that server.ts and the worker command start
 * (start.ts) and pass down. Types only: with tracing off nothing of the SDK is loaded and none of the
 * code below runs, because every traced place holds an optional `Tracing` and skips when it has none.
 */

export type { Span }

export interface SpanOptions {
  kind?: 'internal' | 'server' | 'client' | 'producer' | 'consumer'
  attributes?: Attributes
  /**
   * A W3C traceparent to start under (a job's enqueuing request) instead of the active span; a missing
   * or malformed one starts under the active span.
   */
  parent?: string
  /** Start a trace of its own even when a span is active. */
  root?: boolean
  /**
   * W3C traceparents of spans this one follows from without being their child (a webhook delivery and
   * the request that recorded its event, hours apart perhaps); a malformed one is skipped.
   */
  links?: readonly string[]
}

export interface Tracing {
  /**
   * Runs `work` in a new span (active while it runs) and ends it when `work` settles. A throw marks the
   * span failed with the error's code or class as `error.type`, never its message: error messages of the
   * database layer carry parameter values (logger.ts), and the log line with the same trace_id has the
   * scrubbed message.
   */
  span: <T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>) => Promise<T>
  /** Marks a span failed that ends without a throw (an attempt that got an error answer), with `error.type`. */
  markFailed: (span: Span, errorType: string) => void
  /** Spans of the statements a postgres.js client sends (db/driver-internals.ts observeQueries). */
  sqlObserver: (url: string) => QueryObserver
  /** @fastify/otel: the request span and the handler's span; registered first by app.ts. */
  fastifyPlugin: FastifyPluginCallback
  /** The active span's ids for a log line (pino mixin); empty outside any span. */
  logFields: () => { trace_id?: string, span_id?: string }
  /** Exports what is still buffered; bounded, so a collector that does not answer does not hold the exit. */
  shutdown: () => Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    /** For spans of a route's own (the GraphQL operation); null with tracing off (app.ts decorates). */
    tracing: Tracing | null
  }
}
