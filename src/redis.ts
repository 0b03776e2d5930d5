import { Redis } from 'ioredis'
import type { Logger } from 'pino'

/*
 * The Redis connection the rate limits share between instances (REDIS_URL). Commands fail at once while
 * it is away (no offline queue, one attempt): the limiters then let requests through and say so in the
 * log, and the client reconnects on its own.
 */
export function openRedis (url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000, lazyConnect: false
  })
  let down = false
  redis.on('error', (err) => {
    if (!down) logger.warn({ err: err.message }, 'redis unavailable: rate limits are not enforced until it is back')
    down = true
  })
  redis.on('ready', () => {
    if (down) logger.info('redis back: rate limits enforced again')
    down = false
  })
  return redis
}
