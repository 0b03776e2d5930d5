import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

/** Headers that carry secrets: never logged. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]'
]

export function loggerOptions (config: Pick<Config, 'LOG_LEVEL'>): FastifyServerOptions['logger'] {
  return { level: config.LOG_LEVEL, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }
}
