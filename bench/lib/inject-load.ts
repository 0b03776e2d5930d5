import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'

/*
 * In-process load for the benchmarks that compare reads: a GraphQL request through app.inject, so that what
 * is measured is the service's own work, without HTTP or a load generator sharing the machine (http-load.ts
 * is the load over HTTP).
 */

export interface InjectLoadOptions {
  app: FastifyInstance
  token: string
  /** Names the request in an error. */
  target: string
  query: string
  /** The variables of each request (called once a request, so it may vary them). */
  variables: () => Record<string, unknown>
  concurrency: number
  seconds: number
}

export interface InjectLoadResult {
  /** The size of the first answer. */
  bytes: number
  /** Each request's time, ms, in the order they finished. */
  times: number[]
  /** How long the loops ran in all. */
  seconds: number
}

/**
 * The request sent once (a failure or a GraphQL error throws) and ten times more to warm up, then back to
 * back from `concurrency` loops for `seconds`.
 */
export async function injectLoad (options: InjectLoadOptions): Promise<InjectLoadResult> {
  const { app, token, target, query, variables } = options
  const send = async () => {
    const res = await app.inject({
      method: 'POST', url: '/v2/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query, variables: variables() }
    })
    if (res.statusCode !== 200 || res.body.includes('"errors"')) throw new Error(`${target}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return res.body.length
  }
  const bytes = await send()
  for (let i = 0; i < 10; i++) await send()
  const times: number[] = []
  const end = Date.now() + options.seconds * 1000
  const started = Date.now()
  await Promise.all(Array.from({ length: options.concurrency }, async () => {
    while (Date.now() < end) {
      const t0 = performance.now()
      await send()
      times.push(performance.now() - t0)
    }
  }))
  return { bytes, times, seconds: (Date.now() - started) / 1000 }
}
