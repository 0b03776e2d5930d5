import rateLimit from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import { RequestError } from '../errors.js'
import { MemoryCostBucket, RedisCostBucket, type CostBucket } from '../cost-bucket.js'

/*
 * Rate limits per credential (@fastify/rate-limit): each REST route counts requests per minute under its
 * own budget (its `config.rateLimit`), keyed by the credential the auth hook found; GraphQL spends query
 * cost from `app.costBucket` (graphql/cost-limit.ts). With Redis, every instance counts together; when
 * Redis cannot be reached, requests are let through (a limiter is not worth an outage) and that is logged.
 * A refusal is 429 with Retry-After and RateLimit-* headers, in the endpoint's own envelope.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The GraphQL cost budgets, or null when rate limiting is off. */
    costBucket: CostBucket | null
  }
}

export interface RateLimitOptions {
  /** Shared counters for every instance; absent: this process counts alone. */
  redis?: Redis
  /** Told of each refusal (metrics). */
  onRefused?: (route: string) => void
}

export default fp(async function rateLimitPlugin (app, options: RateLimitOptions) {
  const config = app.config
  app.decorate('costBucket', null)
  if (!config.RATE_LIMIT_ENABLED) return
  const limits = { capacity: config.GRAPHQL_COST_BUCKET, restorePerSecond: config.GRAPHQL_COST_RESTORE_PER_SECOND }
  const prefix = config.REDIS_KEY_PREFIX
  app.costBucket = options.redis ? new RedisCostBucket(limits, options.redis, `${prefix}cost:`) : new MemoryCostBucket(limits)
  await app.register(rateLimit, {
    global: false,
    // After authentication (onRequest), so the budget is the credential's, whatever address it calls from.
    hook: 'preHandler',
    ...(options.redis ? { redis: options.redis, nameSpace: `${prefix}rl:` } : {}),
    skipOnError: true,
    enableDraftSpec: true,
    keyGenerator: (request) => {
      const caller = request.caller ?? request.platformCaller
      return caller ? `credential:${caller.credentialId}` : `ip:${request.ip}`
    },
    onExceeded: (request) => options.onRefused?.(request.routeOptions.url ?? request.url),
    errorResponseBuilder: (_request, context) =>
      new RequestError.RateLimited(`at most ${context.max} requests a minute per credential on this endpoint; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`)
  })
}, { name: 'rate-limit', dependencies: ['database', 'auth'] })
