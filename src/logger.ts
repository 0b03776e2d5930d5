import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'
import type { Tracing } from './tracing/tracing.js'

/** Headers that carry secrets: never logged. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]'
]

/*
 * What of an error may reach a log line. Errors of the database layer carry the statement's parameters
 * (Drizzle puts them in its message, postgres.js in `parameters`, PostgreSQL in `detail` and `where`),
 * and parameters are request data: rejection reasons, phone numbers, whole JSON batches. So an error is
 * logged from a list of fields known to be safe, its message without parameters and cut to a length,
 * its stack rebuilt from that message and the frames.
 */

const MESSAGE_MAX = 300
const SAFE_FIELDS = ['code', 'errno', 'syscall', 'severity', 'routine', 'schema_name', 'table_name', 'column_name', 'constraint_name', 'statusCode'] as const

function cut (text: string, max = MESSAGE_MAX): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** An error's message with nothing of the statement's parameters in it. */
export function scrubbedMessage (err: unknown): string {
  if (!(err instanceof Error)) return cut(String(err))
  // Drizzle's DrizzleQueryError: "Failed query: <sql>\nparams: <values>"; the driver's error is its cause.
  if ('params' in err || /^Failed query: /.test(err.message)) {
    const cause = (err as { cause?: unknown }).cause
    return cut(`Failed query${cause === undefined ? '' : `: ${scrubbedMessage(cause)}`}`)
  }
  return cut(err.message)
}

interface SerializedError { [key: string]: unknown, type: string, message: string, stack: string }

/** A log-safe copy of an error (pino's `err` serializer). */
export function serializeError (err: unknown, depth = 0): SerializedError {
  if (!(err instanceof Error)) return { type: typeof err, message: scrubbedMessage(err), stack: '' }
  const type = err.constructor?.name && err.constructor.name !== 'Error' ? err.constructor.name : err.name
  const message = scrubbedMessage(err)
  const out: SerializedError = { type, message, stack: '' }
  for (const field of SAFE_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[field]
    if (typeof value === 'string' || typeof value === 'number') out[field] = typeof value === 'string' ? cut(value, 100) : value
  }
  const frames = (err.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).slice(0, 20)
  out.stack = [`${type}: ${message}`, ...frames].join('\n')
  const cause = (err as { cause?: unknown }).cause
  if (cause !== undefined && depth < 3) out.cause = serializeError(cause, depth + 1)
  const errors = (err as { errors?: unknown }).errors
  if (Array.isArray(errors) && depth < 3) out.errors = errors.slice(0, 5).map((e) => serializeError(e, depth + 1))
  return out
}

/**
 * pino's options. With tracing on, each line written inside a span carries its `trace_id` and `span_id`,
 * which find the line from a trace and the trace from the line; off, lines are what they always were.
 */
export function loggerOptions (config: Pick<Config, 'LOG_LEVEL'>, tracing?: Tracing | null): FastifyServerOptions['logger'] {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: (err: unknown) => serializeError(err), error: (err: unknown) => serializeError(err) },
    ...(tracing ? { mixin: () => tracing.logFields() } : {})
  }
}
