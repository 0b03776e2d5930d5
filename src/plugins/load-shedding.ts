import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import { RequestError } from '../errors.js'

/*
 * Load shedding (@fastify/under-pressure): when the event loop lags past SHED_EVENT_LOOP_DELAY_MS or the
 * heap passes SHED_HEAP_USED_BYTES, requests are answered 503 OVERLOADED with Retry-After in their
 * endpoint's shape at once, rather than queueing until the process falls over. Liveness and metrics are
 * still answered (the process is alive, and an operator wants to see why it sheds); readiness answers 503
 * `overloaded` itself, so a load balancer sends traffic elsewhere meanwhile.
 */

/** Paths answered under pressure too. */
const ALWAYS = new Set(['/health/live', '/health/ready', '/metrics'])

export default fp(async function loadSheddingPlugin (app, options: { onShed?: (reason: string) => void }) {
  const config = app.config
  await app.register(underPressure, {
    maxEventLoopDelay: config.SHED_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.SHED_HEAP_USED_BYTES,
    sampleInterval: 100,
    exposeStatusRoute: false,
    // Async: its rejection reaches the root error handler (next(err)), which renders the endpoint's 503.
    pressureHandler: async (request, reply, type) => {
      if (ALWAYS.has(request.url.split('?')[0]!)) return
      options.onShed?.(type)
      reply.header('retry-after', '5')
      throw new RequestError.Overloaded()
    }
  })
}, { name: 'load-shedding' })
