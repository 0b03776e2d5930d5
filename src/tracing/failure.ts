import { SpanStatusCode, type Span } from '@opentelemetry/api'

/**
 * Marks a span failed, with the error's code (an SQLSTATE, a Fastify or service error code) or else its
 * class as `error.type`, and no message: messages of the database layer carry parameter values (the
 * scrubbed message is in the log line, which carries the same trace_id).
 */
export function markFailed (span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | null)?.code
  const type = typeof code === 'string' || typeof code === 'number'
    ? String(code)
    : err instanceof Error ? err.constructor.name : typeof err
  span.setAttribute('error.type', type)
  span.setStatus({ code: SpanStatusCode.ERROR })
}
