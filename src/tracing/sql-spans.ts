import { context, SpanKind, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import type { QueryObserver } from '../db/driver-internals.js'
import { markFailed } from './failure.js'

/*
 * A span per SQL statement sent through postgres.js, and one per transaction and savepoint around the
 * statements sent inside it (COMMIT, ROLLBACK and SAVEPOINT themselves are in the scope's span, not
 * spans of their own). The statement text is what the service wrote, with $n placeholders: parameter
 * values are never read. Only inside a sampled trace (a request, a job): the deliverer's polls and the
 * replica-lag probe would otherwise each start a trace of one statement, and a span under a trace that
 * is not sampled would be dropped anyway, so statements there cost one look at the active span.
 */

const SYSTEM = { 'db.system.name': 'postgresql' } as const

/** Where the statements go, from the pool's URL: the database, host and port, never the user or password. */
export function connectionAttributes (url: string): Attributes {
  try {
    const u = new URL(url)
    return {
      ...SYSTEM,
      'db.namespace': decodeURIComponent(u.pathname.replace(/^\//, '')),
      'server.address': u.hostname,
      'server.port': Number(u.port || 5432)
    }
  } catch {
    return { ...SYSTEM }
  }
}

/** The statement's first keyword, the span's name until the command tag of its answer replaces it. */
function firstKeyword (text: string): string {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL'
}

function sampledParent (): boolean {
  return trace.getSpan(context.active())?.isRecording() === true
}

export function sqlObserver (tracer: Tracer, url: string): QueryObserver {
  const target = connectionAttributes(url)
  return {
    statement (text) {
      if (!sampledParent()) return undefined
      const span = tracer.startSpan(firstKeyword(text), {
        kind: SpanKind.CLIENT, attributes: { ...target, 'db.query.text': text }
      })
      return (outcome) => {
        if ('error' in outcome) {
          const code = (outcome.error as { code?: unknown } | null)?.code
          if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) span.setAttribute('db.response.status_code', code)
          markFailed(span, outcome.error)
        } else {
          if (outcome.command) {
            span.updateName(outcome.command)
            span.setAttribute('db.operation.name', outcome.command)
          }
          if (outcome.rows !== null) span.setAttribute('db.response.returned_rows', outcome.rows)
        }
        span.end()
      }
    },
    transaction (kind, run) {
      if (!sampledParent()) return run()
      return tracer.startActiveSpan(kind, { kind: SpanKind.CLIENT, attributes: target }, async (span: Span) => {
        try {
          return await run()
        } catch (err) {
          markFailed(span, err)
          throw err
        } finally {
          span.end()
        }
      })
    }
  }
}
