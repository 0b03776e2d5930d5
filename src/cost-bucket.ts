import type { Redis } from 'ioredis'

/*
 * The GraphQL cost budget of a credential: a bucket of points that refills at a steady rate and that each
 * query spends its cost from (Shopify's leaky-bucket model). Kept in this process, or in Redis so that
 * every API instance spends from the same bucket.
 */

export interface BucketLimits {
  /** The most points the bucket holds. */
  capacity: number
  /** Points added back per second. */
  restorePerSecond: number
}

export interface BucketTake {
  allowed: boolean
  /** Points left after this take (or before it, when refused). */
  available: number
  /** When refused: milliseconds until the bucket holds enough. */
  retryAfterMs: number
}

export interface CostBucket {
  readonly limits: BucketLimits
  take: (key: string, cost: number) => Promise<BucketTake>
  /** Gives back points a query took but did not use (never above capacity); the points available after. */
  refund: (key: string, points: number) => Promise<number>
}

function decide (limits: BucketLimits, tokens: number, cost: number): BucketTake {
  if (tokens >= cost) return { allowed: true, available: tokens - cost, retryAfterMs: 0 }
  const retryAfterMs = Math.ceil(((cost - tokens) / limits.restorePerSecond) * 1000)
  return { allowed: false, available: tokens, retryAfterMs }
}

/** One process's buckets; idle full buckets are dropped (they hold nothing a fresh one would not). */
export class MemoryCostBucket implements CostBucket {
  private readonly buckets = new Map<string, { tokens: number, at: number }>()

  constructor (readonly limits: BucketLimits, private readonly now: () => number = Date.now) {}

  async take (key: string, cost: number): Promise<BucketTake> {
    const now = this.now()
    const bucket = this.buckets.get(key) ?? { tokens: this.limits.capacity, at: now }
    const tokens = Math.min(
      this.limits.capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.limits.restorePerSecond
    )
    const result = decide(this.limits, tokens, cost)
    this.buckets.set(key, { tokens: result.allowed ? result.available : tokens, at: now })
    if (this.buckets.size > 10_000) this.prune(now)
    return result
  }

  async refund (key: string, points: number): Promise<number> {
    const now = this.now()
    const bucket = this.buckets.get(key) ?? { tokens: this.limits.capacity, at: now }
    const tokens = Math.min(
      this.limits.capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.limits.restorePerSecond + points
    )
    this.buckets.set(key, { tokens, at: now })
    return tokens
  }

  private prune (now: number): void {
    for (const [key, { tokens, at }] of this.buckets) {
      if (tokens + ((now - at) / 1000) * this.limits.restorePerSecond >= this.limits.capacity) this.buckets.delete(key)
    }
  }
}

/**
 * Refill and take in one atomic step on the Redis server, with the server's clock (instances may
 * disagree on the time; Redis does not). The key expires once the bucket would be full again.
 */
const REFILL = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local points = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(stored[1]) or capacity
local at = tonumber(stored[2]) or now
tokens = math.min(capacity, tokens + (now - at) / 1000 * rate)
`
const STORE = `
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
`
/** Take `points` if the bucket holds them. */
const TAKE = `${REFILL}
local allowed = 0
if tokens >= points then
  tokens = tokens - points
  allowed = 1
end
${STORE}
return { allowed, tostring(tokens) }
`
/** Give `points` back, at most up to capacity. */
const REFUND = `${REFILL}
tokens = math.min(capacity, tokens + points)
${STORE}
return tostring(tokens)
`

export class RedisCostBucket implements CostBucket {
  constructor (readonly limits: BucketLimits, private readonly redis: Redis, private readonly prefix: string) {}

  async take (key: string, cost: number): Promise<BucketTake> {
    const [allowed, tokens] = await this.redis.eval(
      TAKE, 1, this.prefix + key, this.limits.capacity, this.limits.restorePerSecond, cost
    ) as [number, string]
    const available = Number(tokens)
    if (allowed === 1) return { allowed: true, available, retryAfterMs: 0 }
    return decide(this.limits, available, cost)
  }

  async refund (key: string, points: number): Promise<number> {
    const tokens = await this.redis.eval(
      REFUND, 1, this.prefix + key, this.limits.capacity, this.limits.restorePerSecond, points
    ) as string
    return Number(tokens)
  }
}
