import { context, isSpanContextValid, trace } from '@opentelemetry/api'

/*
 * The one place that reads the active trace without a Tracing handle: a job is enqueued deep inside a
 * service's transaction, and what it should link back to is whatever span is active there (the request's,
 * or the job's that enqueued it). Only @opentelemetry/api, which without the SDK started answers with no
 * span: with tracing off this costs a lookup per enqueue and adds nothing to the job.
 */

/** The active span as a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or undefined when there is none. */
export function activeTraceparent (): string | undefined {
  const ids = trace.getSpan(context.active())?.spanContext()
  if (!ids || !isSpanContextValid(ids)) return undefined
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 0xff).toString(16).padStart(2, '0')}`
}
