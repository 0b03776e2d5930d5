import underPressure from '@fastify/under-pressure'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { RequestError } from '../errors.js'
import { EventLoopDelay } from './event-loop-delay.js'

/*
 * Load shedding (@fastify/under-pressure): when the event loop lags past SHED_EVENT_LOOP_DELAY_MS or the
 * heap passes SHED_HEAP_USED_BYTES, requests are answered 503 OVERLOADED with Retry-After in their
 * endpoint's shape at once, rather than queueing until the process falls over. Liveness and metrics are
 * still answered (the process is alive, and an operator wants to see why it sheds); readiness answers 503
 * `overloaded` itself, so a load balancer sends traffic elsewhere meanwhile. The heap is under-pressure's to
 * watch; the event loop's delay is ours (event-loop-delay.ts), so that only a measured delay past the bound
 * sheds, never a sample that saw nothing.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether requests are being shed now (heap or event loop past its bound): readiness answers 503. */
    shedding: () => boolean
    /** The event loop's last measured delay, in milliseconds. */
    eventLoopDelay: EventLoopDelay
  }
}

const SAMPLE_MS = 100

/** Paths answered under pressure too. */
const ALWAYS = new Set(['/health/live', '/health/ready', '/metrics'])

export default fp(async function loadSheddingPlugin (app, options: { onShed?: (reason: string) => void }) {
  const config = app.config
  const shed = async (request: FastifyRequest, reply: FastifyReply, type: string): Promise<void> => {
    if (ALWAYS.has(request.url.split('?')[0]!)) return
    options.onShed?.(type)
    reply.header('retry-after', '5')
    throw new RequestError.Overloaded()
  }
  await app.register(underPressure, {
    maxEventLoopDelay: 0, // off: measured below instead
    maxHeapUsedBytes: config.SHED_HEAP_USED_BYTES,
    sampleInterval: SAMPLE_MS,
    exposeStatusRoute: false,
    // Async: its rejection reaches the root error handler (next(err)), which renders the endpoint's 503.
    pressureHandler: shed
  })
  const loop = new EventLoopDelay(SAMPLE_MS)
  loop.start()
  app.addHook('onClose', async () => loop.stop())
  const bound = config.SHED_EVENT_LOOP_DELAY_MS
  const loopBehind = (): boolean => bound > 0 && loop.delayMs > bound
  app.decorate('eventLoopDelay', loop)
  app.decorate('shedding', () => app.isUnderPressure() || loopBehind())
  app.addHook('onRequest', async (request, reply) => {
    if (loopBehind()) await shed(request, reply, 'eventLoopDelay')
  })
}, { name: 'load-shedding' })
