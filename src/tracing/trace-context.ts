import { context, isSpanContextValid, trace, TraceFlags, type SpanContext } from '@opentelemetry/api'

/*
 * The one place that reads the active trace without a Tracing handle, and the one place the W3C
 * traceparent format is written and read. A job is enqueued, and an event recorded, deep inside a
 * service's transaction, and what it should point back to is whatever span is active there (the
 * request's, or the job's that enqueued it). Only @opentelemetry/api, which without the SDK started
 * answers with no span: with tracing off this costs a lookup per enqueue or event write and stores nothing.
 */

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

function traceparentOf (ids: SpanContext): string {
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 0xff).toString(16).padStart(2, '0')}`
}

/** The active span as a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or undefined when there is none. */
export function activeTraceparent (): string | undefined {
  const ids = trace.getSpan(context.active())?.spanContext()
  if (!ids || !isSpanContextValid(ids)) return undefined
  return traceparentOf(ids)
}

/**
 * The active span's traceparent only when it is sampled (exported), else null. For a link rather than a
 * parent: a link to a span that was never exported points at nothing, so an unsampled request stores
 * nothing (a job stores its unsampled parent all the same, to carry the sampling decision on).
 */
export function sampledTraceparent (): string | null {
  const ids = trace.getSpan(context.active())?.spanContext()
  if (!ids || !isSpanContextValid(ids) || (ids.traceFlags & TraceFlags.SAMPLED) === 0) return null
  return traceparentOf(ids)
}

/** The span a W3C traceparent (as stored with a job or an event) names, as a remote one; null when it names none. */
export function spanContextOfTraceparent (traceparent: string): SpanContext | null {
  const match = TRACEPARENT.exec(traceparent)
  if (!match) return null
  const ids = {
    traceId: match[1], spanId: match[2], traceFlags: Number.parseInt(match[3], 16) & TraceFlags.SAMPLED, isRemote: true
  }
  return isSpanContextValid(ids) ? ids : null
}
