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

/*
 * Free text from elsewhere (a library's log message, an error's message, a receiver's or provider's answer)
 * is scrubbed on its way into a line, whoever logs it: graphile-worker writes "Failed query: … params: …"
 * into its own messages, and an HTTP error may quote the URL it was sent to, token and all. What goes:
 * - a statement's parameters (`params: …` up to the stack, or to the end);
 * - our secrets (`oxs_…`), Standard Webhooks secrets (`whsec_…`), bearer tokens;
 * - a URL's userinfo and query (`https://user:pass@host/path?token=…` shows as `https://host/path`);
 * - phone numbers: runs of 10 to 15 digits, with an optional + and single spaces or dashes between.
 * Structured fields that we write ourselves (ids, counts) are not touched: only strings at the top of a line.
 */
const SCRUBS: Array<[RegExp, string]> = [
  [/\bparams: [\s\S]*?(?=\n\s+at |$)/g, 'params: [not logged]'],
  [/\boxs_(?:test|live)_[A-Za-z0-9_-]+/g, 'oxs_[secret]'],
  [/\bwhsec_[A-Za-z0-9+/=]+/g, 'whsec_[secret]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [secret]'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@]*@)?([^\s/?#]+)([^\s?#'"]*)[?#][^\s'"]*/gi, '$1$2$3'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, '$1'],
  [/(?<![\w.])\+?\d(?:[ -]?\d){9,14}(?![\w.])/g, '[phone]']
]

/** `text` with parameters, secrets, URL queries and phone numbers taken out (see SCRUBS). */
export function scrubbedText (text: string): string {
  let out = text
  for (const [pattern, replacement] of SCRUBS) out = out.replace(pattern, replacement)
  return out
}

/** An error's message with nothing of the statement's parameters in it. */
export function scrubbedMessage (err: unknown): string {
  if (!(err instanceof Error)) return cut(scrubbedText(String(err)))
  // Drizzle's DrizzleQueryError: "Failed query: <sql>\nparams: <values>"; the driver's error is its cause.
  if ('params' in err || /^Failed query: /.test(err.message)) {
    const cause = (err as { cause?: unknown }).cause
    return cut(`Failed query${cause === undefined ? '' : `: ${scrubbedMessage(cause)}`}`)
  }
  return cut(scrubbedText(err.message))
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
    hooks: { logMethod: scrubbedLogMethod },
    formatters: { log: scrubbedFields },
    ...(tracing ? { mixin: () => tracing.logFields() } : {})
  }
}

/** Every string argument of a log call (the message, printf arguments) scrubbed (see SCRUBS). */
function scrubbedLogMethod (this: unknown, args: unknown[], method: (...args: unknown[]) => void): void {
  method.apply(this, args.map((arg) => typeof arg === 'string' ? scrubbedText(arg) : arg))
}

/** A line's top-level string fields scrubbed: an `err: e.message` or `reason: …` a caller passed as text. */
function scrubbedFields (fields: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== 'string') continue
    const clean = scrubbedText(value)
    if (clean !== value) (out ??= { ...fields })[key] = clean
  }
  return out ?? fields
}
